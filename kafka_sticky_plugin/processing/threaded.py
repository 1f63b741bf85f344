"""The processing loop for thread-pool clients (kafka-python, confluent-kafka), client-free.

A :class:`ThreadedProcessor` sits between the user's loop and the consumer: the user calls
:meth:`ThreadedProcessor.poll` where they called the consumer's ``poll()``; each call

1. notes the work that ended (finished: its commit point moves; failed: see ``on_error``),
2. commits the commit points of owned partitions (at most every ``commit_interval_s``),
3. pauses the partitions holding their share of ``max_in_flight`` (all of them when
   ``max_in_flight`` records are held, or stopped by an error) and resumes the others: the
   consumer's own ``poll()`` keeps the member in the group however long the work takes,
   without fetching more than it can hold,
4. polls the consumer (rebalance callbacks run here or on the client's IO thread) and queues
   the records per partition, then starts the head record of each idle partition on the pool.

The client's rebalance listener calls :meth:`revoking`, waits for :meth:`drained` (at most
``revoke_wait_s``), then :meth:`handover` and commits what it returns before the partitions
leave; on loss it calls :meth:`lose` and commits nothing. A client drives it through a
:class:`ConsumerPort` (``adapters/<client>/processing.py``).

Threads: the user's function runs on the pool; everything else on the caller's thread or the
client's IO thread. One lock guards the ledger; a commit in progress (``committing``) is
waited for by :meth:`handover`'s callers, so no poll-path commit lands after a revocation.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable, Hashable
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypedDict, TypeVar

from .ledger import Ledger, Task

__all__ = [
    "ConsumerPort",
    "ErrorCallback",
    "ProcessingKeywords",
    "ProcessingOptions",
    "ThreadedProcessor",
    "processing_options",
]

log = logging.getLogger("kafka_sticky_plugin.processing")

P = TypeVar("P", bound=Hashable)
R = TypeVar("R")

ErrorCallback = Callable[[R, BaseException], None]
"""``on_error(record, exc)``: returning marks the record finished (skipped, committed past);
raising stops its partition and the next ``poll()`` raises :class:`~.ledger.ProcessingError`."""


class ConsumerPort(Protocol[P, R]):
    """What the loop needs of a consumer, in the client's own partition and record types."""

    def fetch(self, timeout_s: float) -> list[tuple[P, int, R]]:
        """Poll the consumer once: ``(partition, offset, record)`` in fetch order."""

    def owned(self) -> set[P]:
        """The partitions assigned to the consumer now."""

    def pause(self, partitions: set[P]) -> None:
        """Stop fetching ``partitions`` (owned ones only)."""

    def resume(self, partitions: set[P]) -> None:
        """Fetch ``partitions`` again (owned ones only)."""

    def paused(self) -> set[P]:
        """The partitions paused now."""

    def commit(self, offsets: dict[P, int]) -> None:
        """Commit ``offsets`` (next offsets to read) synchronously; raise on failure."""


def _check_positive(name: str, value: float) -> None:
    if value <= 0:
        raise ValueError(f"{name} must be > 0, got {value!r}")


@dataclass(frozen=True)
class ProcessingOptions(Generic[P, R]):
    """The options of a thread-pool client's ``Processor`` (each client's class takes them
    as keywords, with these defaults, and documents them), checked once here: a
    ``ValueError`` for ``max_in_flight`` or ``workers`` not above 0, or a negative
    ``revoke_wait_s``."""

    max_in_flight: int = 100
    workers: int = 4
    executor: Executor | None = None
    revoke_wait_s: float = 30.0
    commit_interval_s: float = 1.0
    on_error: ErrorCallback[R] | None = None
    on_commit: Callable[[dict[P, int]], None] | None = None

    def __post_init__(self) -> None:
        _check_positive("max_in_flight", self.max_in_flight)
        _check_positive("workers", self.workers)
        if self.revoke_wait_s < 0:
            raise ValueError(f"revoke_wait_s must be >= 0, got {self.revoke_wait_s!r}")


class ProcessingKeywords(TypedDict, total=False):
    """The keywords every client's ``Processor`` takes (``**options``) and hands to
    :class:`ProcessingOptions` unchanged: the names, types and defaults are that class's."""

    max_in_flight: int
    workers: int
    executor: Executor | None
    revoke_wait_s: float
    commit_interval_s: float
    on_error: ErrorCallback[Any] | None
    on_commit: Callable[[dict[Any, int]], None] | None


def processing_options(face: str, options: ProcessingKeywords) -> ProcessingOptions[Any, Any]:
    """``options`` as :class:`ProcessingOptions`; a keyword it lacks is a ``TypeError`` naming
    ``face`` (the user's class, e.g. ``"kafka_python.Processor"``) and the keywords it takes."""
    unknown = sorted(set(options) - set(ProcessingKeywords.__annotations__))
    if unknown:
        known = ", ".join(ProcessingKeywords.__annotations__)
        raise TypeError(
            f"{face}() got unexpected keyword(s) {', '.join(unknown)}; it takes {known}"
        )
    return ProcessingOptions(**options)


class ThreadedProcessor(Generic[P, R]):
    """Per-partition in-order processing on a pool (see the module docstring)."""

    def __init__(
        self,
        port: ConsumerPort[P, R],
        function: Callable[[R], object],
        options: ProcessingOptions[P, R],
    ) -> None:
        self._port = port
        self._function = function
        self._max_in_flight = options.max_in_flight
        self._own_executor = options.executor is None
        self._executor = options.executor or ThreadPoolExecutor(
            options.workers, "kafka-sticky-processing"
        )
        self.revoke_wait_s = options.revoke_wait_s
        self._commit_interval_s = options.commit_interval_s
        self._on_error = options.on_error
        self._on_commit = options.on_commit
        self._ledger: Ledger[P, R] = Ledger()
        self._lock = threading.Condition()
        self._committing = False
        self._last_commit = time.monotonic()
        self._closed = False

    # -- the user's loop ------------------------------------------------------------------
    def poll(self, timeout_s: float) -> int:
        """One turn of the loop (see the module docstring); returns the records queued.

        Raises :class:`~.ledger.ProcessingError` for a failure of the user's function (its
        partition stays stopped); raises ``RuntimeError`` after :meth:`close`.
        """
        if self._closed:
            raise RuntimeError("this processor is closed")
        with self._lock:
            errors = self._ledger.take_errors()
        if errors:
            raise errors[0]
        if time.monotonic() - self._last_commit >= self._commit_interval_s:
            self.commit()
        self._steer()
        queued = 0
        for partition, offset, record in self._port.fetch(timeout_s):
            with self._lock:
                queued += self._ledger.offer(partition, [(offset, record)])
        self._dispatch()
        return queued

    def commit(self) -> dict[P, int]:
        """Commit the commit points of owned partitions now; returns what was committed.

        A failed commit (the group is rebalancing, say) is logged and retried on a later
        turn: its partition's next owner starts at the last commit that succeeded.
        """
        owned = self._port.owned()
        with self._lock:
            offsets = self._ledger.commits(owned)
            if not offsets:
                return {}
            self._committing = True
        try:
            self._port.commit(offsets)
        except Exception as exc:  # the client's commit errors: retried on a later turn
            log.warning("commit of %s failed, retried later: %r", offsets, exc)
            return {}
        finally:
            with self._lock:
                self._committing = False
                self._lock.notify_all()
            self._last_commit = time.monotonic()
        with self._lock:
            self._ledger.committed(offsets)
        if self._on_commit is not None:
            self._on_commit(dict(offsets))
        return offsets

    def close(self, wait_s: float | None = None) -> dict[P, int]:
        """Stop: wait for running work (at most ``wait_s``, default ``revoke_wait_s``), commit
        what finished of owned partitions, shut the pool down; returns what was committed.

        Call it before closing the consumer (whose close revokes what is left, committing
        nothing more). Work still running after ``wait_s`` is abandoned, never committed.
        """
        if self._closed:
            return {}
        everything = self._ledger.partitions()
        self.revoking(everything)
        self.wait_drained(everything, self.revoke_wait_s if wait_s is None else wait_s)
        committed = self.commit()
        with self._lock:
            self._ledger.release(everything)
            self._closed = True
        if self._own_executor:
            self._executor.shutdown(wait=False, cancel_futures=True)
        return committed

    # -- the client's rebalance listener --------------------------------------------------
    def revoking(self, partitions: set[P]) -> None:
        """``partitions`` are being revoked: start nothing more of them."""
        with self._lock:
            self._ledger.drop_queued(partitions)

    def drained(self, partitions: set[P]) -> bool:
        """No work of ``partitions`` is running, and no poll-path commit is in progress."""
        with self._lock:
            return not self._ledger.running(partitions) and not self._committing

    def wait_drained(self, partitions: set[P], timeout_s: float) -> bool:
        """Block until :meth:`drained` or ``timeout_s``; for listeners on the poll thread."""
        deadline = time.monotonic() + timeout_s
        with self._lock:
            while self._ledger.running(partitions) or self._committing:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._lock.wait(left)
        return True

    def handover(self, partitions: set[P]) -> dict[P, int]:
        """The commit points of ``partitions`` to commit before they leave; forgets them.

        Work of ``partitions`` still running is abandoned: it finishes unseen, and the next
        owner processes its record again (at-least-once across owners).
        """
        with self._lock:
            offsets = self._ledger.commits(partitions)
            abandoned = self._ledger.running(partitions)
            self._ledger.release(partitions)
        if abandoned:
            log.warning(
                "revoked with work still running, abandoned: %s", sorted(map(str, abandoned))
            )
        return offsets

    def handed_over(self, offsets: dict[P, int]) -> None:
        """Tell ``on_commit`` about a commit the listener made."""
        if offsets and self._on_commit is not None:
            self._on_commit(dict(offsets))

    def lose(self, partitions: set[P]) -> None:
        """``partitions`` were lost: forget them, commit nothing (another member owns them)."""
        with self._lock:
            self._ledger.release(partitions)

    # -- inside -------------------------------------------------------------------------------
    def _steer(self) -> None:
        owned = self._port.owned()
        with self._lock:
            full = self._ledger.held >= self._max_in_flight
            share = max(1, self._max_in_flight // max(1, len(owned)))
            hold = set(owned) if full else self._ledger.busy(share) & owned
        paused = self._port.paused() & owned
        if hold - paused:
            self._port.pause(hold - paused)
        if paused - hold:
            self._port.resume(paused - hold)

    def _dispatch(self) -> None:
        with self._lock:
            if self._closed:
                return
            tasks = self._ledger.start()
        for task in tasks:
            future = self._executor.submit(self._run, task.record)
            future.add_done_callback(functools.partial(self._ended, task))

    def _run(self, record: R) -> None:
        try:
            self._function(record)
        except Exception as exc:
            if self._on_error is None:
                raise
            self._on_error(record, exc)

    def _ended(self, task: Task[P, R], future: Future[None]) -> None:
        error = None if future.cancelled() else future.exception()
        with self._lock:
            if future.cancelled():
                self._ledger.fail(task, RuntimeError("cancelled"))
            elif error is None:
                self._ledger.finish(task)
            else:
                self._ledger.fail(task, error)
            self._lock.notify_all()
        if not self._closed:
            self._dispatch()  # the lane's next record starts now, not at the next poll
