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

State is per instance (two consumers in one process never share it) and is only what the
member needs for its next subscription: previous assignment, generation, rack, protocol.
After :meth:`on_partitions_lost` the next subscription claims nothing and reports
generation -1, until the next ``on_assignment``.
"""

from __future__ import annotations

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
from ...assignor.rebalance import RebalanceProtocol
from ...codec import (
    CONSUMER_PROTOCOL_LATEST_VERSION,
    Subscription,
    encode_cooperative_user_data,
    encode_sticky_user_data,
    encode_subscription,
)
from ...errors import ConfigurationError
from ._cluster import replica_racks
from ._metadata import assigned_partitions, to_subscription

__all__ = ["CooperativeStickyAssignor", "StickyAssignor"]


class _StickyFamilyAssignor(AbstractPartitionAssignor):  # type: ignore[misc]
    """Shared member state and leader path of both assignors (not for direct use)."""

    name: str = ""

    def __init__(self, *, rack_id: str | None = None) -> None:
        if rack_id is not None and not isinstance(rack_id, str):
            raise ConfigurationError(f"rack_id must be a str or None, got {rack_id!r}")
        self._rack_id = rack_id
        self._previous: tuple[tuple[str, int], ...] = ()
        self._generation: int | None = None

    # -- member side -------------------------------------------------------------------

    def adopt_default_rack(self, rack_id: str) -> None:
        """Report ``rack_id`` (the consumer's ``client_rack``, set by ``install_hooks``) unless
        a rack was given to the constructor."""
        if self._rack_id is None and rack_id:
            self._rack_id = rack_id

    @property
    def rack_id(self) -> str | None:
        """The rack this member reports in subscription v3 (``None``: none)."""
        return self._rack_id

    @property
    def previous_assignment(self) -> tuple[tuple[str, int], ...]:
        """The partitions of the last ``on_assignment``, sorted; empty after a loss."""
        return self._previous

    @property
    def generation(self) -> int | None:
        """The generation of the last ``on_assignment``; ``None`` before one or after a loss."""
        return self._generation

    def on_assignment(self, assignment: Any, generation: int | None = None) -> None:
        """Record this member's new assignment and the generation it belongs to.

        ``assignment`` may be kafka-python's ``ConsumerProtocolAssignment`` (2.x or 3.x),
        the raw assignment bytes, or a :class:`~kafka_sticky_plugin.codec.Assignment`.
        A missing or negative ``generation`` is recorded as ``None``.
        """
        self._previous = tuple(sorted(set(assigned_partitions(assignment))))
        if isinstance(generation, bool) or not isinstance(generation, int) or generation < 0:
            self._generation = None
        else:
            self._generation = generation

    def on_partitions_lost(self) -> None:
        """Forget the assignment and generation: membership was fenced or expired.

        Called by the coordinator hooks when kafka-python reports lost partitions; the next
        subscription then claims no partitions and reports generation -1.
        """
        self._previous = ()
        self._generation = None

    def _user_data(self) -> bytes | None:
        raise NotImplementedError

    def _claimed_partitions(self) -> tuple[tuple[str, int], ...]:
        return self._previous

    def subscription(
        self, topics: Iterable[str], owned: Iterable[tuple[str, int]] | None = None
    ) -> Subscription:
        """The subscription this member sends now (pure: reads state, changes nothing).

        ``owned``, when given, replaces the partitions claimed from this assignor's memory
        (the coordinator hooks pass the consumer's current assignment under COOPERATIVE, as
        Java does)."""
        claimed = self._claimed_partitions() if owned is None else tuple(sorted(set(owned)))
        return Subscription(
            version=CONSUMER_PROTOCOL_LATEST_VERSION,
            topics=tuple(sorted(set(topics))),
            user_data=self._user_data(),
            owned_partitions=claimed,
            generation_id=-1 if self._generation is None else self._generation,
            rack_id=self._rack_id,
        )

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
        return encode_subscription(self.subscription(topics, owned))

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
    """Java's ``sticky`` (KIP-54 with KIP-341 generations), EAGER protocol.

    User data: the previous assignment and generation in Java's sticky v1 format (v0 when
    there is no generation, null when there is no previous assignment), which Java's and
    librdkafka's sticky leaders read. The subscription (v3) also carries the same owned
    partitions and generation.
    """

    name = STICKY

    def supported_protocols(self) -> list[RebalanceProtocol]:
        """EAGER only, as Java's ``StickyAssignor``."""
        return [RebalanceProtocol.EAGER]

    def _user_data(self) -> bytes | None:
        if not self._previous and self._generation is None:
            return None
        return encode_sticky_user_data(self._previous, self._generation)


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
        super().__init__(rack_id=rack_id)
        self._protocol = RebalanceProtocol.COOPERATIVE
        self.use_rebalance_protocol(rebalance_protocol)

    def supported_protocols(self) -> list[RebalanceProtocol]:
        """COOPERATIVE first, then EAGER, as Java's ``CooperativeStickyAssignor``."""
        return [RebalanceProtocol.COOPERATIVE, RebalanceProtocol.EAGER]

    @property
    def rebalance_protocol(self) -> RebalanceProtocol:
        """The protocol the consumer runs; decides whether owned partitions are claimed."""
        return self._protocol

    def use_rebalance_protocol(self, protocol: RebalanceProtocol | int) -> None:
        """Tell the assignor which protocol its consumer's coordinator runs."""
        try:
            self._protocol = RebalanceProtocol(protocol)
        except ValueError:
            raise ConfigurationError(f"unknown rebalance protocol {protocol!r}") from None

    def _claimed_partitions(self) -> tuple[tuple[str, int], ...]:
        if self._protocol == RebalanceProtocol.EAGER:
            return ()
        return self._previous

    def _user_data(self) -> bytes | None:
        return encode_cooperative_user_data(self._generation)


def _conforms(
    sticky: StickyAssignor, cooperative: CooperativeStickyAssignor
) -> tuple[HookableAssignor, HookableAssignor]:
    """Never called: mypy checks here that both assignors implement the hooks' contract."""
    return sticky, cooperative
