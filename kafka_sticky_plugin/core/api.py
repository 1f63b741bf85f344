"""TEMPORARY placeholder: being replaced by the real engine (same signatures)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .spec import MemberSpec, TopicPartitionTuple


def sticky_assign(
    partitions_per_topic: Mapping[str, int], members: Iterable[MemberSpec]
) -> dict[str, list[TopicPartitionTuple]]:
    specs = sorted({m.member_id: m for m in members}.values(), key=lambda m: m.member_id)
    plan: dict[str, list[TopicPartitionTuple]] = {m.member_id: [] for m in specs}
    load = dict.fromkeys(plan, 0)
    for topic in sorted(partitions_per_topic):
        subs = [m.member_id for m in specs if topic in m.topics]
        for p in range(partitions_per_topic[topic]):
            if subs:
                best = min(subs, key=lambda m: (load[m], m))
                plan[best].append((topic, p))
                load[best] += 1
    return plan


def cooperative_assign(
    partitions_per_topic: Mapping[str, int], members: Iterable[MemberSpec]
) -> dict[str, list[TopicPartitionTuple]]:
    return sticky_assign(partitions_per_topic, members)
