"""Client detection: every supported row maps to its hook family; anything else fails fast."""

from __future__ import annotations

import pytest
from hooks_support import CLIENT, kafka_version

from kafka_sticky_plugin.adapters.kafka_python.hooks.versions import (
    SUPPORTED_CLIENTS,
    classify,
    supported_clients_text,
)
from kafka_sticky_plugin.errors import ConfigurationError, UnsupportedClientError


@pytest.mark.parametrize(
    ("distribution", "version", "family"),
    [
        ("kafka-python", "2.0.2", "v2"),
        ("kafka-python", "2.2.21", "v2"),
        ("kafka-python", "2.2.0", "v2"),
        ("kafka-python", "2.3.3", "v2"),
        ("kafka-python", "3.0.12", "v3"),
        ("kafka-python", "3.0.9", "v3"),
        ("kafka-python-ng", "2.2.3", "v2"),
    ],
)
def test_supported_versions_map_to_their_family(
    distribution: str, version: str, family: str
) -> None:
    """Each supported distribution/version is classified into the family that drives it."""
    client = classify(distribution, version)
    assert (client.distribution, client.version, client.family) == (distribution, version, family)


@pytest.mark.parametrize(
    ("distribution", "version"),
    [
        ("kafka-python", "2.0.3"),
        ("kafka-python", "2.1.6"),
        ("kafka-python", "1.4.7"),
        ("kafka-python", "3.1.0"),
        ("kafka-python-ng", "2.0.3"),
        ("kafka-python-ng", "2.3.0"),
        ("aiokafka", "0.12.0"),
    ],
)
def test_unsupported_versions_fail_naming_the_supported_ones(
    distribution: str, version: str
) -> None:
    """An unsupported client raises UnsupportedClientError that lists every supported row."""
    with pytest.raises(UnsupportedClientError) as caught:
        classify(distribution, version)
    message = str(caught.value)
    assert f"{distribution} {version}" in message
    for row in SUPPORTED_CLIENTS:
        assert f"{row.distribution} {row.label}" in message
    assert isinstance(caught.value, ConfigurationError)


@pytest.mark.parametrize("version", ["3.0.0", "3.0.1", "3.0.8"])
def test_kafka_python_3_0_before_3_0_9_is_refused_with_one_line(version: str) -> None:
    """dpkp/kafka-python#3131 (a retained partition never fetched again after an eager
    rebalance with a listener): refused, saying to upgrade."""
    with pytest.raises(UnsupportedClientError) as caught:
        classify("kafka-python", version)
    message = str(caught.value)
    assert "\n" not in message
    assert f"kafka-python {version}" in message
    assert "dpkp/kafka-python#3131" in message
    assert 'pip install "kafka-python>=3.0.9,<3.1"' in message


def test_supported_text_lists_five_rows() -> None:
    """The supported-clients line names the five rows of the README table, in order."""
    assert supported_clients_text() == (
        "kafka-python 2.0.2, kafka-python 2.2.x, kafka-python 2.3.x, kafka-python 3.0.x (3.0.9+), "
        "kafka-python-ng 2.2.x"
    )


def test_installed_client_is_detected() -> None:
    """detect_client reports the version of the importable kafka package."""
    assert CLIENT.version == kafka_version()
    expected_family = "v3" if kafka_version().startswith("3.") else "v2"
    assert CLIENT.family == expected_family
