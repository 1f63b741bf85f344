"""The package's broker chooser runs what the wheel can run, and refuses the checkout-only
``kafka`` mode (Apache Kafka from the jars ``make kafka-broker`` resolves) in one line; the
repository's lab adds that mode. Nothing here starts a broker."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_sticky_plugin.brokers import choose
from kafka_sticky_plugin.demo import cli
from kafka_sticky_plugin.errors import ConfigurationError
from testlab import brokers as lab_brokers


@pytest.mark.parametrize("mode", ["kafka", "apache-kafka"])
def test_the_package_refuses_the_checkout_only_mode_in_one_line(mode: str) -> None:
    with pytest.raises(ConfigurationError) as refused, choose.open_broker(mode):
        pytest.fail("a broker was started")
    message = str(refused.value)
    assert "checkout" in message and "\n" not in message
    assert "make demo BROKER=kafka" in message


def test_an_unknown_mode_names_the_modes() -> None:
    with pytest.raises(ConfigurationError, match="embedded"), choose.open_broker("zookeeper"):
        pytest.fail("a broker was started")


def test_the_lab_adds_the_kafka_mode_to_the_package_modes() -> None:
    assert "kafka" not in choose.MODES
    assert set(lab_brokers.MODES) == {*choose.MODES, "kafka"}


def test_the_installed_demo_says_where_kafka_mode_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``python -m kafka_sticky_plugin demo --broker kafka`` from the wheel: exit 2, one line."""
    assert cli.main(["--broker", "kafka", "--out", str(tmp_path)]) == 2
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1 and out[0].startswith("error: ") and "checkout" in out[0], out
