"""Mixed groups on a real broker: hooked aiokafka members next to hooked kafka-python members
in one cooperative-sticky group, with either client as the leader (the first member to join
leads). Both leaders read the other client's subscriptions (v3: owned partitions,
generation), nobody's partitions are revoked when a member joins or leaves, and no partition
is consumed by two live members at once."""

from __future__ import annotations

from typing import Any

import pytest
from hooks_harness import consumed_by_two_live_members, wait_stable

import kafka_sticky_plugin as kp

pytestmark = pytest.mark.timeout(180)


@pytest.mark.parametrize("leader", ["aiokafka", "kafka-python"])
def test_mixed_group_is_incremental_with_either_leader(group: Any, leader: str) -> None:
    g = group({"t": 6})
    everything = g.all_partitions()

    def aio(name: str) -> Any:
        return g.aio(name)

    def kafka_python(name: str) -> Any:
        return g.kp(name, [kp.CooperativeStickyAssignor])

    first, second = (aio, kafka_python) if leader == "aiokafka" else (kafka_python, aio)
    lead = first("lead")
    wait_stable([lead], everything)
    members = [lead, second("x"), first("y")]
    before = wait_stable(members, everything)
    assert all(len(parts) == 2 for parts in before.values()), before
    members[1].stop()
    after = wait_stable([members[0], members[2]], everything)
    for member in (members[0], members[2]):
        assert before[member.name] <= after[member.name], (before, after)
    joined_at = {m.name: len(m.events) for m in (members[0], members[2])}
    for member in (members[0], members[2]):
        revoked = [e for e in member.events[joined_at[member.name] :] if e.kind == "revoked"]
        assert not revoked, f"{member.name} lost partitions it kept: {revoked}"
    assert not consumed_by_two_live_members(members)
