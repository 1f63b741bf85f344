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

With ``install_hooks`` those three calls are not made: the hooks keep the member's join state
(previous assignment, generation) and pass it, with the protocol and the consumer's
``client_rack``, to ``join_metadata``, so the instance holds no member state and may serve
several consumers. Without the hooks the instance is the member's memory (previous
assignment, generation, rack, protocol): give each consumer its own instance (one instance
driven by two consumers raises ``ConfigurationError`` at the second assignment: see
:mod:`kafka_sticky_plugin.assignor.shell`). After :meth:`on_partitions_lost` the next
subscription claims nothing and reports generation -1, until the next ``on_assignment``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kafka.coordinator.assignors.abstract import AbstractPartitionAssignor

from ...assignor.leader import COOPERATIVE_STICKY, STICKY, MemberMetadata
from ...assignor.rebalance import RebalanceProtocol
from ...assignor.shell import AssignorShell
from ._metadata import assigned_partitions, to_subscription

__all__ = ["CooperativeStickyAssignor", "StickyAssignor"]


class _StickyFamilyAssignor(AssignorShell, AbstractPartitionAssignor):  # type: ignore[misc]
    """Both assignors: the client-free :class:`~kafka_sticky_plugin.assignor.shell.AssignorShell`
    in kafka-python's ``AbstractPartitionAssignor`` shape (not for direct use)."""

    _assigned_pairs = staticmethod(assigned_partitions)
    _to_subscription = staticmethod(to_subscription)

    def assign(self, cluster: Any, members: Iterable[Any]) -> dict[str, bytes]:
        """kafka-python's leader hook: ``{member_id: assignment bytes}`` for SyncGroup.

        ``members`` are kafka-python's JoinGroup members (``member_id``, ``metadata`` as
        bytes or a decoded subscription, optional ``group_instance_id``); the rest is
        :meth:`~kafka_sticky_plugin.assignor.shell.AssignorShell.assign_cluster`.
        """
        return self.assign_cluster(
            cluster,
            (
                MemberMetadata(
                    str(member.member_id),
                    member.metadata,
                    getattr(member, "group_instance_id", None) or None,
                )
                for member in members
            ),
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
    assignor cannot see its coordinator: the coordinator hooks pass it the chosen protocol
    with every JoinGroup; without them pass ``rebalance_protocol=EAGER`` (or call
    :meth:`use_rebalance_protocol`) when it is configured next to an EAGER-only assignor. The
    default is COOPERATIVE, which is what kafka-python picks when this is the only configured
    assignor.
    """

    name = COOPERATIVE_STICKY

    def __init__(
        self,
        *,
        rack_id: str | None = None,
        rebalance_protocol: RebalanceProtocol | int = RebalanceProtocol.COOPERATIVE,
    ) -> None:
        super().__init__(rack_id=rack_id, rebalance_protocol=rebalance_protocol)
