"""KIP-429's two-bounce upgrade from aiokafka's own ``range`` to ``cooperative-sticky`` with
hooked aiokafka members.

Three members on aiokafka's ``RangePartitionAssignor`` without the plugin; bounce 1 restarts
each hooked with ``[cooperative-sticky, range]`` (the group keeps running ``range``, eagerly,
while any member lacks the new protocol; the hooks send both protocols in *one* JoinGroup);
bounce 2 restarts each with ``[cooperative-sticky]`` only. Afterwards a restart is
incremental: the members that stay are never told to revoke a partition. Throughout, no
partition is consumed by two live members at once.

Needs the broker's protocol vote (Apache Kafka): ``kafka_only``.
"""

from __future__ import annotations

from typing import Any

import pytest
from aiokafka.coordinator.assignors.range import RangePartitionAssignor
from hooks_harness import consumed_by_two_live_members, wait_stable

from kafka_sticky_plugin.aiokafka import CooperativeStickyAssignor

pytestmark = [pytest.mark.kafka_only("protocol_vote"), pytest.mark.timeout(300)]

NAMES = ("a", "b", "c")


def test_two_bounce_upgrade_from_range(group: Any) -> None:
    g = group({"t": 6})
    everything = g.all_partitions()
    incarnations: list[Any] = []

    def start(name: str, strategy: list[Any], hooks: bool = True) -> Any:
        member = g.aio(f"{name}{len(incarnations)}", strategy=strategy, hooks=hooks)
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
        assert not revoked & after[member.name], f"{member.name} revoked kept partitions"
        assert before[member.name] & after[member.name], (before, after)
    assert not consumed_by_two_live_members(incarnations)
