"""What the hooks need from one of the plugin's assignors, in one place.

The hooks drive an assignor through :class:`BoundAssignor`, never through client-specific
protocol classes, so the same assignor instance works on kafka-python 2.x (whose
``AbstractPartitionAssignor`` has classmethod-style ``metadata`` and a one-argument
``on_assignment``) and on 3.x. An object is *hookable* when it provides:

- ``name`` (str) and ``supported_protocols()`` (protocol ids, see :mod:`.protocols`);
- ``subscription_bytes(topics, owned=None) -> bytes``: its JoinGroup metadata (generation,
  and owned partitions unless ``owned`` is given, come from its own per-instance state), pure
  apart from reading that state;
- ``read_members(members) -> DecodedGroup``: the leader path, given every member's raw
  JoinGroup metadata (any consumer-protocol version) as ``MemberMetadata``: each member is
  decoded once; the result names the group's topics and assigns them
  (``.assign(partitions_per_topic, partition_racks=...) -> {member_id: bytes}``); an
  unreadable member never raises, it gets an empty assignment;
- ``on_assignment(assignment, generation)``: the member's decoded assignment
  (:class:`kafka_sticky_plugin.codec.consumer_protocol.Assignment`) and the group generation;
- ``on_partitions_lost()``: forget owned partitions and generation after membership was
  lost, so the next subscription claims nothing with generation -1;
- optionally ``use_rebalance_protocol(protocol_id)``: told the protocol the hooks selected.

Anything else (kafka-python's own range/roundrobin assignors) is *foreign*: the hooks let
the client handle it as it always did.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..codec.consumer_protocol import Assignment
from ..errors import ConfigurationError
from .leader import DecodedGroup, MemberMetadata
from .rebalance import RebalanceProtocol, select_protocol

__all__ = [
    "BoundAssignor",
    "HookableAssignor",
    "bind_assignor",
    "bind_assignors",
    "instantiate_assignor",
    "is_hookable",
    "protocols_of",
]

_REQUIRED = ("subscription_bytes", "read_members", "on_assignment", "on_partitions_lost")


class HookableAssignor(Protocol):
    """The contract of the module docstring as a type: what every adapter's assignor offers
    (mypy checks the kafka-python assignors against it)."""

    name: str

    def supported_protocols(self) -> Sequence[int]: ...

    def subscription_bytes(
        self, topics: Iterable[str], owned: Iterable[tuple[str, int]] | None = None
    ) -> bytes: ...

    def read_members(self, members: Iterable[MemberMetadata]) -> DecodedGroup: ...

    def on_assignment(self, assignment: Any, generation: int | None = None) -> None: ...

    def on_partitions_lost(self) -> None: ...


@dataclass(frozen=True)
class BoundAssignor:
    """One hookable assignor instance, with the calls the hooks make on it."""

    assignor: HookableAssignor

    @property
    def name(self) -> str:
        return str(self.assignor.name)

    def protocols(self) -> list[int]:
        return [int(p) for p in self.assignor.supported_protocols()]

    def subscription(
        self, topics: Iterable[str], owned: Iterable[tuple[str, int]] | None = None
    ) -> bytes:
        """JoinGroup metadata; ``owned`` (COOPERATIVE: the consumer's current assignment)
        replaces the partitions the assignor would claim from its own memory."""
        return bytes(self.assignor.subscription_bytes(sorted(set(topics)), owned))

    def read(self, members: Sequence[MemberMetadata]) -> DecodedGroup:
        """Every member decoded once (never raises for an unreadable member)."""
        group: DecodedGroup = self.assignor.read_members(members)
        return group

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
    return BoundAssignor(assignor) if is_hookable(assignor) else None  # checked just above


def instantiate_assignor(assignor: Any) -> Any:
    """One consumer's own instance of a configured assignor: our classes are instantiated and
    our instances copied (their configuration, never their member state: ``unshared_copy``),
    so consumers configured with one shared class or instance never share a previous
    assignment or generation; foreign assignors stay as configured."""
    if isinstance(assignor, type):
        return assignor() if is_hookable(assignor) else assignor
    unshared_copy = getattr(assignor, "unshared_copy", None)
    if is_hookable(assignor) and callable(unshared_copy):
        return unshared_copy()
    return assignor


def protocols_of(assignor: Any) -> list[int]:
    """Protocol ids an assignor supports; a class, or a client's own assignor without
    ``supported_protocols`` (kafka-python 2.x, aiokafka), supports EAGER only."""
    supported = getattr(assignor, "supported_protocols", None)
    if callable(supported) and not isinstance(assignor, type):
        return [int(p) for p in supported()]
    return [int(RebalanceProtocol.EAGER)]


def bind_assignors(
    assignors: Sequence[Any], ours: str
) -> tuple[dict[str, BoundAssignor], RebalanceProtocol]:
    """Bind every hookable assignor of a consumer's configured list (by name), select the
    group protocol once by KIP-429's rule over the whole list, and tell each bound assignor.

    ``ours`` names the classes a user of this client should configure (for the error). A list
    with none of ours raises :class:`ConfigurationError`: the hooks would have nothing to drive.
    """
    bound: dict[str, BoundAssignor] = {}
    for assignor in assignors:
        one = bind_assignor(assignor)
        if one is not None:
            bound[one.name] = one
    if not bound:
        raise ConfigurationError(
            "none of the configured partition_assignment_strategy assignors is one of "
            f"kafka-sticky-plugin's ({ours}); the hooks have nothing to drive"
        )
    protocol = select_protocol([(str(a.name), protocols_of(a)) for a in assignors])
    for one in bound.values():
        one.use_protocol(int(protocol))
    return bound, protocol
