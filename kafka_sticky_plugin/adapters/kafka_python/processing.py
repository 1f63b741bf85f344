"""kafka-python 3.x: long processing on a thread pool that never drops the member out of its group.

::

    processor = Processor(consumer, handle, max_in_flight=100, workers=4, revoke_wait_s=10)
    consumer.subscribe(["orders"], listener=processor.listener())
    while running:
        processor.poll(timeout_ms=500)   # instead of consumer.poll(); never blocks on the work
    processor.close()                    # finished work committed; then consumer.close()

``handle(record)`` runs on the pool, the records of one partition one after the other in
offset order; the consumer keeps polling with the partitions in work paused, so work longer
than ``max_poll_interval_ms`` keeps the member in the group. Offsets are committed only for
finished records (see :mod:`kafka_sticky_plugin.processing.ledger`), every
``commit_interval_s`` and from the listener before a revoked partition leaves. The listener
runs on kafka-python 3.x's IO thread: it waits for the revoked partitions' running work with
``await`` (the IO loop, heartbeats included, goes on), at most ``revoke_wait_s``; work still
running then is abandoned and its record goes to the next owner. The finished work's commit
is retried through a coordinator move (:func:`~.revoke_commit.commit_on_revoke`, at most
``request_timeout_ms`` and half of ``max_poll_interval_ms``). Lost partitions are never
committed. ``enable_auto_commit`` must be off (it would commit unfinished records).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kafka import KafkaConsumer, OffsetAndMetadata, TopicPartition

try:
    from kafka import AsyncConsumerRebalanceListener
except ImportError:  # kafka-python 2.x: no async listeners; Processor refuses to start there
    from kafka import ConsumerRebalanceListener as AsyncConsumerRebalanceListener  # type: ignore[assignment]

    _ASYNC_LISTENERS = False
else:
    _ASYNC_LISTENERS = True

from ...errors import ConfigurationError, UnsupportedClientError
from ...listener.contract import CallbackKind, RebalanceListener, check_rebalance_listener
from ...processing.threaded import ProcessingKeywords, ThreadedProcessor, processing_options
from ...processing.user_listener import ProcessingListenerSteps, call_user, lost_method
from .rebalance_consumer import call_off_loop
from .revoke_commit import commit_on_revoke

if TYPE_CHECKING:
    from typing import Unpack

__all__ = ["Processor"]

log = logging.getLogger("kafka_sticky_plugin.processing")

_WAIT_STEP_S = 0.05  # how often the revoke listener looks at the running work


class _Port:
    """:class:`~kafka_sticky_plugin.processing.threaded.ConsumerPort` over a KafkaConsumer."""

    def __init__(self, consumer: KafkaConsumer) -> None:
        self._consumer = consumer

    def fetch(self, timeout_s: float) -> list[tuple[TopicPartition, int, Any]]:
        _unstick_parked_records(self._consumer)
        batches = self._consumer.poll(timeout_ms=int(timeout_s * 1000))
        return [
            (tp, record.offset, record) for tp, records in batches.items() for record in records
        ]

    def owned(self) -> set[TopicPartition]:
        return set(self._consumer.assignment())

    def pause(self, partitions: set[TopicPartition]) -> None:
        self._consumer.pause(*partitions)

    def resume(self, partitions: set[TopicPartition]) -> None:
        self._consumer.resume(*partitions)

    def paused(self) -> set[TopicPartition]:
        return set(self._consumer.paused())

    def commit(self, offsets: dict[TopicPartition, int]) -> None:
        self._consumer.commit(_metadata(offsets))


def _unstick_parked_records(consumer: KafkaConsumer) -> None:
    """Work around kafka-python 3.0.12's fetcher: records parked for a paused partition are
    restored on resume only when its in-line slot is ``None``, but a drained in-line batch
    stays in the slot (empty, not ``None``), and a partition with parked records is never
    fetched again: after a pause in the middle of a batch, the partition would stall for
    good. Clearing a drained slot before each ``poll()`` lets it restore the parked records.
    Runs on the poll thread, where the fetcher reads that slot."""
    fetcher: Any = getattr(consumer, "_fetcher", None)
    slot = getattr(fetcher, "_next_partition_records", None)
    if slot is not None and not slot and getattr(fetcher, "_paused_partition_records", None):
        fetcher._next_partition_records = None


def _metadata(offsets: dict[TopicPartition, int]) -> dict[TopicPartition, OffsetAndMetadata]:
    return {tp: OffsetAndMetadata(offset, "", -1) for tp, offset in offsets.items()}


class Processor:
    """Per-partition in-order processing of a kafka-python 3.x consumer's records on a pool.

    Options (all keyword; defaults and checks in
    :class:`~kafka_sticky_plugin.processing.threaded.ProcessingOptions`): ``max_in_flight``
    records held at most (queued or running; one poll's records may come on top: bound them
    with ``max_poll_records``), ``workers`` threads (or your ``executor``), ``revoke_wait_s``
    how long a revocation waits for running work, ``commit_interval_s``,
    ``on_error(record, exc)`` (returning skips the record; without it a failure stops its
    partition and the next :meth:`poll` raises
    :class:`~kafka_sticky_plugin.processing.ProcessingError`), ``on_commit(offsets)``.
    """

    def __init__(
        self,
        consumer: KafkaConsumer,
        function: Callable[[Any], object],
        **options: Unpack[ProcessingKeywords],
    ) -> None:
        if not _ASYNC_LISTENERS:
            raise UnsupportedClientError(
                "Processor needs kafka-python 3.x (its revoke listener awaits the running work "
                "on the client's IO loop); on 2.x, commit only finished records yourself"
            )
        if consumer.config.get("enable_auto_commit"):
            raise ConfigurationError(
                "Processor needs enable_auto_commit=False: auto-commit would commit records "
                "whose processing has not finished"
            )
        self._consumer = consumer
        self._core: ThreadedProcessor[TopicPartition, Any] = ThreadedProcessor(
            _Port(consumer),
            function,
            processing_options("kafka_python.Processor", options),
        )

    def listener(self, listener: Any = None) -> AsyncConsumerRebalanceListener:
        """The rebalance listener to ``subscribe`` with; ``listener`` (yours, sync or async)
        is called after the processor's own work for each callback; a
        :class:`~kafka_sticky_plugin.listener.RebalanceListener` gets its
        ``RebalanceConsumer`` too."""
        if isinstance(listener, RebalanceListener):
            check_rebalance_listener(listener, coroutines=False)
        return _ProcessingListener(self._consumer, self._core, listener)

    def poll(self, timeout_ms: int = 500) -> int:
        """One turn: commit, pause/resume, ``consumer.poll``, start work; returns records queued."""
        return self._core.poll(timeout_ms / 1000)

    def commit(self) -> dict[TopicPartition, int]:
        """Commit finished work of owned partitions now; returns what was committed."""
        return self._core.commit()

    def close(self, wait_s: float | None = None) -> dict[TopicPartition, int]:
        """Wait for running work (at most ``wait_s``, default ``revoke_wait_s``), commit what
        finished, stop the pool. Call before ``consumer.close()``."""
        return self._core.close(wait_s)


class _ProcessingListener(ProcessingListenerSteps, AsyncConsumerRebalanceListener):  # type: ignore[misc]
    """Commits the finished work of revoked partitions before they leave; never of lost ones."""

    def __init__(
        self, consumer: KafkaConsumer, core: ThreadedProcessor[TopicPartition, Any], user: Any
    ) -> None:
        self._consumer = consumer
        self._core = core
        self._user = user

    async def _hand_over(self, partitions: set[TopicPartition]) -> None:
        self._core.revoking(partitions)
        deadline = time.monotonic() + self._core.revoke_wait_s
        while not self._core.drained(partitions) and time.monotonic() < deadline:
            await self._consumer._net.sleep(_WAIT_STEP_S)  # the IO loop goes on meanwhile
        offsets = self._core.handover(partitions)
        # Retried through a coordinator move (one commit_async gave up at NotCoordinator and
        # the next owner processed the finished records again); a final failure is logged.
        if offsets and await commit_on_revoke(self._consumer, _metadata(offsets)):
            self._core.handed_over(offsets)

    def _forget(self, partitions: set[TopicPartition]) -> None:
        self._core.lose(partitions)

    async def _tell(self, kind: CallbackKind, partitions: set[TopicPartition]) -> None:
        """The user's listener: a RebalanceListener (KIP-1306) gets its view, on a helper
        thread (:func:`.rebalance_consumer.call_off_loop`); any other listener as before."""
        if isinstance(self._user, RebalanceListener):
            await call_off_loop(self._consumer, self._user, kind, partitions)
        else:
            name = lost_method(self._user) if kind == "lost" else f"on_partitions_{kind}"
            await call_user(self._user, name, partitions)
