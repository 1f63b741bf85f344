"""A stopping aiokafka member's ownership ends at its ``closing`` report, before its LeaveGroup
lets another member take its partitions (``kafka_sticky_plugin/groups/aiokafka_member.py``;
docs/benchmarks.md: the 50-member aiokafka row's "two owners" were this hand-over, measured
until the ``stopped`` event stamped after ``stop()`` had returned).

aiokafka's ``stop()`` calls no ``on_partitions_revoked``: the member commits what it processed
itself, reports ``closing``, then calls ``stop()`` (LeaveGroup). On a real broker with records
flowing, two cooperative-sticky aiokafka members; one stops cleanly, then the other: each
``closing`` comes before its ``stopped``, the survivor is assigned the leaver's partitions only
after the leaver's ``closing``, nobody delivers or commits anything after its own
``closing``, no partition ever had two owners, nothing acknowledged is lost.
"""

from __future__ import annotations

import pytest
from group_flow import FlowingGroupFactory

from kafka_sticky_plugin.groups.events import OwnershipEvent

PARTITIONS = 6


def _one(events: list[OwnershipEvent], key: str, kind: str) -> OwnershipEvent:
    found = [e for e in events if e.key == key and e.kind == kind]
    assert len(found) == 1, f"{key}: expected one {kind!r} event, got {found}"
    return found[0]


@pytest.mark.timeout(180)
def test_a_stopping_aiokafka_member_closes_before_its_partitions_move(
    flowing_group: FlowingGroupFactory,
) -> None:
    flow = flowing_group(["cooperative-sticky"], PARTITIONS, rate_per_s=50)
    group = flow.group
    group.start_member("a", client="aiokafka")
    group.start_member("b", client="aiokafka")
    before = group.wait_stable(timeout_s=90)
    leaving = set(before.assignment["a"])
    assert leaving, f"a owns nothing: {before.assignment}"
    group.stop_member("a")
    after = group.wait_stable(timeout_s=90, members=["b"])
    assert set(after.assignment["b"]) == group.all_partitions()
    flow.stop()

    events = group.log.events()
    for key in ("a#0", "b#0"):
        closing, stopped = _one(events, key, "closing"), _one(events, key, "stopped")
        assert closing.t <= stopped.t, f"{key}: closing {closing.t} after stopped {stopped.t}"
        late = [d for d in group.log.deliveries() if f"{d.member}#{d.incarnation}" == key]
        late = [d for d in late if d.t > closing.t]
        assert not late, f"{key} delivered {len(late)} records after its closing"
        commits = [e for e in events if e.key == key and e.kind == "committed"]
        assert all(e.t <= closing.t for e in commits), f"{key} committed after its closing"
    a_closing = _one(events, "a#0", "closing").t
    # Only what b was given after a last was: which member joins first is a race (under load
    # b may be given everything, then hand a its share), and that early grant is not the
    # hand-over this test is about.
    a_given = max(e.t for e in events if e.key == "a#0" and e.kind == "assigned")
    taken = [
        e
        for e in events
        if e.key == "b#0" and e.kind == "assigned" and e.t > a_given and leaving & set(e.partitions)
    ]
    assert taken, "b was never assigned a's partitions"
    assert all(e.t > a_closing for e in taken), (
        f"b was assigned a's partitions before a's closing at {a_closing}: {taken}"
    )
    flow.check_guarantees("aiokafka closing")
