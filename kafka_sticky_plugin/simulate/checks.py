"""Invariant checks the simulator runs after every round, each raising ``InvariantViolation``.

- validity: every assigned partition exists, its member subscribes to its topic, and no
  partition goes to two members;
- completeness: every partition of a subscribed topic is assigned (eager rounds, and the
  last round of a converged cooperative rebalance);
- balance: no member holds two or more partitions more than another member that could take
  one of them (the KIP-54 balance goal, stated so that it also holds for unequal
  subscriptions);
- cooperative contract (KIP-429): no round gives a member a partition that another member
  of the group was still consuming when the round started.

These are the simulator's own, written against the same definitions as
:mod:`kafka_sticky_plugin.invariants`; ``count_violations`` runs them all and counts.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence

from ..core.spec import TopicPartitionTuple
from ..errors import InvariantViolation
from .group import Member

__all__ = [
    "check_balance",
    "check_completeness",
    "check_cooperative_contract",
    "check_validity",
    "count_violations",
]

Plan = Mapping[str, Sequence[TopicPartitionTuple]]


def check_validity(
    partitions_per_topic: Mapping[str, int], members: Sequence[Member], plan: Plan
) -> None:
    topics_of = {m.member_id: set(m.topics) for m in members}
    missing = sorted(set(topics_of) - set(plan))
    if missing:
        raise InvariantViolation(f"member {missing[0]!r} has no entry in the plan")
    owner: dict[TopicPartitionTuple, str] = {}
    for member_id in sorted(plan):
        if member_id not in topics_of:
            raise InvariantViolation(f"plan names {member_id!r}, who is not in the group")
        for topic, partition in plan[member_id]:
            if not 0 <= partition < partitions_per_topic.get(topic, 0):
                raise InvariantViolation(
                    f"member {member_id!r} got {topic}-{partition}, which does not exist"
                )
            if topic not in topics_of[member_id]:
                raise InvariantViolation(
                    f"member {member_id!r} got {topic}-{partition} without subscribing to {topic}"
                )
            other = owner.setdefault((topic, partition), member_id)
            if other != member_id:
                raise InvariantViolation(
                    f"{topic}-{partition} is assigned to both {other!r} and {member_id!r}"
                )


def check_completeness(
    partitions_per_topic: Mapping[str, int], members: Sequence[Member], plan: Plan
) -> None:
    assigned = {tp for tps in plan.values() for tp in tps}
    for topic in sorted({t for m in members for t in m.topics}):
        for partition in range(partitions_per_topic.get(topic, 0)):
            if (topic, partition) not in assigned:
                raise InvariantViolation(
                    f"{topic}-{partition} is subscribed to but assigned to nobody"
                )


def check_balance(
    partitions_per_topic: Mapping[str, int], members: Sequence[Member], plan: Plan
) -> None:
    load = {m.member_id: len(plan.get(m.member_id, ())) for m in members}
    least_loaded: dict[str, tuple[int, str]] = {}
    for m in members:
        for topic in m.topics:
            candidate = (load[m.member_id], m.member_id)
            if topic not in least_loaded or candidate < least_loaded[topic]:
                least_loaded[topic] = candidate
    for member_id in sorted(plan):
        for topic, partition in plan[member_id]:
            low, low_member = least_loaded.get(topic, (load.get(member_id, 0), member_id))
            if load.get(member_id, 0) > low + 1:
                raise InvariantViolation(
                    f"unbalanced: {member_id!r} holds {load[member_id]} partitions including "
                    f"{topic}-{partition}, while {low_member!r} subscribes to {topic} and "
                    f"holds {low}"
                )


def check_cooperative_contract(
    consuming: Mapping[str, set[TopicPartitionTuple]], plan: Plan
) -> None:
    owner = {tp: m for m, tps in consuming.items() for tp in tps}
    for member_id in sorted(plan):
        for tp in plan[member_id]:
            current = owner.get(tp)
            if current is not None and current != member_id:
                raise InvariantViolation(
                    f"{tp[0]}-{tp[1]} given to {member_id!r} while {current!r} still consumes it"
                )


def count_violations(checks: Sequence[Callable[[], None]], messages: list[str]) -> int:
    """Run each check; append each violation's message to ``messages``; return the count."""
    found = 0
    for check in checks:
        try:
            check()
        except InvariantViolation as exc:
            found += 1
            messages.append(str(exc))
    return found


def loads_by_topic(members: Sequence[Member], plan: Plan) -> dict[str, dict[str, int]]:
    """For each topic, the number of its partitions each subscriber holds."""
    per_topic: dict[str, dict[str, int]] = defaultdict(dict)
    for m in members:
        for topic in m.topics:
            per_topic[topic][m.member_id] = 0
    for member_id, tps in plan.items():
        for topic, _ in tps:
            if member_id in per_topic[topic]:
                per_topic[topic][member_id] += 1
    return per_topic
