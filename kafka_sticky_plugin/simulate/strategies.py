"""The strategies a simulation compares, by name.

A strategy is the leader's side of one rebalance round: given the topics and what each
member reported, return the partitions each member gets this round, and the leader's compute
time (decoding what members reported plus the assignment; never the simulator's own work).
``cooperative`` says which protocol the members run: eager (everyone revokes everything, one
round) or cooperative (KIP-429: members keep what they own, rounds repeat until nothing is revoked).

Ours: ``sticky`` and ``cooperative-sticky`` (the package's strategy registry), costed through
the same leader path as a real group (:func:`kafka_sticky_plugin.assignor.assign_group`:
subscription bytes in, assignment bytes out), so the compute column compares like with like
with the baselines, whose ``assign()`` also decodes what members sent. Baselines:
kafka-python's own ``range``, ``roundrobin``, ``sticky`` and ``cooperative-sticky``
assignors, driven through their real ``assign(cluster, members)``
(:mod:`kafka_sticky_plugin.simulate.baselines`); they are the only ones with a time cap.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..assignor import STRATEGIES, MemberMetadata, assign_group
from ..assignor.member import MemberState
from ..codec import decode_assignment
from ..core.spec import TopicPartitionTuple
from ..errors import ConfigurationError
from .group import Member

__all__ = [
    "BASELINE_PREFIX",
    "STRATEGY_NAMES",
    "Plan",
    "Strategy",
    "check_strategy_names",
    "get_strategy",
    "is_baseline",
    "is_cooperative",
    "ours_counterpart",
]

Plan = dict[str, list[TopicPartitionTuple]]
#: ``assign(partitions_per_topic, members) -> (plan, leader compute seconds)``
AssignFn = Callable[[Mapping[str, int], Sequence[Member]], tuple[Plan, float]]

#: kafka-python's own assignors (baselines), by kind, and whether their members run the
#: COOPERATIVE protocol. A baseline is named ``kafka-python-<kind>`` everywhere (grid files,
#: ``--strategies``, reports, the test harness's assignor names).
_BASELINES = {"range": False, "roundrobin": False, "sticky": False, "cooperative-sticky": True}
BASELINE_PREFIX = "kafka-python-"

#: name -> whether its members run the COOPERATIVE protocol; ours come from the package's
#: one strategy registry (:mod:`kafka_sticky_plugin.assignor.strategies`).
_COOPERATIVE: dict[str, bool] = {
    **{name: strategy.cooperative for name, strategy in STRATEGIES.items()},
    **{BASELINE_PREFIX + kind: cooperative for kind, cooperative in _BASELINES.items()},
}

#: Every strategy name, ours first.
STRATEGY_NAMES = tuple(_COOPERATIVE)


@dataclass(frozen=True)
class Strategy:
    """A named leader-side assignment function and the protocol its members run."""

    name: str
    cooperative: bool
    baseline: bool
    assign: AssignFn


def is_cooperative(name: str) -> bool:
    """Whether the members of strategy ``name`` run the COOPERATIVE protocol."""
    try:
        return _COOPERATIVE[name]
    except KeyError:
        raise ConfigurationError(
            f"unknown strategy {name!r}; expected one of {STRATEGY_NAMES}"
        ) from None


def is_baseline(name: str) -> bool:
    """Whether strategy ``name`` is one of kafka-python's own assignors (not ours)."""
    return name.startswith(BASELINE_PREFIX)


def check_strategy_names(names: Iterable[str]) -> None:
    """Raise :class:`ConfigurationError` naming the unknown ones among ``names``, with a hint
    for the ``kafka-python:<kind>`` spelling an older test harness used."""
    unknown = sorted(set(names) - set(STRATEGY_NAMES))
    if not unknown:
        return
    hint = ""
    if any(name.startswith("kafka-python:") for name in unknown):
        hint = " (kafka-python's own assignors are spelled kafka-python-<kind>, e.g. "
        hint += "kafka-python-sticky)"
    raise ConfigurationError(f"unknown strategies {unknown}; known: {list(STRATEGY_NAMES)}{hint}")


def ours_counterpart(name: str) -> str:
    """Our strategy whose members run the same protocol as ``name``'s (what a baseline is
    compared with)."""
    cooperative = is_cooperative(name)
    return next(ours for ours, s in STRATEGIES.items() if s.cooperative == cooperative)


def _ours(name: str) -> AssignFn:
    """The leader path a real group runs: every member sends the subscription bytes of its
    assignor state (built outside the timed part, as members do), the leader decodes them,
    plans and encodes (timed), and every member reads its assignment (outside again)."""

    def assign(
        partitions_per_topic: Mapping[str, int], members: Sequence[Member]
    ) -> tuple[Plan, float]:
        joined: list[MemberMetadata] = []
        for member in members:
            state = MemberState(name)
            state.record(member.owned, member.generation)
            joined.append(MemberMetadata(member.member_id, state.subscription_bytes(member.topics)))
        start = time.perf_counter()
        encoded = assign_group(name, partitions_per_topic, joined)
        elapsed = time.perf_counter() - start
        plan = {m: list(decode_assignment(data).partitions) for m, data in encoded.items()}
        return plan, elapsed

    return assign


def get_strategy(name: str) -> Strategy:
    """The strategy called ``name`` (one of :data:`STRATEGY_NAMES`)."""
    cooperative = is_cooperative(name)
    if name in STRATEGIES:
        return Strategy(name, cooperative=cooperative, baseline=False, assign=_ours(name))
    from .baselines import kafka_python_assign_fn

    return Strategy(
        name,
        cooperative=cooperative,
        baseline=True,
        assign=kafka_python_assign_fn(name.removeprefix(BASELINE_PREFIX)),
    )
