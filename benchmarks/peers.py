"""Drive kafka-python's own assignors on the benchmark shapes (the peers we compare with).

kafka-python 3.x ``assign(cluster, members)`` takes an object with ``partitions_for_topic`` and
members with ``member_id`` and a decoded ``ConsumerProtocolSubscription`` as ``metadata``; its
sticky assignor reads the previous assignment from ``user_data`` (an encoded or decoded
``StickyAssignorUserData``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

Plan = dict[str, list[tuple[str, int]]]


class StaticCluster:
    """The part of kafka-python's ``ClusterMetadata`` its assignors read."""

    def __init__(self, partitions: dict[str, int]) -> None:
        self._partitions = {t: set(range(n)) for t, n in partitions.items()}

    def partitions_for_topic(self, topic: str) -> set[int] | None:
        return self._partitions.get(topic)

    def topics(self, exclude_internal_topics: bool = True) -> set[str]:
        return set(self._partitions)

    def available_partitions_for_topic(self, topic: str) -> set[int] | None:
        return self._partitions.get(topic)


@dataclass
class Member:
    member_id: str
    metadata: Any
    group_instance_id: str | None = None


def run_peer(
    name: str,
    partitions: dict[str, int],
    subs: dict[str, list[str]],
    owned: Plan | None = None,
    generation: int = -1,
) -> Plan:
    """Run kafka-python's ``name`` assignor (``sticky`` or ``roundrobin``) and return its plan."""
    from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
    from kafka.coordinator.assignors.sticky.sticky_assignor import (
        StickyAssignorUserData,
        StickyPartitionAssignor,
    )
    from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription

    members = []
    for member_id, topics in subs.items():
        user_data: Any = b""
        mine = (owned or {}).get(member_id)
        if name == "sticky" and mine:
            by_topic: dict[str, list[int]] = {}
            for t, p in mine:
                by_topic.setdefault(t, []).append(p)
            user_data = StickyAssignorUserData(list(by_topic.items()), generation)
        metadata = ConsumerProtocolSubscription(0, list(topics), user_data)
        members.append(Member(member_id, metadata))
    assignor: Any = StickyPartitionAssignor() if name == "sticky" else RoundRobinPartitionAssignor()
    result = assignor.assign(StaticCluster(partitions), members)
    plan: Plan = {}
    for member_id, assignment in result.items():
        plan[member_id] = sorted((t, p) for t, ps in assignment.assigned_partitions for p in ps)
    return plan
