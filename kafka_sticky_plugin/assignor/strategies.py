"""The plugin's assignment strategies, by name: one registry for every caller.

A strategy is what a group's selected protocol name means to this package: the name on the
wire (JoinGroup protocol name, Java's ``assignor.name()``), the rebalance protocol its members
run when every assignor of the group supports it (``sticky``: EAGER only;
``cooperative-sticky``: COOPERATIVE, or EAGER next to an EAGER-only assignor), and the engine
function the leader runs. The kafka-python assignors, the leader path, the simulator, the demo,
the test harness and the CLI look strategies up here instead of comparing strings.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..core import MemberSpec, cooperative_assign, sticky_assign
from ..core.spec import TopicPartitionTuple
from ..errors import ConfigurationError
from .rebalance import RebalanceProtocol

__all__ = [
    "COOPERATIVE_STICKY",
    "STICKY",
    "STRATEGIES",
    "Engine",
    "Strategy",
    "strategy_named",
]

#: ``engine(partitions_per_topic, members, partition_racks=...) -> {member_id: partitions}``
Engine = Callable[..., dict[str, list[TopicPartitionTuple]]]

STICKY = "sticky"
COOPERATIVE_STICKY = "cooperative-sticky"


@dataclass(frozen=True)
class Strategy:
    """One of the plugin's strategies (see the module docstring).

    ``protocols`` lists the rebalance protocols its members support, preferred first (the
    order of Java's ``supportedProtocols()``); ``cooperative`` is true when the preferred one
    is COOPERATIVE, that is when its leader withholds partitions that change owner.
    """

    name: str
    protocols: tuple[RebalanceProtocol, ...]
    engine: Engine

    @property
    def cooperative(self) -> bool:
        return self.protocols[0] is RebalanceProtocol.COOPERATIVE

    def assign(
        self,
        partitions_per_topic: Mapping[str, int],
        members: Sequence[MemberSpec],
        partition_racks: Mapping[TopicPartitionTuple, Iterable[str]] | None = None,
    ) -> dict[str, list[TopicPartitionTuple]]:
        """The engine's plan for typed members (no bytes)."""
        return self.engine(partitions_per_topic, members, partition_racks=partition_racks)


STRATEGIES: Mapping[str, Strategy] = {
    STICKY: Strategy(STICKY, (RebalanceProtocol.EAGER,), sticky_assign),
    COOPERATIVE_STICKY: Strategy(
        COOPERATIVE_STICKY,
        (RebalanceProtocol.COOPERATIVE, RebalanceProtocol.EAGER),
        cooperative_assign,
    ),
}


def strategy_named(name: str) -> Strategy:
    """The strategy called ``name``; :class:`ConfigurationError` names the known ones."""
    try:
        return STRATEGIES[name]
    except KeyError:
        raise ConfigurationError(
            f"unknown strategy {name!r}; this package's strategies are {sorted(STRATEGIES)}"
        ) from None
