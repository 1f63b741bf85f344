"""The assignor shell every client adapter's assignor class is a thin subclass of.

Client-free (no client import, no I/O): the member and leader calls the adapters' assignors
share, over :class:`~kafka_sticky_plugin.assignor.member.MemberState` (member side) and
:func:`~kafka_sticky_plugin.assignor.leader.read_group` (leader side). A subclass supplies
only what its client's shape demands:

- ``name`` (a strategy of :mod:`.strategies`);
- ``_assigned_pairs(assignment)``: the client's assignment object as ``(topic, partition)``
  pairs (bytes and :class:`~kafka_sticky_plugin.codec.Assignment` included);
- ``_to_subscription(metadata)``: the client's decoded member metadata as a
  :class:`~kafka_sticky_plugin.codec.Subscription`;
- ``assign(cluster, members)`` in the client's signature, built on :meth:`assign_cluster`.

Two paths (issue 22). With the coordinator hooks the caller owns the member's join state and
passes it to :meth:`AssignorShell.join_metadata`: the instance holds no member state then and
may serve several consumers. On the plain path (the client calls ``metadata``/
``on_assignment`` itself, no hooks) the instance is one member's memory (issue 24): a member
always sends ``metadata`` before each ``on_assignment``; two ``on_assignment`` calls without
a ``metadata`` between them mean two consumers share this instance, whose claims would then
mix and could give one partition two owners. The shell refuses that at once with
:class:`~kafka_sticky_plugin.errors.ConfigurationError`, and keeps refusing on every later
call (the instance's memory can no longer be trusted).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..codec import Subscription, encode_subscription
from ..core.gc_pause import cyclic_gc_paused
from ..errors import ConfigurationError
from .contract import HookableAssignor
from .leader import DecodedGroup, MemberMetadata, PartitionRacks, assign_group, read_group
from .member import JoinState, MemberState, checked_protocol, member_subscription
from .racks import partition_counts, replica_racks
from .rebalance import RebalanceProtocol

__all__ = ["AssignorShell", "Partition"]

Partition = tuple[str, int]


class AssignorShell:
    """Both strategies' member and leader calls for any client (see the module docstring)."""

    name: str = ""

    def __init__(
        self,
        *,
        rack_id: str | None = None,
        rebalance_protocol: RebalanceProtocol | int | None = None,
    ) -> None:
        """``rack_id``: the rack reported in subscription v3 (``None``: the consumer's
        ``client_rack`` when the hooks are installed, else none); ``rebalance_protocol``: the
        protocol the consumer runs (``None``: the strategy's preferred one; one the strategy
        does not support raises :class:`ConfigurationError`)."""
        self._member = MemberState(
            self.name, rack_id=rack_id, rebalance_protocol=rebalance_protocol
        )
        self._plain_join_pending: bool | None = None  # None: the plain path never ran
        self._shared = False

    def __repr__(self) -> str:
        return f"{type(self).__name__}(generation={self.generation}, rack_id={self.rack_id!r})"

    # -- what a subclass supplies --------------------------------------------------------
    @staticmethod
    def _assigned_pairs(assignment: Any) -> Iterable[Partition]:
        raise NotImplementedError  # pragma: no cover - every adapter overrides it

    @staticmethod
    def _to_subscription(metadata: Any) -> Subscription:
        raise NotImplementedError  # pragma: no cover - every adapter overrides it

    # -- member side: the hooks' call (the caller owns the join state) --------------------
    def join_metadata(
        self,
        topics: Iterable[str],
        joined: JoinState,
        *,
        protocol: RebalanceProtocol | int,
        owned: Iterable[Partition] | None = None,
        default_rack: str | None = None,
    ) -> bytes:
        """The JoinGroup metadata (consumer-protocol v3 bytes) of a member whose last join is
        ``joined``, in a group running ``protocol``. Stable API for the coordinator hooks.

        Pure: reads no member state of this instance and changes none (the caller owns the
        join state, as franz-go's balancers are given ``currentAssignment`` and
        ``generation``), so one instance can serve any number of hooked consumers. ``owned``
        replaces the claimed partitions (the hooks pass the consumer's current assignment
        under COOPERATIVE); ``default_rack`` (the consumer's ``client_rack``) is reported
        unless this assignor was given a ``rack_id``. See
        :func:`~kafka_sticky_plugin.assignor.member.member_subscription`.
        """
        strategy = self._member.strategy
        return encode_subscription(
            member_subscription(
                strategy,
                topics,
                joined,
                protocol=checked_protocol(strategy, protocol),
                rack_id=self.rack_id or default_rack or None,
                owned=owned,
            )
        )

    # -- member side: the plain path (the assignor keeps the join state) ------------------
    @property
    def rack_id(self) -> str | None:
        """The rack this member reports in subscription v3 (``None``: none)."""
        return self._member.rack_id

    @property
    def previous_assignment(self) -> tuple[Partition, ...]:
        """The partitions of the last :meth:`on_assignment`, sorted; empty after a loss."""
        return self._member.previous_assignment

    @property
    def generation(self) -> int | None:
        """The generation of the last :meth:`on_assignment`; ``None`` before one or after a
        loss."""
        return self._member.generation

    @property
    def rebalance_protocol(self) -> RebalanceProtocol:
        """The protocol the consumer runs; decides whether owned partitions are claimed."""
        return self._member.rebalance_protocol

    def supported_protocols(self) -> list[RebalanceProtocol]:
        """The strategy's protocols, preferred first, as Java's ``supportedProtocols()``."""
        return list(self._member.strategy.protocols)

    def use_rebalance_protocol(self, protocol: RebalanceProtocol | int) -> None:
        """Tell the assignor which protocol its consumer's coordinator runs."""
        self._member.use_rebalance_protocol(protocol)

    def on_assignment(self, assignment: Any, generation: int | None = None) -> None:
        """Record this member's new assignment and the generation it belongs to.

        ``assignment`` is the client's assignment object, the raw assignment bytes, or a
        :class:`~kafka_sticky_plugin.codec.Assignment`. A missing or negative ``generation``
        is recorded as ``None``. On the plain path a second assignment without a
        :meth:`metadata` call between raises :class:`ConfigurationError` (shared instance).
        """
        self._check_unshared()
        if self._plain_join_pending is False:
            self._shared = True
            self._check_unshared()
        if self._plain_join_pending is not None:
            self._plain_join_pending = False
        self._member.record(self._assigned_pairs(assignment), generation)

    def on_partitions_lost(self) -> None:
        """Forget the assignment and generation: membership was fenced or expired; the next
        subscription claims no partitions and reports generation -1."""
        self._member.forget()

    def subscription(
        self, topics: Iterable[str], owned: Iterable[Partition] | None = None
    ) -> Subscription:
        """The subscription this member sends now (pure: reads state, changes nothing).

        ``owned``, when given, replaces the partitions claimed from this assignor's memory
        (the coordinator hooks pass the consumer's current assignment under COOPERATIVE, as
        Java does)."""
        return self._member.subscription(topics, owned)

    def subscription_bytes(
        self, topics: Iterable[str], owned: Iterable[Partition] | None = None
    ) -> bytes:
        """The JoinGroup metadata this member sends now, as consumer-protocol v3 bytes.

        The plain path's (the hooks call :meth:`join_metadata`): sorted topics, the owned
        partitions and generation recorded by :meth:`on_assignment` (none and -1 after
        :meth:`on_partitions_lost`), the rack, and the strategy's user data in Java's format.
        ``owned`` replaces the claimed partitions (see :meth:`subscription`). Pure.
        """
        return self._member.subscription_bytes(topics, owned)

    def metadata(self, topics: Iterable[str]) -> bytes:
        """The client's own join call (the plain path): :meth:`subscription_bytes`."""
        self._check_unshared()
        self._plain_join_pending = True
        return self.subscription_bytes(topics)

    def _check_unshared(self) -> None:
        if self._shared:
            cls = type(self).__name__
            raise ConfigurationError(
                f"one {cls} instance is used by two consumers without install_hooks: their "
                "claims would mix and a partition could get two owners; give each consumer "
                f"its own {cls}() (or call install_hooks(consumer), which does)"
            )

    # -- leader side -------------------------------------------------------------------
    def read_members(self, members: Iterable[MemberMetadata]) -> DecodedGroup:
        """Read every JoinGroup member once: the group's topics and the engine's input.

        Stable API for the coordinator hooks: they ask the cluster about ``.topics``, then
        call ``.assign(partitions_per_topic, partition_racks=...)``. Metadata may be raw
        bytes, a :class:`Subscription` or the client's decoded subscription; a member whose
        metadata cannot be read is named in one error log line and later gets an empty
        assignment.
        """
        return read_group(self.name, members, convert=self._to_subscription)

    def assign_cluster(self, cluster: Any, members: Iterable[MemberMetadata]) -> dict[str, bytes]:
        """The leader's plain path: ``{member_id: assignment bytes}`` for SyncGroup.

        Every member is read once (an unreadable one gets an empty assignment and one error
        log line); partition counts come from ``cluster.partitions_for_topic`` (topics the
        cluster does not know are ignored); replica racks (KIP-881) from the cluster's
        brokers and partitions when the brokers report racks and some member has a rack
        (without one the plan is the plan without racks: they are not read).
        """
        with cyclic_gc_paused():
            # one pause from the decode to the bytes, the decoded group freed inside it
            # (gc_pause's docstring): a helper's local
            return self._assign_read(cluster, self.read_members(members))

    @staticmethod
    def _assign_read(cluster: Any, group: DecodedGroup) -> dict[str, bytes]:
        """:meth:`assign_cluster` once its members are read."""
        counts = partition_counts(cluster, group.topics)
        racked = any(spec.rack for spec in group.specs)
        return group.assign(
            counts, partition_racks=replica_racks(cluster, counts) if racked else None
        )

    def assign_from_bytes(
        self,
        partitions_per_topic: Mapping[str, int],
        member_metadata: Mapping[str, bytes],
        cluster_racks: PartitionRacks | None = None,
        *,
        instance_ids: Mapping[str, str | None] | None = None,
    ) -> dict[str, bytes]:
        """The leader's whole path on raw bytes: ``{member_id: assignment bytes}``.

        ``partitions_per_topic`` lists existing topics and their partition counts (other
        topics are ignored); ``member_metadata`` maps each member id to its JoinGroup metadata
        bytes; ``cluster_racks`` maps ``(topic, partition)`` to replica racks;
        ``instance_ids`` gives static members' ``group.instance.id``. Every member id gets an
        entry; one whose metadata cannot be decoded gets an empty assignment and one error
        log line.
        """
        ids = instance_ids or {}
        return assign_group(
            self.name,
            partitions_per_topic,
            [MemberMetadata(mid, data, ids.get(mid)) for mid, data in member_metadata.items()],
            partition_racks=cluster_racks,
        )


def _conforms(shell: AssignorShell) -> HookableAssignor:
    """Never called: mypy checks here that the shell (so every adapter's assignor) implements
    the hooks' contract."""
    return shell
