"""What the hooks need from one of the plugin's assignors, in one place.

The hooks drive an assignor through :class:`BoundAssignor`, never through client-specific
protocol classes, so the same assignor instance works on kafka-python 2.x (whose
``AbstractPartitionAssignor`` has classmethod-style ``metadata`` and a one-argument
``on_assignment``) and on 3.x. An object is *hookable* when it provides:

- ``name`` (str) and ``supported_protocols()`` (protocol ids, see :mod:`.protocols`);
- ``subscription_bytes(topics) -> bytes``: its JoinGroup metadata (owned partitions and
  generation come from its own per-instance state), pure apart from reading that state;
- ``assign_from_bytes(partitions_per_topic, {member_id: raw metadata}, None, instance_ids=...)
  -> {member_id: bytes}``: the leader path, given every member's raw JoinGroup metadata (any
  consumer-protocol version);
- ``on_assignment(assignment, generation)``: the member's decoded assignment
  (:class:`kafka_sticky_plugin.codec.consumer_protocol.Assignment`) and the group generation;
- ``on_partitions_lost()``: forget owned partitions and generation after membership was
  lost, so the next subscription claims nothing with generation -1;
- optionally ``use_rebalance_protocol(protocol_id)``: told the protocol the hooks selected.

Anything else (kafka-python's own range/roundrobin assignors) is *foreign*: the hooks let
the client handle it as it always did.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from ....codec.consumer_protocol import Assignment

__all__ = ["BoundAssignor", "GroupMemberMetadata", "bind_assignor", "is_hookable"]

_REQUIRED = ("subscription_bytes", "assign_from_bytes", "on_assignment", "on_partitions_lost")


class GroupMemberMetadata(NamedTuple):
    """One JoinGroup member as the leader receives it: ids and raw protocol metadata."""

    member_id: str
    group_instance_id: str | None
    metadata: bytes


@dataclass(frozen=True)
class BoundAssignor:
    """One hookable assignor instance, with the calls the hooks make on it."""

    assignor: Any

    @property
    def name(self) -> str:
        return str(self.assignor.name)

    def protocols(self) -> list[int]:
        return [int(p) for p in self.assignor.supported_protocols()]

    def subscription(self, topics: Iterable[str]) -> bytes:
        return bytes(self.assignor.subscription_bytes(sorted(set(topics))))

    def assign(
        self,
        partitions_per_topic: Mapping[str, int],
        members: Sequence[GroupMemberMetadata],
        partition_racks: Mapping[tuple[str, int], Iterable[str]] | None = None,
    ) -> dict[str, bytes]:
        plan = self.assignor.assign_from_bytes(
            dict(partitions_per_topic),
            {m.member_id: m.metadata for m in members},
            partition_racks,
            instance_ids={m.member_id: m.group_instance_id for m in members},
        )
        return {str(member): bytes(data) for member, data in plan.items()}

    def on_assignment(self, assignment: Assignment, generation: int) -> None:
        self.assignor.on_assignment(assignment, generation)

    def reset_owned(self) -> None:
        self.assignor.on_partitions_lost()

    def use_protocol(self, protocol: int) -> None:
        select = getattr(self.assignor, "use_rebalance_protocol", None)
        if callable(select):
            select(protocol)


def is_hookable(assignor: Any) -> bool:
    """True when ``assignor`` (an instance) offers every call :class:`BoundAssignor` makes."""
    return all(callable(getattr(assignor, name, None)) for name in _REQUIRED) and callable(
        getattr(assignor, "supported_protocols", None)
    )


def bind_assignor(assignor: Any) -> BoundAssignor | None:
    """Bind a hookable assignor instance, or ``None`` for a foreign one."""
    return BoundAssignor(assignor) if is_hookable(assignor) else None
