"""The Apache Kafka launcher fails clearly: what is missing, a port taken, a deadline missed.

Each test starts (or fails to start) its own JVM, so they run in the Apache Kafka tier only
(``KAFKA_STICKY_BROKER=kafka``), where the jars are known to be there.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

import pytest

from kafka_sticky_plugin.brokers.embedded import LOOPBACK, BrokerStartError
from kafka_sticky_plugin.brokers.wire_probe import metadata_brokers
from testlab.brokers import open_broker
from testlab.kafka_broker import find_kafka_runtime, kafka_broker

pytestmark = pytest.mark.skipif(
    os.environ.get("KAFKA_STICKY_BROKER") not in ("kafka", "apache-kafka"),
    reason="launcher tests start their own JVMs: they run in the Apache Kafka tier",
)


def _start_and_stop(log_dir: Path, **settings: Any) -> None:
    with kafka_broker(log_dir, **settings):
        pass


def test_no_java_on_path_is_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(BrokerStartError, match="no `java` on PATH"):
        find_kafka_runtime()


def test_missing_jars_name_the_make_target(tmp_path: Path) -> None:
    with pytest.raises(BrokerStartError, match="make kafka-broker") as caught:
        _start_and_stop(tmp_path / "logs", libs=tmp_path / "empty")
    assert "kafka_2.13-*.jar" in str(caught.value)


def test_no_node_is_a_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(Exception, match="at least one node"):
        _start_and_stop(tmp_path, racks=())


@pytest.mark.timeout(120)
def test_a_taken_port_is_reported_with_the_log(tmp_path: Path) -> None:
    with socket.socket() as holder:
        holder.bind((LOOPBACK, 0))
        holder.listen(1)
        port = holder.getsockname()[1]
        with pytest.raises(BrokerStartError, match="taken") as caught:
            _start_and_stop(tmp_path, port=port)
    assert "Kafka log" in str(caught.value)


@pytest.mark.timeout(120)
def test_a_missed_deadline_carries_the_log_tail(tmp_path: Path) -> None:
    with pytest.raises(BrokerStartError, match="not ready after") as caught:
        _start_and_stop(tmp_path, startup_timeout_s=0.2)
    assert "--- Kafka log" in str(caught.value)
    assert not list(tmp_path.glob("cluster-*/node-*/data")), "data dirs must not be left running"


@pytest.mark.timeout(180)
def test_open_broker_kafka_mode_runs_and_stops_cleanly(tmp_path: Path) -> None:
    """``open_broker("kafka")`` answers Metadata on loopback; after the block the port is
    closed, the log is kept and the data directory is gone."""
    with open_broker("apache-kafka", log_dir=tmp_path) as running:
        host, port = running.bootstrap.split(",")[0].rsplit(":", 1)
        advertised = metadata_brokers(host, int(port), timeout_s=5)
        assert [b.host for b in advertised] == [LOOPBACK]
        assert running.kind.startswith("apache-kafka-")
        assert running.profile.name == "apache-kafka"
    with pytest.raises(OSError):
        socket.create_connection((host, int(port)), timeout=2).close()
    assert running.log_path is not None and "Kafka" in running.log_tail()
    assert not list(tmp_path.glob("cluster-*/node-*/data"))
