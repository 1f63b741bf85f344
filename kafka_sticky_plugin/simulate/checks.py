"""Which invariant checks the simulator runs after each round, and how it counts failures.

The checkers are the project's shared ones (:mod:`kafka_sticky_plugin.invariants`), fed
with what members reported (:class:`MemberSpec` built from each member's owned partitions
and generation). On top of them, :func:`check_consuming_contract` checks the cooperative
contract against the ground truth (who was actually consuming when the round started).

What is checked (a failure is counted as one violation each):

- every round of every strategy: validity;
- eager round: completeness; for our strategies also load balance and stickiness;
- cooperative round: the KIP-429 contract against claims and against the ground truth;
  after the last round, completeness, and for our strategies load balance.

Balance and stickiness are goals only our strategies promise: a baseline's imbalance is
reported through ``max_min_load`` and ``topic_spread`` rather than as a violation.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from functools import partial

from ..core import MemberSpec
from ..core.spec import TopicPartitionTuple
from ..errors import InvariantViolation
from ..invariants import (
    check_balanced,
    check_complete,
    check_cooperative,
    check_sticky,
    check_valid,
)
from .group import Member

__all__ = [
    "check_consuming_contract",
    "count_violations",
    "eager_checks",
    "final_cooperative_checks",
    "loads_by_topic",
    "round_cooperative_checks",
    "specs_of",
]

Plan = Mapping[str, Sequence[TopicPartitionTuple]]
Check = Callable[[], None]


def specs_of(members: Sequence[Member]) -> list[MemberSpec]:
    """What each member reported at its join, as the engine's typed spec."""
    return [
        MemberSpec(member_id=m.member_id, topics=m.topics, owned=m.owned, generation=m.generation)
        for m in members
    ]


def check_consuming_contract(consuming: Mapping[str, set[TopicPartitionTuple]], plan: Plan) -> None:
    """No member is given a partition another member was consuming when the round started."""
    owner = {tp: m for m, tps in consuming.items() for tp in tps}
    for member_id in sorted(plan):
        for tp in plan[member_id]:
            current = owner.get(tp)
            if current is not None and current != member_id:
                raise InvariantViolation(
                    f"{tp[0]}-{tp[1]} given to {member_id!r} while {current!r} still consumes it"
                )


def eager_checks(
    topics: Mapping[str, int], specs: Sequence[MemberSpec], plan: Plan, ours: bool
) -> list[Check]:
    checks: list[Check] = [
        partial(check_valid, topics, specs, plan),
        partial(check_complete, topics, specs, plan),
    ]
    if ours:
        checks += [
            partial(check_balanced, topics, specs, plan),
            partial(check_sticky, topics, specs, plan),
        ]
    return checks


def round_cooperative_checks(
    topics: Mapping[str, int],
    specs: Sequence[MemberSpec],
    plan: Plan,
    consuming: Mapping[str, set[TopicPartitionTuple]],
) -> list[Check]:
    return [
        partial(check_valid, topics, specs, plan),
        partial(check_cooperative, topics, specs, plan),
        partial(check_consuming_contract, consuming, plan),
    ]


def final_cooperative_checks(
    topics: Mapping[str, int], specs: Sequence[MemberSpec], plan: Plan, ours: bool
) -> list[Check]:
    checks: list[Check] = [partial(check_complete, topics, specs, plan)]
    if ours:
        checks.append(partial(check_balanced, topics, specs, plan))
    return checks


def count_violations(checks: Sequence[Check], messages: list[str]) -> int:
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
