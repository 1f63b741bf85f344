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

With :func:`kafka_sticky_plugin.aiokafka.install_hooks` the hooks keep each member's join
state and pass it to ``join_metadata`` (a class given in ``partition_assignment_strategy`` is
instantiated; an instance holds no member state and may serve several consumers). Without
the hooks the state is per instance
(:class:`~kafka_sticky_plugin.assignor.member.MemberState`; aiokafka's own
``StickyPartitionAssignor`` keeps it on the class, aiokafka#1175): a class raises
:class:`~kafka_sticky_plugin.errors.ConfigurationError` at the first call (pass an
instance), and one instance driven by two consumers raises at the second assignment
(:mod:`kafka_sticky_plugin.assignor.shell`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...assignor.leader import COOPERATIVE_STICKY, STICKY, MemberMetadata
from ...assignor.rebalance import RebalanceProtocol
from ...assignor.shell import AssignorShell, Partition
from ...codec import Assignment, Subscription, decode_assignment
from ...errors import CodecError, ConfigurationError

__all__ = ["CooperativeStickyAssignor", "StickyAssignor", "to_subscription"]


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


class _InstanceOnly:
    """A method aiokafka may call on the class itself (its own assignors are classmethods):
    on an instance the shell's method, on the class one clear error instead of aiokafka's
    ``TypeError: metadata() missing 1 required positional argument`` (issue 24)."""

    def __init__(self, method: Any) -> None:
        self._method = method
        self.__doc__ = method.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if instance is not None:
            return self._method.__get__(instance, owner)
        cls = owner.__name__ if owner is not None else "the assignor"

        def refuse(*args: Any, **kwargs: Any) -> Any:
            raise ConfigurationError(
                f"{cls} was given to aiokafka as a class without install_hooks, and one class "
                f"would be one memory shared by every consumer: pass {cls}() (an instance) or "
                "call install_hooks(consumer) before start()"
            )

        return refuse


class _AioStickyFamily(AssignorShell):
    """Both assignors (not for direct use): the client-free
    :class:`~kafka_sticky_plugin.assignor.shell.AssignorShell` in aiokafka's shape. aiokafka
    calls ``metadata``, ``assign`` and ``on_assignment`` on whatever the consumer was given;
    given our class (not an instance) without the hooks, each call raises
    :class:`ConfigurationError` saying what to do."""

    _assigned_pairs = staticmethod(assigned_pairs)
    _to_subscription = staticmethod(to_subscription)

    def _assign(self, cluster: Any, members: Mapping[str, Any]) -> dict[str, bytes]:
        """aiokafka's leader hook (without the hooks): ``{member_id: assignment bytes}``
        from aiokafka's v0-decoded members; an unreadable member gets an empty assignment."""
        return self.assign_cluster(
            cluster, (MemberMetadata(str(mid), meta) for mid, meta in members.items())
        )

    assign = _InstanceOnly(_assign)
    metadata = _InstanceOnly(AssignorShell.metadata)
    on_assignment = _InstanceOnly(AssignorShell.on_assignment)


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
