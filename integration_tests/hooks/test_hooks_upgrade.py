"""KIP-429's two-bounce upgrade from ``range`` with hooked members, on every client version.

Three members on kafka-python's own ``range`` (without the plugin, as before an upgrade);
bounce 1 restarts each with
``[cooperative-sticky, range]`` (the group must keep running ``range``, eagerly, while any
member lacks the new protocol: the hooks' KIP-429 protocol selection); bounce 2 restarts
each with ``[cooperative-sticky]`` only (the broker's vote moves the group to it once every
member supports it). After that, a restart is incremental: the members that stay are never
told to revoke a partition they keep (under the eager protocol every member revokes
everything at every rebalance). Throughout, no partition is consumed by two live members at once.

Needs the broker's protocol vote (Apache Kafka); the embedded broker fixes a group's
protocol to its first member's first choice, so this is ``kafka_only``.
"""

from __future__ import annotations

from typing import Any

import pytest
from hooks_harness import Member, consumed_by_two_live_members, wait_stable
from kafka.coordinator.assignors.range import RangePartitionAssignor

from kafka_sticky_plugin import CooperativeStickyAssignor

pytestmark = [pytest.mark.kafka_only("protocol_vote"), pytest.mark.timeout(300)]

NAMES = ("a", "b", "c")


def test_two_bounce_upgrade_from_range(group: Any) -> None:
    g = group({"t": 6})
    everything = g.all_partitions()
    incarnations: list[Member] = []

    def start(name: str, strategy: list[Any], hooks: bool = True) -> Member:
        member: Member = g.member(f"{name}{len(incarnations)}", strategy=strategy, hooks=hooks)
        incarnations.append(member)
        return member

    live = {name: start(name, [RangePartitionAssignor], hooks=False) for name in NAMES}
    wait_stable(list(live.values()), everything)
    for strategy in (
        [CooperativeStickyAssignor, RangePartitionAssignor],
        [CooperativeStickyAssignor],
    ):
        for name in NAMES:
            live[name].stop()
            live[name] = start(name, strategy)
            wait_stable(list(live.values()), everything, timeout_s=90)

    survivors = [live["b"], live["c"]]
    before = {m.name: m.snapshot() for m in survivors}
    revoked_before = {m.name: sum(e.kind == "revoked" for e in m.events) for m in survivors}
    live["a"].stop()
    live["a"] = start("a", [CooperativeStickyAssignor])
    after = wait_stable(list(live.values()), everything, timeout_s=90)
    for member in survivors:
        events = [e for e in member.events if e.kind == "revoked"][revoked_before[member.name] :]
        revoked = {p for e in events for p in e.partitions}
        kept = before[member.name] & after[member.name]
        assert kept, f"{member.name} kept nothing: {before[member.name]} -> {after[member.name]}"
        assert not revoked & kept, f"{member.name} was told to revoke kept {revoked & kept}"
    problems = consumed_by_two_live_members(incarnations)
    assert not problems, problems[:5]
