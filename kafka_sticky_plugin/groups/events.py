"""What a consumer group did, as timestamped records: rebalance callbacks, commits, deliveries.

Every timestamp is ``time.monotonic()`` of the process that saw the event. On Linux that is
CLOCK_MONOTONIC, shared by all processes of the machine, so events of members running in
threads and in child processes can be merged on one time axis.

Invariants:

- an :class:`OwnershipEvent`'s ``owned_after`` is the member's own view of its assignment
  right after the callback (``revoked``/``lost``: the partitions left; ``assigned``: old plus
  new), sorted;
- a member *incarnation* is one consumer object (``"m2#1"``: logical member ``m2``, second
  start); ownership intervals never span incarnations;
- :class:`EventLog` is safe to use from any number of threads and only ever grows.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "EVENT_KINDS",
    "Delivery",
    "EventLog",
    "OwnershipEvent",
    "Partition",
    "member_key",
]

Partition = tuple[str, int]

#: ``started``/``stopped``/``killed``: an incarnation's life; ``closing``: the member's loop
#: ended and its last commit is done: from here it delivers and commits nothing, and its
#: consumer closes next (LeaveGroup), so its ownership ends here and not at ``stopped``,
#: which is stamped only once the close returned; ``generation``: the member saw a
#: new generation id; ``assigned``/``revoked``/``lost``: rebalance listener callbacks;
#: ``committed``/``commit_failed``: offset commits (partitions with ``offsets``);
#: ``paused``/``resumed``: the test froze the member's process (SIGSTOP/SIGCONT);
#: ``error``: the member loop raised (``detail`` says what); ``metrics``: a hooked member's
#: rebalance metrics snapshot (``detail``: JSON, :mod:`.metrics_events`).
EVENT_KINDS = (
    "started",
    "generation",
    "assigned",
    "revoked",
    "lost",
    "committed",
    "commit_failed",
    "closing",
    "paused",
    "resumed",
    "stopped",
    "killed",
    "error",
    "metrics",
)


def member_key(member: str, incarnation: int) -> str:
    """The id of one incarnation of a logical member, e.g. ``m2#1``."""
    return f"{member}#{incarnation}"


@dataclass(frozen=True)
class OwnershipEvent:
    """One thing a member incarnation did or had done to it, at monotonic time ``t``."""

    t: float
    member: str
    incarnation: int
    kind: str
    partitions: tuple[Partition, ...] = ()
    owned_after: tuple[Partition, ...] = ()
    offsets: tuple[int, ...] = ()
    generation: int = -1
    detail: str = ""

    @property
    def key(self) -> str:
        """The incarnation id (``member#incarnation``)."""
        return member_key(self.member, self.incarnation)


@dataclass(frozen=True)
class Delivery:
    """One record handed to the application by ``poll()``."""

    t: float
    member: str
    incarnation: int
    topic: str
    partition: int
    offset: int
    sequence: int


class EventLog:
    """Thread-safe, append-only store of events and deliveries of one group run."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._events: list[OwnershipEvent] = []
        self._deliveries: list[Delivery] = []

    def add(self, event: OwnershipEvent) -> None:
        """Append one event."""
        with self._lock:
            self._events.append(event)

    def add_deliveries(self, deliveries: Iterable[Delivery]) -> None:
        """Append a batch of deliveries."""
        batch = list(deliveries)
        if batch:
            with self._lock:
                self._deliveries.extend(batch)

    def events(self) -> list[OwnershipEvent]:
        """A snapshot of all events, ordered by time."""
        with self._lock:
            snapshot = list(self._events)
        return sorted(snapshot, key=lambda e: e.t)

    def deliveries(self) -> list[Delivery]:
        """A snapshot of all deliveries, ordered by time."""
        with self._lock:
            snapshot = list(self._deliveries)
        return sorted(snapshot, key=lambda d: d.t)

    def last_event_time(self) -> float:
        """Monotonic time of the newest event (0.0 when there is none)."""
        with self._lock:
            return max((e.t for e in self._events), default=0.0)

    def delivery_count(self) -> int:
        """How many deliveries were recorded so far."""
        with self._lock:
            return len(self._deliveries)
