"""aiokafka: long processing in asyncio tasks that never drops the member out of its group.

::

    processor = Processor(consumer, handle, max_in_flight=100, revoke_wait_s=10)
    consumer.subscribe(["orders"], listener=processor.listener())
    await consumer.start()
    while running:
        await processor.poll(timeout_ms=500)   # instead of getmany(); never waits for the work
    await processor.close()                    # finished work committed; then consumer.stop()

``handle(record)`` is a coroutine function run as one task per partition at a time, the
records of one partition one after the other in offset order; the consumer keeps polling with
the partitions in work paused, so work longer than ``max_poll_interval_ms`` keeps the member
in the group. Offsets are committed only for finished records
(:mod:`kafka_sticky_plugin.processing.ledger`), every ``commit_interval_s`` and from the
revoke callback (awaited by the consumer before the partitions leave), after waiting at most
``revoke_wait_s`` for the revoked partitions' running tasks; tasks still running then are
cancelled and their records go to the next owner. Lost partitions are never committed (their
tasks are cancelled). ``enable_auto_commit`` must be off (it would commit unfinished records).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiokafka import AIOKafkaConsumer, ConsumerRebalanceListener, TopicPartition
from aiokafka.errors import KafkaError

from ...errors import ConfigurationError
from ...listener.contract import CallbackKind, RebalanceListener, invoke_async
from ...processing.ledger import Ledger, Task
from ...processing.user_listener import ProcessingListenerSteps, call_user, lost_method
from .bounded_commit import commit_on_revoke
from .rebalance_consumer import rebalance_consumer

__all__ = ["Processor"]

log = logging.getLogger("kafka_sticky_plugin.processing")

AsyncErrorCallback = Callable[[Any, BaseException], Awaitable[None] | None]


class Processor:
    """Per-partition in-order processing of an aiokafka consumer's records in asyncio tasks.

    Options (all keyword): ``max_in_flight`` records held at most (queued or running; one
    poll's records may come on top: bound them with ``max_records``), ``revoke_wait_s``,
    ``commit_interval_s``, ``max_records`` per ``getmany``, ``on_error(record, exc)`` (sync or
    async; returning skips the record; without it a failure stops its partition and the next
    :meth:`poll` raises :class:`~kafka_sticky_plugin.processing.ProcessingError`),
    ``on_commit(offsets)``. All methods run on the consumer's event loop.
    """

    def __init__(
        self,
        consumer: AIOKafkaConsumer,
        function: Callable[[Any], Awaitable[object]],
        *,
        max_in_flight: int = 100,
        revoke_wait_s: float = 30.0,
        commit_interval_s: float = 1.0,
        max_records: int | None = None,
        on_error: AsyncErrorCallback | None = None,
        on_commit: Callable[[dict[TopicPartition, int]], None] | None = None,
    ) -> None:
        if getattr(consumer, "_enable_auto_commit", False):
            raise ConfigurationError(
                "Processor needs enable_auto_commit=False: auto-commit would commit records "
                "whose processing has not finished"
            )
        if max_in_flight <= 0 or revoke_wait_s < 0:
            raise ValueError("max_in_flight must be > 0 and revoke_wait_s >= 0")
        self._consumer = consumer
        self._function = function
        self._max_in_flight = max_in_flight
        self.revoke_wait_s = revoke_wait_s
        self._commit_interval_s = commit_interval_s
        self._max_records = max_records
        self._on_error = on_error
        self._on_commit = on_commit
        self._ledger: Ledger[TopicPartition, Any] = Ledger()
        self._tasks: dict[TopicPartition, asyncio.Task[None]] = {}
        self._committing = False
        self._last_commit = time.monotonic()
        self._closed = False

    def listener(self, listener: Any = None) -> ConsumerRebalanceListener:
        """The listener to ``subscribe`` with; ``listener`` (yours, sync or async) is called
        after the processor's own work for each callback; a
        :class:`~kafka_sticky_plugin.listener.RebalanceListener` gets its
        ``RebalanceConsumer`` too."""
        return _ProcessingListener(self, listener)

    async def poll(self, timeout_ms: int = 500) -> int:
        """One turn: commit, pause/resume, ``getmany``, start tasks; returns records queued."""
        if self._closed:
            raise RuntimeError("this processor is closed")
        errors = self._ledger.take_errors()
        if errors:
            raise errors[0]
        if time.monotonic() - self._last_commit >= self._commit_interval_s:
            await self.commit()
        self._steer()
        batches = await self._consumer.getmany(timeout_ms=timeout_ms, max_records=self._max_records)
        queued = 0
        for tp, records in batches.items():
            queued += self._ledger.offer(tp, [(r.offset, r) for r in records])
        self._dispatch()
        return queued

    async def commit(self) -> dict[TopicPartition, int]:
        """Commit finished work of owned partitions now; returns what was committed (a failed
        commit is logged and retried on a later turn). Bounded by the revocation deadline
        (:func:`~.bounded_commit.commit_on_revoke`): a coordinator move never holds up
        ``getmany`` past ``max_poll_interval_ms``."""
        offsets = self._ledger.commits(self._consumer.assignment())
        if not offsets:
            return {}
        self._committing = True
        try:
            if not await commit_on_revoke(self._consumer, offsets):
                return {}
        finally:
            self._committing = False
            self._last_commit = time.monotonic()
        self._ledger.committed(offsets)
        self._committed(offsets)
        return offsets

    async def close(self, wait_s: float | None = None) -> dict[TopicPartition, int]:
        """Wait for running tasks (at most ``wait_s``, default ``revoke_wait_s``), commit what
        finished, cancel the rest. Call before ``consumer.stop()``."""
        if self._closed:
            return {}
        everything = self._ledger.partitions()
        await self._settle(everything, self.revoke_wait_s if wait_s is None else wait_s)
        committed = await self.commit()
        self._release(everything)
        self._closed = True
        return committed

    # -- the listener's steps -------------------------------------------------------------
    async def _settle(self, partitions: set[TopicPartition], wait_s: float) -> None:
        """Start nothing more of ``partitions``; wait (at most ``wait_s``) for their tasks and
        any commit in progress."""
        self._ledger.drop_queued(partitions)
        running = [t for tp, t in self._tasks.items() if tp in partitions]
        if running:
            await asyncio.wait(running, timeout=wait_s)
        deadline = time.monotonic() + wait_s
        while self._committing and time.monotonic() < deadline:
            await asyncio.sleep(0.02)

    async def _revoke(self, partitions: set[TopicPartition]) -> None:
        await self._settle(partitions, self.revoke_wait_s)
        offsets = self._ledger.commits(partitions)
        self._release(partitions)
        if offsets:
            try:
                await self._consumer.commit(offsets)
            except KafkaError as exc:
                log.warning("revoked %s: finished work not committed: %r", offsets, exc)
            else:
                self._committed(offsets)

    def _release(self, partitions: set[TopicPartition]) -> None:
        """Forget ``partitions``; cancel their tasks still running (abandoned work)."""
        self._ledger.release(partitions)
        for tp in partitions:
            task = self._tasks.pop(tp, None)
            if task is not None and not task.done():
                log.warning("%s left with work running: cancelled", tp)
                task.cancel()

    def _committed(self, offsets: dict[TopicPartition, int]) -> None:
        if self._on_commit is not None:
            self._on_commit(dict(offsets))

    # -- inside ---------------------------------------------------------------------------
    def _steer(self) -> None:
        owned = self._consumer.assignment()
        full = self._ledger.held >= self._max_in_flight
        share = max(1, self._max_in_flight // max(1, len(owned)))
        hold = set(owned) if full else self._ledger.busy(share) & owned
        paused = self._consumer.paused() & owned
        if hold - paused:
            self._consumer.pause(*(hold - paused))
        if paused - hold:
            self._consumer.resume(*(paused - hold))

    def _dispatch(self) -> None:
        if self._closed:
            return
        for task in self._ledger.start():
            self._tasks[task.partition] = asyncio.ensure_future(self._run(task))

    async def _run(self, task: Task[TopicPartition, Any]) -> None:
        try:
            await self._function(task.record)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if not await self._handled(task.record, exc):
                self._ledger.fail(task, exc)
                return
        if self._ledger.finish(task):
            self._tasks.pop(task.partition, None)
            self._dispatch()  # the partition's next record starts now, not at the next poll

    async def _handled(self, record: Any, exc: Exception) -> bool:
        if self._on_error is None:
            return False
        try:
            result = self._on_error(record, exc)
            if inspect.isawaitable(result):
                await result
        except Exception:
            return False
        return True


class _ProcessingListener(ProcessingListenerSteps, ConsumerRebalanceListener):  # type: ignore[misc]
    """Commits the finished work of revoked partitions before they leave; never of lost ones."""

    def __init__(self, processor: Processor, user: Any) -> None:
        self._processor = processor
        self._user = user

    async def _hand_over(self, partitions: set[TopicPartition]) -> None:
        await self._processor._revoke(partitions)

    def _forget(self, partitions: set[TopicPartition]) -> None:
        self._processor._release(partitions)

    async def _tell(self, kind: CallbackKind, partitions: set[TopicPartition]) -> None:
        """The user's listener: a RebalanceListener (KIP-1306) with its view; any other
        listener as before."""
        if isinstance(self._user, RebalanceListener):
            consumer = self._processor._consumer
            await invoke_async(
                self._user, kind, partitions, lambda name: rebalance_consumer(consumer, name)
            )
        else:
            name = lost_method(self._user) if kind == "lost" else f"on_partitions_{kind}"
            await call_user(self._user, name, partitions)
