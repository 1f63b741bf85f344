"""confluent-kafka through the listener bridge on Apache Kafka: the bridge's rebalance
metrics match the listener's calls, the first rebalance's latency is measured from
``subscribe``; a member expelled for not polling reports lost partitions and a lost latency,
the other member none."""

from __future__ import annotations

import contextlib
import copy
import math
import time
from collections.abc import Callable
from typing import Any

import pytest
from metrics_harness import apache_kafka_only  # noqa: F401 (the fixture)

from kafka_sticky_plugin.confluent import TopicPartition, create_consumer, subscribe
from kafka_sticky_plugin.groups.admin import unique_name

pytestmark = [pytest.mark.usefixtures("apache_kafka_only"), pytest.mark.timeout(150)]


class Calls:
    """Every listener call's partition count, per callback."""

    def __init__(self) -> None:
        self.calls: dict[str, list[int]] = {"assigned": [], "revoked": [], "lost": []}

    def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        self.calls["revoked"].append(len(revoked))

    def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        self.calls["assigned"].append(len(assigned))

    def on_partitions_lost(self, lost: set[TopicPartition]) -> None:
        self.calls["lost"].append(len(lost))


def _consumer(bootstrap: str, group: str, name: str, strategy: str) -> Any:
    return create_consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "client.id": name,
            "partition.assignment.strategy": strategy,
            "session.timeout.ms": 6000,
            "heartbeat.interval.ms": 500,
            "max.poll.interval.ms": 6000,
            "enable.auto.commit": False,
            "log_level": 0,
        }
    )


def _poll_until_stable(consumers: list[Any], total: int, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    stable_since = None
    while time.monotonic() < deadline:
        for consumer in consumers:
            consumer.poll(0.1)
        sizes = [len(c.assignment()) for c in consumers]
        if sum(sizes) == total and all(sizes):
            stable_since = stable_since or time.monotonic()
            if time.monotonic() - stable_since > 3:
                return
        else:
            stable_since = None
    raise AssertionError("the group did not settle")


@pytest.mark.parametrize("strategy", ["range", "cooperative-sticky"])
def test_bridge_metrics_match_the_listener(
    broker: Any, topic_factory: Callable[[int], str], strategy: str
) -> None:
    """Two members: counts equal the listener's calls, no loss."""
    topic = topic_factory(4)
    group = unique_name("g-metrics-confluent")
    consumers = [_consumer(broker.bootstrap, group, n, strategy) for n in ("a", "b")]
    calls = [Calls(), Calls()]
    try:
        bridges = [subscribe(c, [topic], k) for c, k in zip(consumers, calls, strict=True)]
        _poll_until_stable(consumers, 4)
        snaps = [bridge.metrics.snapshot() for bridge in bridges]
        seen_then = copy.deepcopy(calls)  # close() revokes again, after the snapshots
    finally:
        for consumer in consumers:
            consumer.close()
    for snap, seen in zip(snaps, seen_then, strict=True):
        assert snap.group_id == group and snap.client_id in ("a", "b")
        assert snap.rebalance_total == len(seen.calls["assigned"]) >= 1
        assert snap.partitions_added_total == sum(seen.calls["assigned"])
        assert snap.partitions_revoked_total == sum(seen.calls["revoked"])
        assert snap.partitions_lost_total == 0 and math.isnan(snap.partition_lost_latency_max)
        assert snap.assigned_partitions >= 1
        assert snap.rebalance_latency_max > 0  # the first rebalance, from subscribe()


def test_expelled_member_reports_lost_latency(
    broker: Any, topic_factory: Callable[[int], str]
) -> None:
    """The member that stops polling past max.poll.interval.ms loses its partitions."""
    topic = topic_factory(4)
    group = unique_name("g-metrics-confluent-lost")
    a = _consumer(broker.bootstrap, group, "a", "cooperative-sticky")
    b = _consumer(broker.bootstrap, group, "b", "cooperative-sticky")
    seen_a, seen_b = Calls(), Calls()
    try:
        bridge_a, bridge_b = subscribe(a, [topic], seen_a), subscribe(b, [topic], seen_b)
        _poll_until_stable([a, b], 4)
        deadline = time.monotonic() + 8
        while time.monotonic() < deadline:  # only a polls: b is expelled
            a.poll(0.2)
        deadline = time.monotonic() + 20
        while not seen_b.calls["lost"] and time.monotonic() < deadline:
            a.poll(0.1)
            with contextlib.suppress(Exception):  # MAX_POLL_EXCEEDED is reported once
                b.poll(0.1)
        snap_a, snap_b = bridge_a.metrics.snapshot(), bridge_b.metrics.snapshot()
    finally:
        a.close()
        b.close()
    assert seen_b.calls["lost"], "librdkafka never reported the loss"
    assert snap_b.partitions_lost_total == sum(seen_b.calls["lost"]) > 0
    assert not math.isnan(snap_b.partition_lost_latency_max)
    assert snap_a.partitions_lost_total == 0 and math.isnan(snap_a.partition_lost_latency_max)
