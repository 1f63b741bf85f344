"""``sticky`` and ``cooperative-sticky`` shaped for aiokafka, over the client-free floor.

aiokafka's coordinator calls an assignor three ways, and each works here:

- ``metadata(topics)``: the JoinGroup metadata; bytes are sent as they are (consumer
  protocol v3: topics, owned partitions, generation, rack, Java's user data);
- ``assign(cluster, members)`` (leader): ``members`` maps member ids to aiokafka's *v0-only*
  decoded subscriptions (topics and user data; owned partitions, generation and rack are
  cut off by aiokafka's schema), so without the hooks the leader sees only what the user data
  carries; the result maps member ids to assignment bytes, which aiokafka sends untouched;
- ``on_assignment(assignment)``: aiokafka passes no generation, so without the hooks the
  member reports generation -1 (aiokafka#1176); the hooks pass it.

State is per instance (:class:`~kafka_sticky_plugin.assignor.member.MemberState`): two
consumers in one process never share it (aiokafka's own ``StickyPartitionAssignor`` keeps it on
the class, aiokafka#1175). :func:`kafka_sticky_plugin.aiokafka.install_hooks` turns a class
given in ``partition_assignment_strategy`` into one instance per consumer.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from ...assignor.contract import HookableAssignor
from ...assignor.leader import (
    COOPERATIVE_STICKY,
    STICKY,
    DecodedGroup,
    MemberMetadata,
    read_group,
)
from ...assignor.member import MemberState
from ...assignor.rebalance import RebalanceProtocol
from ...codec import Assignment, Subscription, decode_assignment
from ...errors import CodecError
from .cluster import partition_counts, replica_racks

__all__ = ["CooperativeStickyAssignor", "StickyAssignor", "to_subscription"]

Partition = tuple[str, int]


def to_subscription(metadata: Any) -> Subscription:
    """aiokafka's decoded ``ConsumerProtocolMemberMetadata`` (v0 fields only) as a
    :class:`Subscription`; anything without those fields raises :class:`CodecError`."""
    try:
        topics = tuple(str(t) for t in metadata.subscription)
        user_data = metadata.user_data
    except (AttributeError, TypeError, ValueError) as exc:
        raise CodecError("aiokafka subscription", "version, subscription, user_data", -1) from exc
    return Subscription(
        version=0,  # whatever the member sent, only v0's fields are left
        topics=topics,
        user_data=None if user_data is None else bytes(user_data),
    )


def assigned_pairs(assignment: Any) -> list[Partition]:
    """``(topic, partition)`` pairs of an assignment given as bytes, our
    :class:`Assignment`, or aiokafka's ``ConsumerProtocolMemberAssignment``."""
    if isinstance(assignment, (bytes, bytearray, memoryview)):
        return list(decode_assignment(bytes(assignment)).partitions)
    if isinstance(assignment, Assignment):
        return list(assignment.partitions)
    partitions = getattr(assignment, "partitions", None)
    if callable(partitions):
        return [(str(tp.topic), int(tp.partition)) for tp in partitions()]
    raise CodecError("assignment", "bytes or an aiokafka assignment", -1)


class _AioStickyFamily:
    """Both assignors (not for direct use): aiokafka's calls mapped onto the member state and
    the leader path of :mod:`kafka_sticky_plugin.assignor`."""

    name: str = ""

    def __init__(
        self,
        *,
        rack_id: str | None = None,
        rebalance_protocol: RebalanceProtocol | int | None = None,
    ) -> None:
        self._member = MemberState(
            self.name, rack_id=rack_id, rebalance_protocol=rebalance_protocol
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}(generation={self.generation}, rack_id={self.rack_id!r})"

    # -- member side -------------------------------------------------------------------
    def unshared_copy(self) -> Any:
        """A new instance with this one's configuration (rack, protocol) and no member state:
        what ``install_hooks`` gives each consumer configured with this instance."""
        twin = copy.copy(self)
        twin._member = MemberState(
            self.name, rack_id=self.rack_id, rebalance_protocol=self.rebalance_protocol
        )
        return twin

    def adopt_default_rack(self, rack_id: str) -> None:
        """Report ``rack_id`` (the consumer's ``client_rack``) unless one was given."""
        self._member.adopt_default_rack(rack_id)

    @property
    def rack_id(self) -> str | None:
        return self._member.rack_id

    @property
    def previous_assignment(self) -> tuple[Partition, ...]:
        """The partitions of the last :meth:`on_assignment`, sorted; empty after a loss."""
        return self._member.previous_assignment

    @property
    def generation(self) -> int | None:
        """The generation of the last :meth:`on_assignment`; ``None`` before or after a loss."""
        return self._member.generation

    @property
    def rebalance_protocol(self) -> RebalanceProtocol:
        return self._member.rebalance_protocol

    def supported_protocols(self) -> list[RebalanceProtocol]:
        """The strategy's protocols, preferred first (Java's ``supportedProtocols()``)."""
        return list(self._member.strategy.protocols)

    def use_rebalance_protocol(self, protocol: RebalanceProtocol | int) -> None:
        """Told by the hooks which protocol the consumer runs."""
        self._member.use_rebalance_protocol(protocol)

    def on_assignment(self, assignment: Any, generation: int | None = None) -> None:
        """Record the member's partitions and the generation (``None``/negative: unknown)."""
        self._member.record(assigned_pairs(assignment), generation)

    def on_partitions_lost(self) -> None:
        """Membership was lost: the next subscription claims nothing, generation -1."""
        self._member.forget()

    def subscription_bytes(
        self, topics: Iterable[str], owned: Iterable[Partition] | None = None
    ) -> bytes:
        """Consumer-protocol v3 JoinGroup metadata (pure; ``owned`` replaces the claim)."""
        return self._member.subscription_bytes(topics, owned)

    def metadata(self, topics: Iterable[str]) -> bytes:
        """aiokafka's hook: the JoinGroup metadata as bytes."""
        return self.subscription_bytes(topics)

    # -- leader side -------------------------------------------------------------------
    def read_members(self, members: Iterable[MemberMetadata]) -> DecodedGroup:
        """Every member read once (raw bytes of any version, or aiokafka's v0 objects)."""
        return read_group(self.name, members, convert=to_subscription)

    def assign(self, cluster: Any, members: Mapping[str, Any]) -> dict[str, bytes]:
        """aiokafka's leader hook (without the hooks): ``{member_id: assignment bytes}``
        from aiokafka's v0-decoded members; an unreadable member gets an empty assignment."""
        group = self.read_members(MemberMetadata(str(mid), meta) for mid, meta in members.items())
        counts = partition_counts(cluster, group.topics)
        return group.assign(counts, partition_racks=replica_racks(cluster, counts))


class StickyAssignor(_AioStickyFamily):
    """Java's ``sticky`` (KIP-54, KIP-341 generations), EAGER only, for aiokafka."""

    name = STICKY

    def __init__(self, *, rack_id: str | None = None) -> None:
        super().__init__(rack_id=rack_id)


class CooperativeStickyAssignor(_AioStickyFamily):
    """Java's ``cooperative-sticky`` (KIP-429) for aiokafka: COOPERATIVE with the hooks
    installed (or EAGER next to an EAGER-only assignor, the upgrade's first bounce).

    Without the hooks aiokafka runs every assignor eagerly; pass
    ``rebalance_protocol=RebalanceProtocol.EAGER`` then, so that a member claims nothing it
    has already revoked."""

    name = COOPERATIVE_STICKY

    def __init__(
        self,
        *,
        rack_id: str | None = None,
        rebalance_protocol: RebalanceProtocol | int = RebalanceProtocol.COOPERATIVE,
    ) -> None:
        super().__init__(rack_id=rack_id, rebalance_protocol=rebalance_protocol)


def _conforms(
    sticky: StickyAssignor, cooperative: CooperativeStickyAssignor
) -> tuple[HookableAssignor, HookableAssignor]:
    """Never called: mypy checks here that both assignors implement the hooks' contract."""
    return sticky, cooperative
