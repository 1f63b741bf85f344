"""The rebalance metrics exporters: Prometheus names, units and labels; OpenTelemetry
observable instruments read through the SDK's in-memory reader."""

from __future__ import annotations

import math

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from kafka_sticky_plugin.metrics import METRICS, RebalanceMetrics
from kafka_sticky_plugin.metrics.opentelemetry import enable_opentelemetry
from kafka_sticky_plugin.metrics.prometheus import enable_prometheus
from kafka_sticky_plugin.metrics.rdkafka_stats import RdkafkaGroupStats


class Clock:
    def __init__(self) -> None:
        self.now = 50.0

    def __call__(self) -> float:
        return self.now


def two_rebalances(client_id: str) -> RebalanceMetrics:
    """A recorder with two rebalances of 250 ms and 750 ms, one failed attempt, 4 partitions."""
    clock = Clock()
    m = RebalanceMetrics("orders", client_id, assigned=lambda: 4, clock=clock)
    for latency in (0.25, 0.75):
        m.join_attempt()
        clock.now += latency
        if latency > 0.5:
            m.join_failed()
        m.join_succeeded(3, added=2)
    return m


def scrape(registry: CollectorRegistry) -> dict[tuple[str, str], float]:
    """``{(sample name, client_id): value}`` parsed back from the exposition text."""
    text = generate_latest(registry).decode()
    out: dict[tuple[str, str], float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            assert set(sample.labels) == {"group", "client_id"}, sample
            out[sample.name, sample.labels["client_id"]] = sample.value
    return out


def test_prometheus_names_units_and_labels() -> None:
    """Seconds, ``_total`` counters, one series per consumer labelled group and client id."""
    registry = CollectorRegistry()
    a, b = two_rebalances("a"), two_rebalances("b")
    a.rdkafka_statistics(RdkafkaGroupStats(5, 1500, 3, "up", "steady", "x"))
    enable_prometheus(a, registry)
    collector = enable_prometheus(b, registry)
    assert enable_prometheus(a, registry) is collector  # one collector per registry
    values = scrape(registry)
    assert values["kafka_consumer_rebalances_total", "a"] == 2
    assert values["kafka_consumer_failed_rebalances_total", "b"] == 1
    assert values["kafka_consumer_rebalance_latency_max_seconds", "a"] == pytest.approx(0.75)
    assert values["kafka_consumer_rebalance_latency_seconds_total", "a"] == pytest.approx(1.0)
    assert values["kafka_consumer_assigned_partitions", "b"] == 4
    assert math.isnan(values["kafka_consumer_partition_lost_latency_max_seconds", "a"])
    assert {name for name, _ in values} == {info.prometheus for info in METRICS}
    # librdkafka's rows: only for the consumer whose statistics arrived (a)
    assert values["kafka_consumer_rdkafka_rebalances_total", "a"] == 5
    assert values["kafka_consumer_rdkafka_rebalance_age_seconds", "a"] == pytest.approx(1.5)
    assert values["kafka_consumer_rdkafka_group_up", "a"] == 1
    rdkafka = {info.prometheus for info in METRICS if info.rdkafka}
    assert len(rdkafka) == 4 and not any((name, "b") in values for name in rdkafka)


def test_prometheus_forgets_a_collected_consumer() -> None:
    """A recorder that was garbage-collected is no longer reported."""
    registry = CollectorRegistry()
    enable_prometheus(two_rebalances("gone"), registry)
    assert not any(client == "gone" for _, client in scrape(registry))


def test_a_handle_without_metrics_is_refused_with_one_line() -> None:
    """Anything but a hooks handle or a recorder raises a clear TypeError."""
    with pytest.raises(TypeError, match="install_hooks"):
        enable_prometheus(object(), CollectorRegistry())


def test_opentelemetry_instruments_and_attributes() -> None:
    """Observable counters and gauges under kafka.consumer.*, messaging.* attributes."""
    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader])
    m = two_rebalances("otel-client")
    enable_opentelemetry(m, provider)
    enable_opentelemetry(m, provider)  # idempotent: no duplicate instruments or points
    data = reader.get_metrics_data()
    assert data is not None
    points: dict[str, list[tuple[float, dict[str, object]]]] = {}
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                points[metric.name] = [
                    (float(getattr(p, "value", math.nan)), dict(p.attributes or {}))
                    for p in metric.data.data_points
                ]
    ((count, attributes),) = points["kafka.consumer.rebalance.count"]
    assert count == 2
    assert attributes == {
        "messaging.system": "kafka",
        "messaging.consumer.group.name": "orders",
        "messaging.client.id": "otel-client",
    }
    ((latency_max, _),) = points["kafka.consumer.rebalance.latency.max"]
    assert latency_max == pytest.approx(0.75)
    assert "kafka.consumer.partition.lost.latency.max" not in points  # NaN: not reported
    assert "kafka.consumer.rdkafka.rebalance.count" not in points  # no statistics: none
    provider.shutdown()


def test_the_grafana_dashboard_queries_only_exported_names() -> None:
    """Every metric name in examples/grafana-rebalance-dashboard.json is one we export."""
    import json
    import re
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "examples" / "grafana-rebalance-dashboard.json"
    dashboard = json.loads(path.read_text())
    exprs = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    used = set(re.findall(r"kafka_consumer_[a-z_]+", " ".join(exprs)))
    exported = {info.prometheus for info in METRICS}
    assert used and used <= exported, sorted(used - exported)
    assert {"kafka_consumer_rebalances_total", "kafka_consumer_partitions_moved_total"} <= used
