"""The member side of one of the package's assignors: the JoinGroup subscription a member
sends, from what it remembers of its last join. No client, no I/O.

What a member remembers of its last completed join is a :class:`JoinState` (its assignment
and generation; :data:`NO_JOIN` before one and after membership was lost). Whoever drives
the member owns that state and passes it in, as franz-go's ``JoinGroupMetadata(interests,
currentAssignment, generation)`` does: with the coordinator hooks that is the hooks (one
state per consumer, so one assignor instance can serve several consumers), and
:func:`member_subscription` is the pure function of it. Only the plain path (the client calls
the assignor's ``metadata``/``on_assignment`` itself) keeps the state in the assignor, in a
:class:`MemberState`; after :meth:`MemberState.forget` the next subscription claims nothing
and reports generation -1 until the next :meth:`MemberState.record`.

What a member sends (consumer protocol v3, Java's user data per strategy):

- ``sticky``: owned partitions and generation in the subscription, and the same previous
  assignment in sticky user data (v1 with a generation, v0 without, null when there is no
  history), which Java's and librdkafka's sticky leaders read;
- ``cooperative-sticky``: owned partitions (none under EAGER: the member revoked everything
  before joining) and generation in the subscription; user data is Java's int32 generation
  (for leaders that only read subscription v1).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..codec import (
    CONSUMER_PROTOCOL_LATEST_VERSION,
    Subscription,
    encode_subscription,
)
from ..errors import ConfigurationError
from .rebalance import RebalanceProtocol
from .strategies import Strategy, strategy_named

__all__ = ["NO_JOIN", "JoinState", "MemberState", "checked_protocol", "member_subscription"]

Partition = tuple[str, int]


@dataclass(frozen=True)
class JoinState:
    """A member's last completed join: its assignment and the generation it belongs to.

    Invariants: ``partitions`` is sorted and distinct; ``generation`` is ``None`` (no join,
    or membership lost: reported as -1) or >= 0. Build one with :meth:`after`.
    """

    partitions: tuple[Partition, ...] = ()
    generation: int | None = None

    @classmethod
    def after(cls, partitions: Iterable[Partition], generation: int | None) -> JoinState:
        """The state after a join that assigned ``partitions`` in ``generation`` (a missing
        or negative generation is recorded as ``None``)."""
        valid = isinstance(generation, int) and not isinstance(generation, bool)
        return cls(
            tuple(sorted(set(partitions))),
            generation if valid and generation is not None and generation >= 0 else None,
        )


NO_JOIN = JoinState()
"""No completed join (or membership lost): the next subscription claims nothing, generation -1."""


def member_subscription(
    strategy: Strategy,
    topics: Iterable[str],
    joined: JoinState,
    *,
    protocol: RebalanceProtocol,
    rack_id: str | None,
    owned: Iterable[Partition] | None = None,
) -> Subscription:
    """The subscription a member of ``strategy`` sends after the join ``joined`` (pure).

    Owned partitions: ``owned`` when given (the hooks pass the consumer's current assignment
    under COOPERATIVE, as Java does); otherwise none for a cooperative strategy under EAGER
    (such a member revoked everything before joining), else ``joined.partitions``. User data
    is the strategy's, written from ``joined`` by the registry's ``Strategy.write_user_data``.
    """
    if owned is not None:
        claimed = tuple(sorted(set(owned)))
    elif strategy.cooperative and protocol is RebalanceProtocol.EAGER:
        claimed = ()
    else:
        claimed = joined.partitions
    return Subscription(
        version=CONSUMER_PROTOCOL_LATEST_VERSION,
        topics=tuple(sorted(set(topics))),
        user_data=strategy.write_user_data(joined.partitions, joined.generation),
        owned_partitions=claimed,
        generation_id=-1 if joined.generation is None else joined.generation,
        rack_id=rack_id,
    )


class MemberState:
    """One member's own memory for strategy ``strategy``: the plain path's state (the
    hooks keep a :class:`JoinState` per consumer instead; see the module docstring).

    Invariants: ``joined`` is the last :meth:`record` (:data:`NO_JOIN` before one and after
    :meth:`forget`); ``rebalance_protocol`` is one of the strategy's protocols.
    """

    __slots__ = ("_joined", "_protocol", "_rack_id", "_strategy")

    def __init__(
        self,
        strategy: str,
        *,
        rack_id: str | None = None,
        rebalance_protocol: RebalanceProtocol | int | None = None,
    ) -> None:
        if rack_id is not None and not isinstance(rack_id, str):
            raise ConfigurationError(f"rack_id must be a str or None, got {rack_id!r}")
        self._strategy: Strategy = strategy_named(strategy)
        self._rack_id = rack_id
        self._joined = NO_JOIN
        self._protocol = self._strategy.protocols[0]
        if rebalance_protocol is not None:
            self.use_rebalance_protocol(rebalance_protocol)

    @property
    def strategy(self) -> Strategy:
        return self._strategy

    @property
    def rack_id(self) -> str | None:
        """The rack this member reports in subscription v3 (``None``: none)."""
        return self._rack_id

    @property
    def joined(self) -> JoinState:
        """The last :meth:`record`; :data:`NO_JOIN` before one or after :meth:`forget`."""
        return self._joined

    @property
    def previous_assignment(self) -> tuple[Partition, ...]:
        """The partitions of the last :meth:`record`, sorted; empty after :meth:`forget`."""
        return self._joined.partitions

    @property
    def generation(self) -> int | None:
        """The generation of the last :meth:`record`; ``None`` before one or after a loss."""
        return self._joined.generation

    @property
    def rebalance_protocol(self) -> RebalanceProtocol:
        """The protocol the member's coordinator runs (decides whether it claims partitions)."""
        return self._protocol

    def use_rebalance_protocol(self, protocol: RebalanceProtocol | int) -> None:
        """Record the protocol the coordinator selected; one the strategy does not support
        raises :class:`ConfigurationError`."""
        self._protocol = checked_protocol(self._strategy, protocol)

    def record(self, partitions: Iterable[Partition], generation: int | None) -> None:
        """A completed join: :meth:`JoinState.after` ``(partitions, generation)``."""
        self._joined = JoinState.after(partitions, generation)

    def forget(self) -> None:
        """Membership was lost: no previous assignment, no generation."""
        self._joined = NO_JOIN

    def subscription(
        self, topics: Iterable[str], owned: Iterable[Partition] | None = None
    ) -> Subscription:
        """:func:`member_subscription` of this member's own state (pure: changes nothing)."""
        return member_subscription(
            self._strategy,
            topics,
            self._joined,
            protocol=self._protocol,
            rack_id=self._rack_id,
            owned=owned,
        )

    def subscription_bytes(
        self, topics: Iterable[str], owned: Iterable[Partition] | None = None
    ) -> bytes:
        """:meth:`subscription` as consumer-protocol v3 bytes."""
        return encode_subscription(self.subscription(topics, owned))


def checked_protocol(strategy: Strategy, protocol: RebalanceProtocol | int) -> RebalanceProtocol:
    """``protocol`` as a :class:`RebalanceProtocol` that ``strategy`` supports; anything else
    raises :class:`ConfigurationError`."""
    try:
        chosen = RebalanceProtocol(protocol)
    except ValueError:
        raise ConfigurationError(f"unknown rebalance protocol {protocol!r}") from None
    if chosen not in strategy.protocols:
        raise ConfigurationError(
            f"{strategy.name} does not support the {chosen.name} rebalance protocol"
        )
    return chosen
