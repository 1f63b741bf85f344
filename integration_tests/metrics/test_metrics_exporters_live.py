"""The exporters on a real group (Apache Kafka): a real Prometheus server scrapes the hooked
consumers' exporter and returns their values through its query API; OpenTelemetry's SDK
reads the same values through its in-memory reader."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import kafka
import pytest
from metrics_harness import (
    Member,
    apache_kafka_only,  # noqa: F401 (the fixture)
    wait_stable,
)
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from prometheus_client import CollectorRegistry, start_http_server
from prometheus_server import prometheus_binary, prometheus_scraping, query

from kafka_sticky_plugin.groups.admin import unique_name
from kafka_sticky_plugin.metrics.opentelemetry import enable_opentelemetry
from kafka_sticky_plugin.metrics.prometheus import enable_prometheus

pytestmark = [
    pytest.mark.usefixtures("apache_kafka_only"),
    pytest.mark.skipif(not kafka.__version__.startswith("3."), reason="kafka-python 3.0 hooks"),
    pytest.mark.timeout(180),
]


def test_prometheus_scrapes_and_opentelemetry_reads_the_group(
    broker: Any, topic_factory: Callable[[int], str], tmp_path: Path
) -> None:
    """Rebalances, failed rebalances and assigned partitions per client id, as Prometheus
    stored them from the exporter and as OpenTelemetry observes them, equal the recorders'."""
    prometheus_binary()  # skip before starting anything where there is no server
    topic = topic_factory(6)
    group = unique_name("g-metrics-export")
    everything = {(topic, p) for p in range(6)}
    members = [Member(name, broker.bootstrap, group, topic).start() for name in ("a", "b")]
    registry = CollectorRegistry()
    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader])
    server, thread = start_http_server(0, addr="127.0.0.1", registry=registry)
    try:
        wait_stable(members, everything)
        for member in members:
            enable_prometheus(member.recorder(), registry)
            enable_opentelemetry(member.recorder(), provider)
        snaps = {m.name: m.recorder().snapshot() for m in members}
        expected_total = {name: float(s.rebalance_total) for name, s in snaps.items()}
        with prometheus_scraping(server.server_port, tmp_path) as base:
            selector = f'{{group="{group}"}}'
            deadline = time.monotonic() + 30
            rebalances = query(base, f"kafka_consumer_rebalances_total{selector}")
            while rebalances != expected_total and time.monotonic() < deadline:
                time.sleep(0.5)
                rebalances = query(base, f"kafka_consumer_rebalances_total{selector}")
            failed = query(base, f"kafka_consumer_failed_rebalances_total{selector}")
            assigned = query(base, f"kafka_consumer_assigned_partitions{selector}")
        data = reader.get_metrics_data()
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)
        provider.shutdown()
        for member in members:
            member.stop()
    assert rebalances == expected_total
    assert failed == {name: float(s.failed_rebalance_total) for name, s in snaps.items()}
    assert sum(assigned.values()) == 6
    assert assigned == {name: float(s.assigned_partitions) for name, s in snaps.items()}
    assert data is not None
    observed: dict[str, float] = {}
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                if metric.name == "kafka.consumer.rebalance.count":
                    for point in metric.data.data_points:
                        client = str((point.attributes or {})["messaging.client.id"])
                        observed[client] = float(getattr(point, "value", -1))
    assert observed == expected_total
