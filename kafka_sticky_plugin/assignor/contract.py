"""What the hooks need from one of the plugin's assignors, in one place.

The hooks drive an assignor through :class:`BoundAssignor`, never through client-specific
protocol classes (``metadata``, ``on_assignment``: the plain path's calls, which keep the
member's state in the assignor), so the same assignor instance works on kafka-python 2.x and
3.x and on aiokafka. An object is *hookable* when it provides:

- ``name`` (str) and ``supported_protocols()`` (protocol ids, see :mod:`.protocols`);
- ``join_metadata(topics, joined, *, protocol, owned=None, default_rack=None) -> bytes``:
  its JoinGroup metadata for a member whose last join is ``joined`` (a
  :class:`~kafka_sticky_plugin.assignor.member.JoinState`) in a group running ``protocol``;
  pure: the hooks own the member's join state and pass it (as franz-go passes a balancer the
  member's ``currentAssignment`` and ``generation``), so a hooked assignor holds no member
  state and one instance may serve several consumers;
- ``read_members(members) -> DecodedGroup``: the leader path, given every member's raw
  JoinGroup metadata (any consumer-protocol version) as ``MemberMetadata``: each member is
  decoded once; the result names the group's topics and assigns them
  (``.assign(partitions_per_topic, partition_racks=...) -> {member_id: bytes}``); an
  unreadable member never raises, it gets an empty assignment.

Anything else (kafka-python's own range/roundrobin assignors) is *foreign*: the hooks let
the client handle it as it always did.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..errors import ConfigurationError
from .leader import DecodedGroup, MemberMetadata
from .member import JoinState
from .rebalance import RebalanceProtocol, select_protocol

__all__ = [
    "BoundAssignor",
    "HookableAssignor",
    "JoinReadouts",
    "bind_assignor",
    "bind_assignors",
    "instantiate_assignor",
    "is_hookable",
    "protocols_of",
]

_REQUIRED = ("join_metadata", "read_members", "supported_protocols")


class HookableAssignor(Protocol):
    """The contract of the module docstring as a type: what every adapter's assignor offers
    (mypy checks the kafka-python assignors against it)."""

    name: str

    def supported_protocols(self) -> Sequence[int]: ...

    def join_metadata(
        self,
        topics: Iterable[str],
        joined: JoinState,
        *,
        protocol: int,
        owned: Iterable[tuple[str, int]] | None = None,
        default_rack: str | None = None,
    ) -> bytes: ...

    def read_members(self, members: Iterable[MemberMetadata]) -> DecodedGroup: ...


@dataclass(frozen=True)
class BoundAssignor:
    """One hookable assignor instance, with the calls the hooks make on it (the member's
    JoinGroup metadata: ``assignor.join_metadata``, straight from the hooks)."""

    assignor: HookableAssignor

    @property
    def name(self) -> str:
        return str(self.assignor.name)

    def protocols(self) -> list[int]:
        return [int(p) for p in self.assignor.supported_protocols()]

    def read(self, members: Sequence[MemberMetadata]) -> DecodedGroup:
        """Every member decoded once (never raises for an unreadable member)."""
        group: DecodedGroup = self.assignor.read_members(members)
        return group


class JoinReadouts:
    """What every client's hooks handle reads out of its hooks (``_impl``, whose ``joined``
    is the member's join state: the one the assignors are passed)."""

    _impl: Any

    @property
    def joined(self) -> JoinState:
        """This member's last completed join (assignment and generation);
        :data:`~kafka_sticky_plugin.assignor.member.NO_JOIN` before one and after membership
        was lost."""
        joined: JoinState = self._impl.joined
        return joined

    @property
    def generation(self) -> int | None:
        """The generation of the last completed join; ``None`` before one or after a loss."""
        return self.joined.generation


def is_hookable(assignor: Any) -> bool:
    """True when ``assignor`` (an instance) offers every call :class:`BoundAssignor` makes."""
    return all(callable(getattr(assignor, name, None)) for name in _REQUIRED)


def bind_assignor(assignor: Any) -> BoundAssignor | None:
    """Bind a hookable assignor instance, or ``None`` for a foreign one."""
    return BoundAssignor(assignor) if is_hookable(assignor) else None  # checked just above


def instantiate_assignor(assignor: Any) -> Any:
    """The instance a hooked consumer uses for a configured assignor: our classes are
    instantiated; instances (ours, which hold no member state on the hooks path, and foreign
    ones) and foreign classes stay as configured."""
    if isinstance(assignor, type) and is_hookable(assignor):
        return assignor()
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
    """Bind every hookable assignor of a consumer's configured list (by name) and select the
    group protocol once by KIP-429's rule over the whole list (the hooks pass it to every
    ``join_metadata`` call).

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
    return bound, protocol
