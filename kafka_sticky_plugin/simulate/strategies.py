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
(:mod:`kafka_sticky_plugin.simulate.baselines`); and the broker's KIP-848 assignors
``kip848-uniform`` and ``kip848-range`` (:mod:`kafka_sticky_plugin.simulate.kip848_assignors`,
cross-checked against the broker's own classes), whose members run the consumer protocol
(``kip848``: the broker computes a target from the previous target, members reconcile one
by one, :mod:`kafka_sticky_plugin.simulate.reconcile`). Baselines (all but ours) have a
time cap, and only ours promise balance and stickiness.
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
from .kip848_assignors import KIP848_ASSIGNORS, BrokerGroup, BrokerMember, broker_assign

__all__ = [
    "BASELINE_PREFIX",
    "KIP848_PREFIX",
    "STRATEGY_NAMES",
    "Plan",
    "Strategy",
    "check_strategy_names",
    "get_strategy",
    "is_baseline",
    "is_cooperative",
    "is_kip848",
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
#: The broker's KIP-848 server-side assignors, named ``kip848-<broker name>``.
KIP848_PREFIX = "kip848-"

#: name -> whether its members run the COOPERATIVE protocol; ours come from the package's
#: one strategy registry (:mod:`kafka_sticky_plugin.assignor.strategies`).
_COOPERATIVE: dict[str, bool] = {
    **{name: strategy.cooperative for name, strategy in STRATEGIES.items()},
    **{BASELINE_PREFIX + kind: cooperative for kind, cooperative in _BASELINES.items()},
    # Consumer-protocol members keep what they own while others move: incremental, like
    # cooperative (what pairs them with our cooperative-sticky in the report).
    **{KIP848_PREFIX + name: True for name in KIP848_ASSIGNORS},
}

#: Every strategy name, ours first.
STRATEGY_NAMES = tuple(_COOPERATIVE)


@dataclass(frozen=True)
class Strategy:
    """A named assignment function and the protocol its members run (``kip848``: the
    consumer protocol, where the broker assigns and members reconcile without a barrier)."""

    name: str
    cooperative: bool
    baseline: bool
    assign: AssignFn
    kip848: bool = False


def is_cooperative(name: str) -> bool:
    """Whether the members of strategy ``name`` run the COOPERATIVE protocol (an unknown
    name: :func:`check_strategy_names`'s error)."""
    check_strategy_names([name])
    return _COOPERATIVE[name]


def is_baseline(name: str) -> bool:
    """Whether strategy ``name`` is someone else's assignor (kafka-python's, the broker's)."""
    return name.startswith((BASELINE_PREFIX, KIP848_PREFIX))


def is_kip848(name: str) -> bool:
    """Whether strategy ``name`` models the broker's KIP-848 assignor (consumer protocol)."""
    return name.startswith(KIP848_PREFIX)


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


def _kip848(assignor: str) -> AssignFn:
    """The broker's assignor: each member's ``owned`` is its current *target* (the simulator
    keeps it so for consumer-protocol members, see :mod:`.reconcile`); the time is the model's
    (Python), not the broker's."""

    def assign(
        partitions_per_topic: Mapping[str, int], members: Sequence[Member]
    ) -> tuple[Plan, float]:
        group = BrokerGroup(
            dict(partitions_per_topic),
            tuple(BrokerMember(m.member_id, m.topics, m.owned) for m in members),
        )
        start = time.perf_counter()
        plan = broker_assign(assignor, group)
        return plan, time.perf_counter() - start

    return assign


def get_strategy(name: str) -> Strategy:
    """The strategy called ``name`` (one of :data:`STRATEGY_NAMES`)."""
    cooperative = is_cooperative(name)
    if name in STRATEGIES:
        return Strategy(name, cooperative=cooperative, baseline=False, assign=_ours(name))
    if is_kip848(name):
        return Strategy(
            name,
            cooperative=cooperative,
            baseline=True,
            assign=_kip848(name.removeprefix(KIP848_PREFIX)),
            kip848=True,
        )
    from .baselines import kafka_python_assign_fn

    return Strategy(
        name,
        cooperative=cooperative,
        baseline=True,
        assign=kafka_python_assign_fn(name.removeprefix(BASELINE_PREFIX)),
    )
