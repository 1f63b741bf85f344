"""aiokafka with the hooks: the rebalance metrics match the harness's events (listener calls,
moves between stable assignments); no loss, so no lost latency."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hooks_harness import wait_stable

pytestmark = pytest.mark.timeout(180)


def test_metrics_match_the_harness(group: Any, broker: Any) -> None:
    """A third member joins a group of two: each member's counts equal its listener's calls;
    the leaders' moved partitions equal the partitions members were told to give up
    (cooperative: each such revocation is a move the leader decided). Apache Kafka only, as
    the rest of the metrics tests."""
    if broker.profile.name != "apache-kafka":
        pytest.skip("the metrics tests run on Apache Kafka (KAFKA_STICKY_BROKER=kafka)")
    g = group({"t": 6}, produce=False)
    everything = g.all_partitions()
    a, b = g.aio("a"), g.aio("b")
    wait_stable([a, b], everything)
    c = g.aio("c")
    after = wait_stable([a, b, c], everything)
    members = [a, b, c]
    for member in members:
        snap = member.handle.metrics.snapshot()
        with member._lock:
            events = list(member.events)
        assigned = [e.partitions for e in events if e.kind == "assigned"]
        revoked = [e.partitions for e in events if e.kind == "revoked"]
        assert snap.rebalance_total == len(assigned) >= 1, member.name
        assert snap.partitions_added_total == sum(map(len, assigned)), member.name
        assert snap.partitions_revoked_total == sum(map(len, revoked)), member.name
        assert snap.partitions_lost_total == 0 and math.isnan(snap.partition_lost_latency_max)
        assert snap.rebalance_latency_max > 0 and snap.generation > 0, member.name
        assert snap.assigned_partitions == len(after[member.name]), member.name
    moves = sum(len(e.partitions) for m in members for e in m.events if e.kind == "revoked")
    assert moves >= 2
    assert sum(m.handle.metrics.snapshot().partitions_moved_total for m in members) == moves
