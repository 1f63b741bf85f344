"""Real-broker scenarios of the coordinator hooks, run on every supported client version.

Each test uses fresh topics and a fresh group id (the embedded broker fixes a group's
protocol forever) and the fast group settings of ``hooks_harness.GROUP_SETTINGS``.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from hooks_harness import (
    consumed_by_two_live_members,
    wait_stable,
)

from kafka_sticky_plugin import CooperativeStickyAssignor, StickyAssignor

pytestmark = pytest.mark.timeout(150)


@pytest.mark.parametrize("strategy", ["cooperative-sticky", "sticky"])
def test_join_and_leave_keep_survivors_partitions(group: Any, strategy: str) -> None:
    """Three members share six partitions; after one leaves, survivors keep theirs (under
    COOPERATIVE without ever being revoked; under EAGER sticky, revoked and given back)."""
    assignor = CooperativeStickyAssignor if strategy == "cooperative-sticky" else StickyAssignor
    g = group({"t": 6})
    members = [g.member(name, strategy=[assignor]) for name in ("a", "b", "c")]
    everything = g.all_partitions()
    before = wait_stable(members, everything)
    assert all(len(parts) == 2 for parts in before.values()), before
    # Only what follows the leave counts: on a broker that answers joins at once (Apache
    # Kafka) the group forms in several rounds, and forming revokes cooperatively too.
    left_at = time.monotonic()
    members[2].stop()
    after = wait_stable(members[:2], everything)
    for member in members[:2]:
        assert before[member.name] <= after[member.name], (before, after)
        revoked = [e for e in member.events if e.kind == "revoked" and e.t >= left_at]
        if strategy == "cooperative-sticky":
            assert not revoked, f"{member.name} had partitions revoked: {revoked}"
        else:
            assert revoked, f"EAGER never revoked on {member.name}"
    assert sorted(len(p) for p in after.values()) == [3, 3]
    assert not consumed_by_two_live_members(members)


def test_debug_pause_loses_membership_without_double_consumption(group: Any) -> None:
    """KIP-341: a member paused past max_poll_interval loses its partitions, gets
    on_partitions_lost when it comes back, and no partition is consumed by two live
    members at once."""
    g = group({"t": 4})
    a, b = g.member("a"), g.member("b")
    everything = g.all_partitions()
    first = wait_stable([a, b], everything)
    # past max_poll_interval (10 s) plus the broker's 3 s join hold, so that the live
    # member's takeover completes before the paused one returns
    b.pause(20.0)
    deadline = time.monotonic() + 30
    while a.snapshot() != frozenset(everything) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert a.snapshot() == frozenset(everything), "the live member did not take over"
    deadline = time.monotonic() + 40
    while "lost" not in b.kinds() and time.monotonic() < deadline:
        time.sleep(0.2)
    lost = [e for e in b.events if e.kind == "lost"]
    assert lost and lost[0].partitions == first["b"], b.events
    final = wait_stable([a, b], everything)
    assert all(final.values()), final
    problems = consumed_by_two_live_members([a, b])
    assert not problems, problems[:5]


def test_subscription_change_revokes_at_next_rebalance(group: Any) -> None:
    """KIP-70: dropping a topic keeps its partitions until the next rebalance, which
    revokes exactly them, with the callback, while the others stay assigned."""
    g = group({"t1": 2, "t2": 2})
    a = g.member("a")
    before = wait_stable([a], g.all_partitions())
    dropped = g.all_partitions("t2")
    a.resubscribe([g.names["t1"]])
    deadline = time.monotonic() + 30
    while not any(e.kind == "revoked" for e in a.events):
        assert time.monotonic() < deadline, a.events
        time.sleep(0.2)
    assert a.notes["assignment_after_subscribe"] == before["a"]
    revoked = [e.partitions for e in a.events if e.kind == "revoked"]
    assert revoked == [frozenset(dropped)], a.events
    after = wait_stable([a], g.all_partitions("t1"))
    assert after["a"] == frozenset(g.all_partitions("t1"))
    assert not consumed_by_two_live_members([a])


def test_subscription_change_in_a_group_moves_only_dropped_partitions(group: Any) -> None:
    """KIP-70 in a group: the member that drops t2 gives its t2 partitions to the other
    member, keeps t1, and the join its subscription change started completes (kafka-python
    left it pending when a poll timed out during it; the member was then evicted and kept
    fetching partitions that another member owned)."""
    g = group({"t1": 2, "t2": 2})
    a, b = g.member("a"), g.member("b")
    everything = g.all_partitions()
    before = wait_stable([a, b], everything)
    t2 = g.names["t2"]
    a.resubscribe([g.names["t1"]])
    after = wait_stable([a, b], everything, timeout_s=45)
    assert all(p[0] != t2 for p in after["a"]), after
    assert g.all_partitions("t2") <= after["b"], after
    dropped = {p for p in before["a"] if p[0] == t2}
    revoked = {p for e in a.events if e.kind == "revoked" for p in e.partitions}
    assert dropped <= revoked, a.events
    problems = consumed_by_two_live_members([a, b])
    assert not problems, problems[:5]


def test_cooperative_scale_out_never_stops_kept_partitions(group: Any) -> None:
    """A third member joins: the others keep fetching what they keep (never revoked, never
    re-read from an older offset), and only moved partitions change hands."""
    g = group({"t": 6})
    a, b = g.member("a"), g.member("b")
    everything = g.all_partitions()
    before = wait_stable([a, b], everything)
    joined_at = time.monotonic()
    c = g.member("c")
    after = wait_stable([a, b, c], everything)
    assert sorted(len(p) for p in after.values()) == [2, 2, 2], after
    for member in (a, b):
        kept = before[member.name] & after[member.name]
        assert len(kept) == 2, (before, after)
        revoked = {p for e in member.events if e.kind == "revoked" for p in e.partitions}
        assert not revoked & kept, f"{member.name} revoked kept partitions {revoked & kept}"
        for partition in kept:
            offsets = [d.offset for d in member.deliveries if d.partition == partition]
            assert offsets == sorted(set(offsets)), f"{member.name} re-read {partition}"
            assert any(d.t > joined_at for d in member.deliveries if d.partition == partition), (
                f"{member.name} stopped fetching {partition}"
            )
    assert not consumed_by_two_live_members([a, b, c])
