"""confluent-kafka: long processing on a thread pool that never drops the member out of its group.

::

    consumer = create_consumer({..., "enable.auto.commit": False})
    processor = Processor(consumer, handle, max_in_flight=100, workers=4, revoke_wait_s=10)
    subscribe(consumer, ["orders"], processor.listener())   # commit_on_revoke stays off
    while running:
        processor.poll(0.5)              # instead of consumer.poll(); never blocks on the work
    processor.close()                    # finished work committed; then consumer.close()

``handle(message)`` runs on the pool, the messages of one partition one after the other in
offset order; the consumer keeps polling with the partitions in work paused, so work longer
than ``max.poll.interval.ms`` keeps the member in the group. Offsets are committed only for
finished messages (:mod:`kafka_sticky_plugin.processing.ledger`), every ``commit_interval_s``
and, synchronously, from the revoke callback (librdkafka runs it inside ``poll()`` on the
caller's thread) after waiting at most ``revoke_wait_s`` for the revoked partitions' running
work; work still running then is abandoned and its message goes to the next owner. Lost
partitions are never committed. Messages carrying an error are logged and skipped.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import confluent_kafka

from ...processing.threaded import ProcessingKeywords, ThreadedProcessor, processing_options
from .listener import RebalanceListener, TopicPartition
from .rebalance_consumer import one_argument

if TYPE_CHECKING:
    from typing import Unpack

__all__ = ["Processor"]

log = logging.getLogger("kafka_sticky_plugin.processing")


def _native(offsets: dict[TopicPartition, int]) -> list[confluent_kafka.TopicPartition]:
    return [confluent_kafka.TopicPartition(tp.topic, tp.partition, o) for tp, o in offsets.items()]


def _commit(consumer: confluent_kafka.Consumer, offsets: dict[TopicPartition, int]) -> None:
    """Commit ``offsets`` synchronously; raise ``KafkaException`` if any partition failed."""
    for tp in consumer.commit(offsets=_native(offsets), asynchronous=False) or []:
        if tp.error is not None:
            raise confluent_kafka.KafkaException(tp.error)


class _Port:
    """:class:`~kafka_sticky_plugin.processing.threaded.ConsumerPort` over a confluent Consumer.

    librdkafka has no ``paused()``: the port remembers what it paused (of owned partitions;
    a partition assigned again starts unpaused, as in librdkafka).
    """

    def __init__(self, consumer: confluent_kafka.Consumer, batch: int) -> None:
        self._consumer = consumer
        self._batch = batch
        self._paused: set[TopicPartition] = set()

    def fetch(self, timeout_s: float) -> list[tuple[TopicPartition, int, Any]]:
        out: list[tuple[TopicPartition, int, Any]] = []
        for message in self._consumer.consume(num_messages=self._batch, timeout=timeout_s):
            topic, partition, offset = message.topic(), message.partition(), message.offset()
            if message.error() is not None or topic is None or partition is None or offset is None:
                log.warning("consumer error, skipped: %s", message.error())
                continue
            out.append((TopicPartition(topic, partition), offset, message))
        return out

    def owned(self) -> set[TopicPartition]:
        return {TopicPartition(tp.topic, tp.partition) for tp in self._consumer.assignment()}

    def pause(self, partitions: set[TopicPartition]) -> None:
        self._consumer.pause(
            [confluent_kafka.TopicPartition(tp.topic, tp.partition) for tp in partitions]
        )
        self._paused |= partitions

    def resume(self, partitions: set[TopicPartition]) -> None:
        self._consumer.resume(
            [confluent_kafka.TopicPartition(tp.topic, tp.partition) for tp in partitions]
        )
        self._paused -= partitions

    def paused(self) -> set[TopicPartition]:
        self._paused &= self.owned()
        return set(self._paused)

    def forget(self, partitions: set[TopicPartition]) -> None:
        """``partitions`` left the assignment: a later assignment starts them unpaused."""
        self._paused -= partitions

    def commit(self, offsets: dict[TopicPartition, int]) -> None:
        _commit(self._consumer, offsets)


class Processor:
    """Per-partition in-order processing of a confluent-kafka consumer's messages on a pool.

    Options as :class:`kafka_sticky_plugin.kafka_python.Processor`, plus ``batch``: the most
    messages one ``consume()`` returns (they may come on top of ``max_in_flight``).
    """

    def __init__(
        self,
        consumer: confluent_kafka.Consumer,
        function: Callable[[Any], object],
        *,
        batch: int = 100,
        **options: Unpack[ProcessingKeywords],
    ) -> None:
        self._consumer = consumer
        self._port = _Port(consumer, batch)
        self._core: ThreadedProcessor[TopicPartition, Any] = ThreadedProcessor(
            self._port,
            function,
            processing_options("confluent.Processor", options),
        )

    def listener(self, listener: Any = None) -> RebalanceListener:
        """The listener to pass to :func:`~kafka_sticky_plugin.confluent.subscribe` (with
        ``commit_on_revoke`` off); ``listener`` (yours) is called after the processor's work,
        a :class:`~kafka_sticky_plugin.listener.RebalanceListener` with its view."""
        user = one_argument(self._consumer, listener)
        return _ProcessingListener(self._consumer, self._port, self._core, user)

    def poll(self, timeout_s: float = 0.5) -> int:
        """One turn: commit, pause/resume, ``consume()``, start work; returns messages queued."""
        return self._core.poll(timeout_s)

    def commit(self) -> dict[TopicPartition, int]:
        """Commit finished work of owned partitions now; returns what was committed."""
        return self._core.commit()

    def close(self, wait_s: float | None = None) -> dict[TopicPartition, int]:
        """Wait for running work (at most ``wait_s``, default ``revoke_wait_s``), commit what
        finished, stop the pool. Call before ``consumer.close()``."""
        return self._core.close(wait_s)


class _ProcessingListener:
    """Commits the finished work of revoked partitions before they leave; never of lost ones."""

    def __init__(
        self,
        consumer: confluent_kafka.Consumer,
        port: _Port,
        core: ThreadedProcessor[TopicPartition, Any],
        user: RebalanceListener | None,
    ) -> None:
        self._consumer = consumer
        self._port = port
        self._core = core
        self._user = user

    def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        self._core.revoking(revoked)
        self._core.wait_drained(revoked, self._core.revoke_wait_s)
        offsets = self._core.handover(revoked)
        self._port.forget(revoked)
        if offsets:
            try:
                _commit(self._consumer, offsets)
            except confluent_kafka.KafkaException as exc:
                log.warning("revoked %s: finished work not committed: %s", offsets, exc)
            else:
                self._core.handed_over(offsets)
        if self._user is not None:
            self._user.on_partitions_revoked(revoked)

    def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        if self._user is not None:
            self._user.on_partitions_assigned(assigned)

    def on_partitions_lost(self, lost: set[TopicPartition]) -> None:
        self._core.lose(lost)
        self._port.forget(lost)
        if self._user is not None:
            handler = getattr(self._user, "on_partitions_lost", self._user.on_partitions_revoked)
            handler(lost)
