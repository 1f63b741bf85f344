"""confluent-kafka with ``statistics.interval.ms`` on Apache Kafka: librdkafka's own ``cgrp``
statistics reach the bridge's snapshot (rebalance count >= 1, assignment size equal to the
member's assignment) through a two-member rebalance, and the user's ``stats_cb`` still gets
every emission."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from metrics_harness import apache_kafka_only  # noqa: F401 (the fixture)

from kafka_sticky_plugin.confluent import TopicPartition, create_consumer, subscribe
from kafka_sticky_plugin.groups.admin import unique_name
from kafka_sticky_plugin.metrics.rdkafka_stats import parse_group_stats

pytestmark = [pytest.mark.usefixtures("apache_kafka_only"), pytest.mark.timeout(120)]


class Quiet:
    """A listener that does nothing (the bridge's own metrics are tested elsewhere)."""

    def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        pass

    def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        pass


def test_statistics_reach_the_snapshot_through_a_rebalance(
    broker: Any, topic_factory: Callable[[int], str]
) -> None:
    """a joins alone, then b joins (a rebalance for a); both report librdkafka's view."""
    topic = topic_factory(4)
    group = unique_name("g-metrics-rdstats")
    emitted: dict[str, list[str]] = {"a": [], "b": []}

    def member(name: str) -> Any:
        return create_consumer(
            {
                "bootstrap.servers": broker.bootstrap,
                "group.id": group,
                "client.id": name,
                "partition.assignment.strategy": "cooperative-sticky",
                "session.timeout.ms": 6000,
                "heartbeat.interval.ms": 500,
                "enable.auto.commit": False,
                "statistics.interval.ms": 1000,
                "stats_cb": emitted[name].append,  # the user's own: must still be called
                "log_level": 0,
            }
        )

    a, b = member("a"), member("b")
    try:
        bridge_a = subscribe(a, [topic], Quiet())
        deadline = time.monotonic() + 30
        while len(a.assignment()) != 4 and time.monotonic() < deadline:
            a.poll(0.1)
        bridge_b = subscribe(b, [topic], Quiet())
        deadline = time.monotonic() + 60
        snaps = [bridge_a.metrics.snapshot(), bridge_b.metrics.snapshot()]
        sizes = [len(a.assignment()), len(b.assignment())]
        while time.monotonic() < deadline:
            a.poll(0.1)
            b.poll(0.1)
            sizes = [len(a.assignment()), len(b.assignment())]
            snaps = [bridge_a.metrics.snapshot(), bridge_b.metrics.snapshot()]
            settled = sum(sizes) == 4 and all(sizes)
            agree = all(s.rdkafka_assignment_size == n for s, n in zip(snaps, sizes, strict=True))
            if settled and agree and snaps[0].rdkafka_rebalance_cnt >= 2:
                break
    finally:
        a.close()
        b.close()
    print(f"sizes={sizes} counts={[s.rdkafka_rebalance_cnt for s in snaps]}")
    assert sum(sizes) == 4 and all(sizes), f"the group did not settle: {sizes}"
    for snap, size in zip(snaps, sizes, strict=True):
        assert snap.rdkafka_rebalance_cnt >= 1
        assert snap.rdkafka_assignment_size == size
        assert snap.rdkafka_state == "up" and snap.rdkafka_group_up == 1
        assert snap.rdkafka_rebalance_age >= 0
    # a was assigned alone, then gave partitions to b: at least two rebalances in its view
    assert snaps[0].rdkafka_rebalance_cnt >= 2
    # the user's stats_cb got the same strings, readable by our parser
    assert emitted["a"] and emitted["b"]
    assert parse_group_stats(emitted["a"][-1]) is not None
