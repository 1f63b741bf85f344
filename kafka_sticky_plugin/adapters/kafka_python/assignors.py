"""``sticky`` and ``cooperative-sticky`` for kafka-python, wire-compatible with Java and librdkafka.

Use them where kafka-python's built-in assignors go, as classes or as instances::

    KafkaConsumer(..., partition_assignment_strategy=[CooperativeStickyAssignor])
    KafkaConsumer(..., partition_assignment_strategy=[StickyAssignor(rack_id="eu-1a")])

What kafka-python 3.x's coordinator calls, and what each call does here:

- ``metadata(topics)`` returns the JoinGroup subscription as bytes (consumer protocol v3:
  sorted topics, owned partitions, generation, rack; see :meth:`subscription_bytes`).
- ``assign(cluster, members)`` (leader only) returns ``{member_id: bytes}``, which the
  coordinator's SyncGroup sends untouched. ``member.metadata`` may be raw bytes or
  kafka-python's decoded subscription; both go through this package's decoders.
- ``on_assignment(assignment, generation)`` records the member's partitions and generation.

State is per instance and is only what the member needs for its next subscription:
previous assignment, generation, rack, protocol. ``install_hooks`` gives each consumer its own
instance (an instance passed in is copied with :meth:`unshared_copy`), so two consumers in one
process never share that state; without the hooks, give each consumer its own instance.
After :meth:`on_partitions_lost` the next subscription claims nothing and reports
generation -1, until the next ``on_assignment``.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from kafka.coordinator.assignors.abstract import AbstractPartitionAssignor

from ...assignor.contract import HookableAssignor
from ...assignor.leader import (
    COOPERATIVE_STICKY,
    STICKY,
    DecodedGroup,
    MemberMetadata,
    PartitionRacks,
    assign_group,
    read_group,
)
from ...assignor.member import MemberState
from ...assignor.rebalance import RebalanceProtocol
from ...codec import Subscription
from ._cluster import replica_racks
from ._metadata import assigned_partitions, to_subscription

__all__ = ["CooperativeStickyAssignor", "StickyAssignor"]


class _StickyFamilyAssignor(AbstractPartitionAssignor):  # type: ignore[misc]
    """Both assignors: kafka-python's calls mapped onto the client-free member state
    (:class:`~kafka_sticky_plugin.assignor.member.MemberState`) and leader path (not for
    direct use)."""

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

    # -- member side -------------------------------------------------------------------

    def unshared_copy(self) -> Any:
        """A new instance with this one's configuration (rack, protocol) and no member state.

        ``install_hooks`` gives each consumer such a copy of an instance passed in, so two
        consumers configured with one instance never share a previous assignment.
        """
        twin = copy.copy(self)
        twin._member = self._member.fresh_copy()
        return twin

    def adopt_default_rack(self, rack_id: str) -> None:
        """Report ``rack_id`` (the consumer's ``client_rack``, set by ``install_hooks``) unless
        a rack was given to the constructor."""
        self._member.adopt_default_rack(rack_id)

    @property
    def rack_id(self) -> str | None:
        """The rack this member reports in subscription v3 (``None``: none)."""
        return self._member.rack_id

    @property
    def previous_assignment(self) -> tuple[tuple[str, int], ...]:
        """The partitions of the last ``on_assignment``, sorted; empty after a loss."""
        return self._member.previous_assignment

    @property
    def generation(self) -> int | None:
        """The generation of the last ``on_assignment``; ``None`` before one or after a loss."""
        return self._member.generation

    def supported_protocols(self) -> list[RebalanceProtocol]:
        """The strategy's protocols, preferred first, as Java's ``supportedProtocols()``."""
        return list(self._member.strategy.protocols)

    def on_assignment(self, assignment: Any, generation: int | None = None) -> None:
        """Record this member's new assignment and the generation it belongs to.

        ``assignment`` may be kafka-python's ``ConsumerProtocolAssignment`` (2.x or 3.x),
        the raw assignment bytes, or a :class:`~kafka_sticky_plugin.codec.Assignment`.
        A missing or negative ``generation`` is recorded as ``None``.
        """
        self._member.record(assigned_partitions(assignment), generation)

    def on_partitions_lost(self) -> None:
        """Forget the assignment and generation: membership was fenced or expired.

        Called by the coordinator hooks when kafka-python reports lost partitions; the next
        subscription then claims no partitions and reports generation -1.
        """
        self._member.forget()

    def subscription(
        self, topics: Iterable[str], owned: Iterable[tuple[str, int]] | None = None
    ) -> Subscription:
        """The subscription this member sends now (pure: reads state, changes nothing).

        ``owned``, when given, replaces the partitions claimed from this assignor's memory
        (the coordinator hooks pass the consumer's current assignment under COOPERATIVE, as
        Java does)."""
        return self._member.subscription(topics, owned)

    def subscription_bytes(
        self, topics: Iterable[str], owned: Iterable[tuple[str, int]] | None = None
    ) -> bytes:
        """The JoinGroup metadata this member sends now, as consumer-protocol v3 bytes.

        Stable API for the coordinator hooks of every kafka-python version: sorted topics,
        the owned partitions and generation recorded by :meth:`on_assignment` (none and -1
        after :meth:`on_partitions_lost`), the rack, and the assignor's user data in
        Java's format. ``owned`` replaces the claimed partitions (see :meth:`subscription`).
        Pure: calling it twice gives the same bytes.
        """
        return self._member.subscription_bytes(topics, owned)

    def metadata(self, topics: Iterable[str]) -> bytes:
        """kafka-python's hook: the JoinGroup metadata (see :meth:`subscription_bytes`)."""
        return self.subscription_bytes(topics)

    # -- leader side -------------------------------------------------------------------

    def assign_from_bytes(
        self,
        partitions_per_topic: Mapping[str, int],
        member_metadata: Mapping[str, bytes],
        cluster_racks: PartitionRacks | None = None,
        *,
        instance_ids: Mapping[str, str | None] | None = None,
    ) -> dict[str, bytes]:
        """The leader's whole path on raw bytes: ``{member_id: assignment bytes}``.

        Stable API for the hooks of kafka-python versions whose coordinator decodes only
        subscription v0. ``partitions_per_topic`` lists existing topics and their partition
        counts (other topics are ignored); ``member_metadata`` maps each member id to its
        JoinGroup metadata bytes; ``cluster_racks`` maps ``(topic, partition)`` to replica
        racks (rack-aware assignment, passed to the engine when given); ``instance_ids``
        gives static members' ``group.instance.id``. Every member id gets an entry; one
        whose metadata cannot be decoded gets an empty assignment and one error log line.
        """
        ids = instance_ids or {}
        return assign_group(
            self.name,
            partitions_per_topic,
            [MemberMetadata(mid, data, ids.get(mid)) for mid, data in member_metadata.items()],
            partition_racks=cluster_racks,
        )

    def read_members(self, members: Iterable[MemberMetadata]) -> DecodedGroup:
        """Read every JoinGroup member once: the group's topics and the engine's input.

        Stable API for the coordinator hooks: they ask the cluster about ``.topics``, then
        call ``.assign(partitions_per_topic, partition_racks=...)``. Metadata may be raw
        bytes, a :class:`Subscription` or a kafka-python subscription object; a member whose
        metadata cannot be read is named in one error log line and later gets an empty
        assignment.
        """
        return read_group(self.name, members, convert=to_subscription)

    def assign(self, cluster: Any, members: Iterable[Any]) -> dict[str, bytes]:
        """kafka-python's leader hook: ``{member_id: assignment bytes}`` for SyncGroup.

        ``members`` are kafka-python's JoinGroup members (``member_id``, ``metadata`` as
        bytes or a decoded subscription, optional ``group_instance_id``); each is read once
        (an unreadable one gets an empty assignment and one error log line); partition counts
        come from ``cluster.partitions_for_topic``; topics the cluster does not know are
        ignored; replica racks (KIP-881) come from the cluster's brokers and partitions when
        the brokers report racks.
        """
        group = self.read_members(
            MemberMetadata(
                str(member.member_id),
                member.metadata,
                getattr(member, "group_instance_id", None) or None,
            )
            for member in members
        )
        partitions_per_topic: dict[str, int] = {}
        for topic in sorted(group.topics):
            partitions = cluster.partitions_for_topic(topic)
            if partitions:
                partitions_per_topic[topic] = len(partitions)
        return group.assign(
            partitions_per_topic,
            partition_racks=replica_racks(cluster, partitions_per_topic),
        )


class StickyAssignor(_StickyFamilyAssignor):
    """Java's ``sticky`` (KIP-54 with KIP-341 generations), EAGER protocol only.

    User data: the previous assignment and generation in Java's sticky v1 format (v0 when
    there is no generation, null when there is no previous assignment), which Java's and
    librdkafka's sticky leaders read. The subscription (v3) also carries the same owned
    partitions and generation.
    """

    name = STICKY

    def __init__(self, *, rack_id: str | None = None) -> None:
        super().__init__(rack_id=rack_id)


class CooperativeStickyAssignor(_StickyFamilyAssignor):
    """Java's ``cooperative-sticky`` (KIP-429), COOPERATIVE or EAGER protocol.

    User data: the int32 generation (Java's format, for leaders that only read subscription
    v1); the subscription (v3) carries owned partitions and the generation (KIP-792).

    Under the EAGER protocol (``[range, cooperative-sticky]``, the first bounce of the KIP-429
    upgrade) a member has revoked everything before it joins, so it must claim nothing. The
    assignor cannot see its coordinator: the coordinator hooks tell it the chosen protocol
    (:meth:`use_rebalance_protocol`); without them pass ``rebalance_protocol=EAGER`` when it
    is configured next to an EAGER-only assignor. The default is COOPERATIVE, which is what
    kafka-python picks when this is the only configured assignor.
    """

    name = COOPERATIVE_STICKY

    def __init__(
        self,
        *,
        rack_id: str | None = None,
        rebalance_protocol: RebalanceProtocol | int = RebalanceProtocol.COOPERATIVE,
    ) -> None:
        super().__init__(rack_id=rack_id, rebalance_protocol=rebalance_protocol)

    @property
    def rebalance_protocol(self) -> RebalanceProtocol:
        """The protocol the consumer runs; decides whether owned partitions are claimed."""
        return self._member.rebalance_protocol

    def use_rebalance_protocol(self, protocol: RebalanceProtocol | int) -> None:
        """Tell the assignor which protocol its consumer's coordinator runs."""
        self._member.use_rebalance_protocol(protocol)


def _conforms(
    sticky: StickyAssignor, cooperative: CooperativeStickyAssignor
) -> tuple[HookableAssignor, HookableAssignor]:
    """Never called: mypy checks here that both assignors implement the hooks' contract."""
    return sticky, cooperative
