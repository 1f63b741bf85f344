"""The strategies a simulation compares, by name.

A strategy is the leader's side of one rebalance round: given the topics and what each
member reported, return the partitions each member gets this round, and the leader's compute
time (decoding what members reported plus the assignment; never the simulator's own work).
``cooperative`` says which protocol the members run: eager (everyone revokes everything, one
round) or cooperative (KIP-429: members keep what they own, rounds repeat until nothing is revoked).

Ours: ``sticky`` and ``cooperative-sticky`` (:mod:`kafka_sticky_plugin.core`). Baselines:
kafka-python's own ``range``, ``roundrobin``, ``sticky`` and ``cooperative-sticky``
assignors, driven through their real ``assign(cluster, members)``
(:mod:`kafka_sticky_plugin.simulate.baselines`); they are the only ones with a time cap.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ..core import MemberSpec, cooperative_assign, sticky_assign
from ..core.spec import TopicPartitionTuple
from ..errors import ConfigurationError
from .group import Member

__all__ = ["STRATEGY_NAMES", "Plan", "Strategy", "get_strategy"]

Plan = dict[str, list[TopicPartitionTuple]]
#: ``assign(partitions_per_topic, members) -> (plan, leader compute seconds)``
AssignFn = Callable[[Mapping[str, int], Sequence[Member]], tuple[Plan, float]]

#: Every strategy name, ours first.
STRATEGY_NAMES = (
    "sticky",
    "cooperative-sticky",
    "kafka-python-range",
    "kafka-python-roundrobin",
    "kafka-python-sticky",
    "kafka-python-cooperative-sticky",
)


@dataclass(frozen=True)
class Strategy:
    """A named leader-side assignment function and the protocol its members run."""

    name: str
    cooperative: bool
    baseline: bool
    assign: AssignFn


def _specs(members: Sequence[Member]) -> list[MemberSpec]:
    return [
        MemberSpec(member_id=m.member_id, topics=m.topics, owned=m.owned, generation=m.generation)
        for m in members
    ]


def _ours_eager(
    partitions_per_topic: Mapping[str, int], members: Sequence[Member]
) -> tuple[Plan, float]:
    start = time.perf_counter()
    plan = sticky_assign(partitions_per_topic, _specs(members))
    return plan, time.perf_counter() - start


def _ours_cooperative(
    partitions_per_topic: Mapping[str, int], members: Sequence[Member]
) -> tuple[Plan, float]:
    start = time.perf_counter()
    plan = cooperative_assign(partitions_per_topic, _specs(members))
    return plan, time.perf_counter() - start


def get_strategy(name: str) -> Strategy:
    """The strategy called ``name`` (one of :data:`STRATEGY_NAMES`)."""
    if name == "sticky":
        return Strategy(name, cooperative=False, baseline=False, assign=_ours_eager)
    if name == "cooperative-sticky":
        return Strategy(name, cooperative=True, baseline=False, assign=_ours_cooperative)
    if name.startswith("kafka-python-") and name in STRATEGY_NAMES:
        from .baselines import kafka_python_assign_fn

        kind = name.removeprefix("kafka-python-")
        return Strategy(
            name,
            cooperative=kind == "cooperative-sticky",
            baseline=True,
            assign=kafka_python_assign_fn(kind),
        )
    raise ConfigurationError(f"unknown strategy {name!r}; expected one of {STRATEGY_NAMES}")
