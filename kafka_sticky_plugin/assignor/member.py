"""The member side of one of the package's assignors: what a member remembers between
rebalances and the JoinGroup subscription it sends. No client, no I/O.

State (per instance: two consumers never share it): the previous assignment and its
generation (from the last completed join), the rack, and the rebalance protocol the member's
coordinator runs. After :meth:`MemberState.forget` (membership lost) the next subscription
claims nothing and reports generation -1 until the next :meth:`MemberState.record`.

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

from ..codec import (
    CONSUMER_PROTOCOL_LATEST_VERSION,
    Subscription,
    encode_subscription,
)
from ..errors import ConfigurationError
from .rebalance import RebalanceProtocol
from .strategies import Strategy, strategy_named

__all__ = ["MemberState"]

Partition = tuple[str, int]


class MemberState:
    """One member's assignor state for strategy ``strategy`` (see the module docstring).

    Invariants: ``previous_assignment`` is sorted and distinct; ``generation`` is ``None`` or
    >= 0; ``rebalance_protocol`` is one of the strategy's protocols.
    """

    __slots__ = ("_generation", "_previous", "_protocol", "_rack_id", "_strategy")

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
        self._previous: tuple[Partition, ...] = ()
        self._generation: int | None = None
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

    def adopt_default_rack(self, rack_id: str) -> None:
        """Report ``rack_id`` unless a rack was given to the constructor."""
        if self._rack_id is None and rack_id:
            self._rack_id = rack_id

    @property
    def previous_assignment(self) -> tuple[Partition, ...]:
        """The partitions of the last :meth:`record`, sorted; empty after :meth:`forget`."""
        return self._previous

    @property
    def generation(self) -> int | None:
        """The generation of the last :meth:`record`; ``None`` before one or after a loss."""
        return self._generation

    @property
    def rebalance_protocol(self) -> RebalanceProtocol:
        """The protocol the member's coordinator runs (decides whether it claims partitions)."""
        return self._protocol

    def use_rebalance_protocol(self, protocol: RebalanceProtocol | int) -> None:
        """Record the protocol the coordinator selected; one the strategy does not support
        raises :class:`ConfigurationError`."""
        try:
            chosen = RebalanceProtocol(protocol)
        except ValueError:
            raise ConfigurationError(f"unknown rebalance protocol {protocol!r}") from None
        if chosen not in self._strategy.protocols:
            raise ConfigurationError(
                f"{self._strategy.name} does not support the {chosen.name} rebalance protocol"
            )
        self._protocol = chosen

    def record(self, partitions: Iterable[Partition], generation: int | None) -> None:
        """A completed join: the member's partitions and the generation (a missing or
        negative one is recorded as ``None``)."""
        self._previous = tuple(sorted(set(partitions)))
        if isinstance(generation, bool) or not isinstance(generation, int) or generation < 0:
            self._generation = None
        else:
            self._generation = generation

    def fresh_copy(self) -> MemberState:
        """The same configuration (strategy, rack, protocol) with no history: what a second
        consumer configured from the same assignor instance starts with."""
        twin = MemberState(self._strategy.name, rack_id=self._rack_id)
        twin._protocol = self._protocol
        return twin

    def forget(self) -> None:
        """Membership was lost: no previous assignment, no generation."""
        self._previous = ()
        self._generation = None

    def claimed_partitions(self) -> tuple[Partition, ...]:
        """The owned partitions the next subscription reports (none under EAGER for a
        cooperative strategy: such a member revoked everything before joining)."""
        if self._strategy.cooperative and self._protocol is RebalanceProtocol.EAGER:
            return ()
        return self._previous

    def user_data(self) -> bytes | None:
        """The strategy's user data in Java's format (see the module docstring; written by
        the registry's ``Strategy.write_user_data``)."""
        return self._strategy.write_user_data(self._previous, self._generation)

    def subscription(
        self, topics: Iterable[str], owned: Iterable[Partition] | None = None
    ) -> Subscription:
        """The subscription this member sends now (pure: reads state, changes nothing).

        ``owned``, when given, replaces :meth:`claimed_partitions` (the coordinator hooks pass
        the consumer's current assignment under COOPERATIVE, as Java does)."""
        claimed = self.claimed_partitions() if owned is None else tuple(sorted(set(owned)))
        return Subscription(
            version=CONSUMER_PROTOCOL_LATEST_VERSION,
            topics=tuple(sorted(set(topics))),
            user_data=self.user_data(),
            owned_partitions=claimed,
            generation_id=-1 if self._generation is None else self._generation,
            rack_id=self._rack_id,
        )

    def subscription_bytes(
        self, topics: Iterable[str], owned: Iterable[Partition] | None = None
    ) -> bytes:
        """:meth:`subscription` as consumer-protocol v3 bytes."""
        return encode_subscription(self.subscription(topics, owned))
