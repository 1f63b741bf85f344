"""Per-partition in-order work and the offsets it lets a consumer commit (pure, no I/O).

The ledger is what every processing driver (thread pool, asyncio tasks) keeps between polls.
Vocabulary: a *lane* is one owned partition's work; a record is *queued* (handed over by
``poll()``, not started), *running* (given to the user's function) or *finished*.

Invariants (each method keeps them):

- Order: a lane runs at most one record at a time, in offset order, so the records of one
  partition reach the user's function one after the other, in the order they were fetched.
- Commit point: a lane's ``commit point`` is the offset after its highest finished record;
  as records run one at a time in order, every record below it has finished (contiguous).
  :meth:`Ledger.commits` offers only commit points (never the offset of queued or running
  work), so a commit never covers unfinished work.
- Ownership: :meth:`Ledger.release` forgets a lane (revoked after its commit, or lost);
  work of a released lane that ends later is *stale* (an epoch differs) and changes nothing:
  it cannot move a commit point of a partition this member no longer owns, nor of the same
  partition owned again later.
- Exactly once while owned: a record at or below the highest offset a lane has seen is
  dropped when offered again (a re-fetch after a position reset re-delivers nothing twice).
- Errors: a record whose function failed stops its lane (its queued records are dropped, the
  commit point stays before the failed record) until :meth:`Ledger.release`; the error is
  reported once by :meth:`Ledger.take_errors`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

__all__ = ["Ledger", "ProcessingError", "Task"]

P = TypeVar("P", bound=Hashable)  # a partition, in the client's own type
R = TypeVar("R")  # a record, in the client's own type


class ProcessingError(Exception):
    """The user's function failed on a record; its partition is stopped (not committed past it).

    Raised by the drivers' ``poll()`` after the failure; ``partition``, ``offset`` and the
    original exception (``__cause__``) say which record.
    """

    def __init__(self, partition: object, offset: int, cause: BaseException) -> None:
        super().__init__(f"processing failed at {partition} offset {offset}: {cause!r}")
        self.partition = partition
        self.offset = offset
        self.__cause__ = cause


@dataclass(frozen=True)
class Task(Generic[P, R]):
    """One record handed to the user's function; ``epoch`` ties it to its lane's ownership."""

    partition: P
    offset: int
    record: R
    epoch: int


@dataclass
class _Lane(Generic[R]):
    """One owned partition's work (see the module invariants)."""

    epoch: int
    queued: deque[tuple[int, R]] = field(default_factory=deque)
    running: int | None = None  # offset of the record in the user's function, if any
    seen: int = -1  # highest offset ever offered (for the exactly-once-while-owned rule)
    commit_point: int | None = None  # offset after the highest finished record
    committed: int | None = None  # the commit point last reported committed
    error: ProcessingError | None = None


class Ledger(Generic[P, R]):
    """All lanes of one consumer; not thread-safe (a driver serialises its calls)."""

    def __init__(self) -> None:
        self._lanes: dict[P, _Lane[R]] = {}
        self._epochs = 0
        self._errors: list[ProcessingError] = []

    # -- records in -----------------------------------------------------------------------
    def offer(self, partition: P, records: Iterable[tuple[int, R]]) -> int:
        """Queue ``(offset, record)`` pairs of ``partition``; returns how many were queued."""
        lane = self._lanes.get(partition)
        if lane is None:
            self._epochs += 1
            lane = self._lanes[partition] = _Lane(epoch=self._epochs)
        if lane.error is not None:
            return 0
        queued = 0
        for offset, record in records:
            if offset <= lane.seen:
                continue
            lane.seen = offset
            lane.queued.append((offset, record))
            queued += 1
        return queued

    def start(self, limit: int | None = None) -> list[Task[P, R]]:
        """Start the head record of each idle lane (at most ``limit`` in all); returns them."""
        tasks: list[Task[P, R]] = []
        for partition, lane in self._lanes.items():
            if limit is not None and len(tasks) >= limit:
                break
            if lane.running is None and lane.error is None and lane.queued:
                offset, record = lane.queued.popleft()
                lane.running = offset
                tasks.append(Task(partition, offset, record, lane.epoch))
        return tasks

    # -- work out -------------------------------------------------------------------------
    def finish(self, task: Task[P, R]) -> bool:
        """Record ``task`` as finished; False (nothing changed) when it is stale."""
        lane = self._current(task)
        if lane is None:
            return False
        lane.running = None
        lane.commit_point = task.offset + 1
        return True

    def fail(self, task: Task[P, R], cause: BaseException) -> bool:
        """Stop ``task``'s lane on its failure; False (nothing changed) when it is stale."""
        lane = self._current(task)
        if lane is None:
            return False
        lane.running = None
        lane.queued.clear()
        lane.error = ProcessingError(task.partition, task.offset, cause)
        self._errors.append(lane.error)
        return True

    def take_errors(self) -> list[ProcessingError]:
        """The failures since the last call (each reported once)."""
        errors, self._errors = self._errors, []
        return errors

    # -- what the driver asks -------------------------------------------------------------
    @property
    def held(self) -> int:
        """Records queued or running, over all lanes (the back-pressure count)."""
        return sum(len(lane.queued) + (lane.running is not None) for lane in self._lanes.values())

    def busy(self, share: int = 1) -> set[P]:
        """Partitions holding ``share`` records or more (queued or running), or stopped by an
        error: keep them paused (a driver passes each partition's share of its budget)."""
        return {
            partition
            for partition, lane in self._lanes.items()
            if len(lane.queued) + (lane.running is not None) >= share or lane.error is not None
        }

    def running(self, partitions: Iterable[P] | None = None) -> set[P]:
        """Those of ``partitions`` (default: all) with a record in the user's function."""
        lanes = self._lanes if partitions is None else partitions
        return {
            p
            for p in lanes
            if (lane := self._lanes.get(p)) is not None and lane.running is not None
        }

    def drop_queued(self, partitions: Iterable[P]) -> int:
        """Forget the queued (not started) records of ``partitions``; returns how many.

        Used when the partitions are about to be revoked: their next owner reads them again
        from the commit point.
        """
        dropped = 0
        for partition in partitions:
            lane = self._lanes.get(partition)
            if lane is not None:
                dropped += len(lane.queued)
                lane.queued.clear()
        return dropped

    def commits(self, partitions: Iterable[P] | None = None) -> dict[P, int]:
        """Commit points not yet committed, of ``partitions`` (default: all lanes)."""
        names = self._lanes if partitions is None else partitions
        out: dict[P, int] = {}
        for partition in names:
            lane = self._lanes.get(partition)
            if lane is not None and lane.commit_point not in (None, lane.committed):
                out[partition] = lane.commit_point
        return out

    def committed(self, offsets: dict[P, int]) -> None:
        """Note ``offsets`` (from :meth:`commits`) as committed."""
        for partition, offset in offsets.items():
            lane = self._lanes.get(partition)
            if lane is not None:
                lane.committed = offset

    def release(self, partitions: Iterable[P]) -> None:
        """Forget the lanes of ``partitions`` (revoked after their commit, or lost)."""
        for partition in partitions:
            self._lanes.pop(partition, None)

    def partitions(self) -> set[P]:
        """Partitions with a lane."""
        return set(self._lanes)

    def _current(self, task: Task[P, R]) -> _Lane[R] | None:
        lane = self._lanes.get(task.partition)
        if lane is None or lane.epoch != task.epoch or lane.running != task.offset:
            return None
        return lane
