"""The plugin's assignment strategies, by name: one registry for every caller.

A strategy is what a group's selected protocol name means to this package, defined once here:
the name on the wire (JoinGroup protocol name, Java's ``assignor.name()``), the rebalance
protocol its members run when every assignor of the group supports it (``sticky``: EAGER only;
``cooperative-sticky``: COOPERATIVE, or EAGER next to an EAGER-only assignor), the engine
function the leader runs, its user data in Java's format (what a member writes, what a leader
reads back as a claim) and the name of the assignor class every adapter exports for it. The
adapters' assignors, the leader path, the simulator, the demo, the test harness and the CLI
look strategies up here instead of comparing strings.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..codec import (
    encode_cooperative_user_data,
    encode_sticky_user_data,
    read_user_data_claim,
)
from ..core import MemberSpec, cooperative_assign, sticky_assign
from ..core.api import DensePlan, make_dense_plan
from ..core.spec import TopicPartitionTuple
from ..errors import ConfigurationError
from .rebalance import RebalanceProtocol

__all__ = [
    "COOPERATIVE_STICKY",
    "STICKY",
    "STRATEGIES",
    "Engine",
    "Strategy",
    "UserDataWriter",
    "strategy_named",
]

#: ``engine(partitions_per_topic, members, partition_racks=...) -> {member_id: partitions}``
Engine = Callable[..., dict[str, list[TopicPartitionTuple]]]

#: ``write(previous assignment (sorted), generation or None) -> user data bytes or None``
UserDataWriter = Callable[[Sequence[TopicPartitionTuple], int | None], bytes | None]

STICKY = "sticky"
COOPERATIVE_STICKY = "cooperative-sticky"


@dataclass(frozen=True)
class Strategy:
    """One of the plugin's strategies (see the module docstring).

    ``protocols`` lists the rebalance protocols its members support, preferred first (the
    order of Java's ``supportedProtocols()``); ``cooperative`` is true when the preferred one
    is COOPERATIVE, that is when its leader withholds partitions that change owner.
    ``write_user_data`` is what its members put in the subscription's user data (Java's
    format); :meth:`read_claim` is how its leader reads a claim back from any member's user
    data. ``class_name`` is the assignor class every adapter exports for it.
    """

    name: str
    protocols: tuple[RebalanceProtocol, ...]
    engine: Engine
    write_user_data: UserDataWriter
    class_name: str

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

    def assign_dense(
        self,
        partitions_per_topic: Mapping[str, int],
        members: Sequence[MemberSpec],
        partition_racks: Mapping[TopicPartitionTuple, Iterable[str]] | None = None,
    ) -> DensePlan:
        """:meth:`assign`'s plan before its conversion to tuples (member by member; the
        engine's :func:`~kafka_sticky_plugin.core.api.make_dense_plan`, cooperative as the
        strategy is)."""
        return make_dense_plan(
            partitions_per_topic,
            members,
            cooperative=self.cooperative,
            partition_racks=partition_racks,
        )

    def read_claim(self, user_data: bytes | None) -> tuple[tuple[TopicPartitionTuple, ...], int]:
        """``(previous partitions in wire order, generation or -1)`` claimed by a member's
        user data under this strategy (:func:`~kafka_sticky_plugin.codec.read_user_data_claim`,
        the pairs of the claim the wire seam reads with each subscription; 4 bytes are a
        generation only under a cooperative strategy). Raises ``CodecError`` when unreadable."""
        return read_user_data_claim(user_data, cooperative=self.cooperative)


def _sticky_user_data(
    previous: Sequence[TopicPartitionTuple], generation: int | None
) -> bytes | None:
    """Java's sticky user data: v1 (generation -1 when unknown, as Java and librdkafka write
    it), null with no history."""
    if not previous and generation is None:
        return None
    return encode_sticky_user_data(previous, generation)


def _cooperative_user_data(
    previous: Sequence[TopicPartitionTuple], generation: int | None
) -> bytes | None:
    """Java's cooperative-sticky user data: the int32 generation only (owned partitions
    travel in the subscription)."""
    return encode_cooperative_user_data(generation)


STRATEGIES: Mapping[str, Strategy] = {
    STICKY: Strategy(
        STICKY,
        (RebalanceProtocol.EAGER,),
        sticky_assign,
        write_user_data=_sticky_user_data,
        class_name="StickyAssignor",
    ),
    COOPERATIVE_STICKY: Strategy(
        COOPERATIVE_STICKY,
        (RebalanceProtocol.COOPERATIVE, RebalanceProtocol.EAGER),
        cooperative_assign,
        write_user_data=_cooperative_user_data,
        class_name="CooperativeStickyAssignor",
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
