"""Conformance of the session's broker to its profile: one test per known deviation.

Each test *measures* one behaviour on the running broker (the measurement itself lives in
:mod:`kafka_sticky_plugin.brokers.conformance`, shared with the ``conformance`` command a user
runs against their own cluster) and asserts that it matches the flag in
:attr:`RunningBroker.profile` (:mod:`kafka_sticky_plugin.brokers.profile`). On the embedded
Tansu broker these pass because Tansu deviates exactly as written down; when a newer Tansu
build fixes a deviation, the matching test fails and says which flag to flip, so tests gated on
that capability start running. On Apache Kafka the same tests check the Kafka behaviour.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kafka_sticky_plugin.brokers import conformance
from kafka_sticky_plugin.brokers.embedded import RunningBroker, embedded_broker
from kafka_sticky_plugin.brokers.profile import APACHE_KAFKA_PROFILE, TANSU_PROFILE
from kafka_sticky_plugin.groups.admin import create_topic, partition_count

# (capability, timeout in seconds) for every measurement a running broker allows.
_MEASURED = [
    ("generations_start_at", 90),
    ("protocol_vote", 120),
    ("partition_growth", 60),
    ("leader_rejoin_rebalances", 120),
    ("static_member_expiry", 260),
    ("per_member_session_timeout", 180),
    ("topic_deletion_safe_for_librdkafka", 120),
    ("prompt_join_response", 90),
]


# Capabilities whose False flag means "not reliable": the measurement may see either outcome.
_NOT_RELIABLE = {"static_member_expiry"}


def _mismatch(flag: str, observed: object, profile_value: object, what: str) -> str:
    return (
        f"{what}: observed {flag}={observed!r} but the profile says {profile_value!r};"
        " update kafka_sticky_plugin/brokers/profile.py (the broker changed)"
    )


@pytest.mark.parametrize(
    "capability",
    [pytest.param(name, marks=pytest.mark.timeout(limit), id=name) for name, limit in _MEASURED],
)
def test_profile_flag_matches_the_broker(broker: RunningBroker, capability: str) -> None:
    """The measured behaviour equals the session broker's profile flag, and no guarantee the
    plugin relies on broke while measuring (for example: a static member's survivor keeps
    every partition it had, whether or not the broker removes the crashed member)."""
    observation = conformance.MEASUREMENTS[capability](broker.bootstrap)
    if observation.skipped is not None:
        pytest.skip(f"{capability}: {observation.skipped}")
    print(f"{capability}: observed {observation.observed!r} ({observation.detail})")
    expected = getattr(broker.profile, capability)
    assert not observation.violations, observation.violations
    if capability == "leader_rejoin_rebalances":  # a whole sentence with what it saw
        assert re.fullmatch(
            r"one of two subscribed topics deleted at generation -?\d+:"
            r" (generation -?\d+|no stable group within 25 s)",
            observation.detail,
        ), observation.detail
    if capability in _NOT_RELIABLE and not expected:
        # False here means "not reliably": both outcomes are seen on this broker (Tansu
        # removes a crashed static member in most runs, never in about one in four).
        return
    assert observation.observed == expected, _mismatch(
        capability, observation.observed, expected, observation.detail
    )


@pytest.mark.timeout(60)
def test_embedded_broker_is_memory_only(tmp_path_factory: pytest.TempPathFactory) -> None:
    """A topic created on the embedded broker is gone after a restart on the same port."""
    log_dir = tmp_path_factory.mktemp("restart")
    with embedded_broker(log_dir=log_dir) as first:
        create_topic(first.bootstrap, "survivor", 1)
        port = int(first.bootstrap.rsplit(":", 1)[1])
    with embedded_broker(log_dir=log_dir, port=port) as second:
        survived = partition_count(second.bootstrap, "survivor") == 1
    assert survived == TANSU_PROFILE.durable, _mismatch(
        "durable", survived, TANSU_PROFILE.durable, "restart"
    )


def _conformance(
    *args: str, timeout_s: float, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m kafka_sticky_plugin conformance ARGS`` as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "kafka_sticky_plugin", "conformance", *args],
        capture_output=True,
        text=True,
        timeout=timeout_s,
        env=env,
    )


@pytest.mark.timeout(120)
def test_conformance_command_reports_the_session_broker(broker: RunningBroker) -> None:
    """``python -m kafka_sticky_plugin conformance`` measures a running cluster: exit 0 when
    it behaves as Apache Kafka on what was measured, 1 when it differs (Tansu)."""
    done = _conformance(
        *("--bootstrap", broker.bootstrap.split(",")[0]),
        *("--only", "generations_start_at,partition_growth"),
        timeout_s=110,
    )
    print(done.stdout)
    kafka_like = broker.profile == APACHE_KAFKA_PROFILE
    assert done.returncode == (0 if kafka_like else 1), done.stdout + done.stderr
    assert "partition_growth" in done.stdout and "generations_start_at" in done.stdout
    assert f"{broker.profile.partition_growth}" in done.stdout


def test_conformance_command_refuses_bad_arguments() -> None:
    """A malformed address and an unknown capability are refused with exit status 2 (any
    well-formed address is taken: see tests/test_conformance_cli.py)."""
    for extra in (["--bootstrap", "127.0.0.1"], ["--bootstrap", "127.0.0.1:9", "--only", "x"]):
        done = _conformance(*extra, timeout_s=30)
        assert done.returncode == 2, done.stdout + done.stderr
        assert "error:" in done.stdout


@pytest.mark.timeout(60)
def test_the_librdkafka_probe_is_skipped_without_confluent_kafka(
    broker: RunningBroker, tmp_path: Path
) -> None:
    """In an install without confluent-kafka (here: a module of that name that cannot be
    imported, first on the path), the probe says it was skipped and nothing counts as broken."""
    shadow = tmp_path / "confluent_kafka"
    shadow.mkdir()
    (shadow / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'confluent_kafka'\", name='confluent_kafka')\n"
    )
    path = os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])
    done = _conformance(
        *("--bootstrap", broker.bootstrap.split(",")[0]),
        *("--only", "topic_deletion_safe_for_librdkafka"),
        timeout_s=50,
        env=dict(os.environ, PYTHONPATH=path),
    )
    print(done.stdout)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "topic_deletion_safe_for_librdkafka" in done.stdout
    assert "skipped: confluent-kafka not installed" in done.stdout
    assert "0 broke a guarantee" in done.stdout
