"""kafka-python 3.0 with the hooks on Apache Kafka: the rebalance metrics match what the
test saw (its listener's calls, the client's logged join failures)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import kafka
import pytest
from metrics_harness import (
    JoinFailures,
    Member,
    apache_kafka_only,  # noqa: F401 (the fixture)
    wait_stable,
)

from kafka_sticky_plugin.groups.admin import unique_name

pytestmark = [
    pytest.mark.usefixtures("apache_kafka_only"),
    pytest.mark.skipif(not kafka.__version__.startswith("3."), reason="kafka-python 3.0 hooks"),
    pytest.mark.timeout(180),
]


def _partitions(topic: str, count: int) -> set[tuple[str, int]]:
    return {(topic, p) for p in range(count)}


def test_counts_latencies_and_moves_match_the_group(
    broker: Any, topic_factory: Callable[[int], str]
) -> None:
    """Two members, a third joins then leaves: each member's rebalances, revoked and added
    partitions equal its listener's calls; failed rebalances equal the client's logged join
    failures; the leaders' moved partitions equal the partitions members were told to give
    up while staying (cooperative: every such revocation is a move the leader decided, the
    first two members' own joins included); no loss, so no lost latency."""
    topic = topic_factory(6)
    group = unique_name("g-metrics")
    everything = _partitions(topic, 6)
    started = time.monotonic()
    with JoinFailures(group) as failures:
        a = Member("a", broker.bootstrap, group, topic).start()
        b = Member("b", broker.bootstrap, group, topic).start()
        members = [a, b]
        try:
            wait_stable(members, everything)
            c = Member("c", broker.bootstrap, group, topic).start()
            members.append(c)
            wait_stable(members, everything)
            c.stop()
            members.remove(c)
            wait_stable(members, everything)
        finally:
            for member in members:
                member.stop()
        elapsed_ms = (time.monotonic() - started) * 1000
        snaps = {m.name: m.recorder().snapshot() for m in (a, b, c)}
        seen = {m.name: m.seen() for m in (a, b, c)}
        logged_failures = failures.count
    expected_moves = sum(len(r) for s in seen.values() for r in s.revoked)
    print(f"moves {expected_moves}, logged join failures {logged_failures}")
    for name, snap in snaps.items():
        print(name, {k: v for k, v in snap.as_java_names().items() if not math.isnan(v)})
        s = seen[name]
        assert snap.rebalance_total == len(s.assigned) >= 1, name
        assert snap.partitions_added_total == sum(map(len, s.assigned)), name
        revoked = s.revoked + s.revoked_on_close
        assert snap.partitions_revoked_total == sum(map(len, revoked)), name
        assert snap.partitions_lost_total == 0 and not s.lost, name
        assert math.isnan(snap.partition_lost_latency_max), name
        assert 0 < snap.rebalance_latency_max <= elapsed_ms, name
        assert snap.rebalance_latency_total >= snap.rebalance_latency_max, name
        assert snap.last_rebalance_seconds_ago >= 0 and snap.generation > 0, name
        assert snap.claims_refused_stale_total == snap.claims_refused_contested_total == 0
    assert expected_moves >= 2  # the third member took partitions from the first two
    assert sum(s.partitions_moved_total for s in snaps.values()) == expected_moves
    assert sum(s.failed_rebalance_total for s in snaps.values()) == logged_failures
    leaders = [s for s in snaps.values() if s.leader_assign_total]
    assert leaders and all(s.leader_assign_engine_ms_total > 0 for s in leaders)
    assert snaps["a"].assigned_partitions + snaps["b"].assigned_partitions == 0  # closed


def test_lost_partitions_only_on_loss(broker: Any, topic_factory: Callable[[int], str]) -> None:
    """A member that stops polling past max_poll_interval_ms loses its partitions: its lost
    count and lost latency come from that loss; the other member reports no loss."""
    topic = topic_factory(4)
    group = unique_name("g-metrics-lost")
    everything = _partitions(topic, 4)
    a = Member("a", broker.bootstrap, group, topic).start()
    b = Member("b", broker.bootstrap, group, topic, max_poll_interval_ms=4000).start()
    try:
        wait_stable([a, b], everything)
        assert not b.seen().lost
        b.pause(8.0)
        deadline = time.monotonic() + 60
        while not b.seen().lost and time.monotonic() < deadline:
            b.check()
            time.sleep(0.2)
        wait_stable([a, b], everything)
        snap_a, snap_b = a.recorder().snapshot(), b.recorder().snapshot()
        seen_b = b.seen()
    finally:
        a.stop()
        b.stop()
    assert seen_b.lost, "the paused member was never told it lost its partitions"
    assert snap_b.partitions_lost_total == sum(map(len, seen_b.lost)) > 0
    assert not math.isnan(snap_b.partition_lost_latency_max)
    assert snap_a.partitions_lost_total == 0 and math.isnan(snap_a.partition_lost_latency_max)
    assert snap_b.rebalance_total == len(seen_b.assigned)
