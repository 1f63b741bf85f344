"""Java 4.5's rebalance listener (KIP-1306) on a confluent-kafka consumer, through the
listener bridge (:mod:`.listener`).

``kafka_sticky_plugin.confluent.subscribe(consumer, topics, listener)`` with a
:class:`~kafka_sticky_plugin.listener.RebalanceListener` (and ``Processor.listener(...)``
with one) calls it through :func:`one_argument`: each callback gets a fresh
:class:`~kafka_sticky_plugin.listener.RebalanceConsumer` over this consumer, invalidated
when the method returns. librdkafka calls the callbacks inside ``poll()``, on the caller's
thread, so the methods are plain functions and the view's ``commit`` is synchronous (Java's
``commitSync``; ``commit_async`` is ``commitAsync``). The bridge's order is kept: revoked
partitions are still assigned during ``on_partitions_revoked`` and leave when it returns.

The view speaks Java's shapes over confluent-kafka's calls, with the bridge's
:class:`~.listener.TopicPartition` (topic, partition) and integer offsets: ``commit(offsets)``
takes ``{partition: next offset}`` (``None``: the positions of the assignment), ``position``
one partition, ``committed`` / ``beginning_offsets`` / ``end_offsets`` a collection and return
``{partition: offset}``. librdkafka has no ``paused()``, ``partitionsFor``, ``listTopics`` or
``offsetsForTimes`` here: the view does not offer them. A consumer has one listener, the one
``subscribe`` was given, so a second cannot be registered.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import confluent_kafka

from ...listener.contract import CallbackKind, RebalanceListener, invoke
from ...listener.view import RebalanceConsumer
from .listener import TopicPartition

__all__ = ["OneArgument", "one_argument", "rebalance_consumer"]


def _native(partition: Any, offset: int | None = None) -> confluent_kafka.TopicPartition:
    if offset is None:
        return confluent_kafka.TopicPartition(str(partition.topic), int(partition.partition))
    return confluent_kafka.TopicPartition(
        str(partition.topic), int(partition.partition), int(offset)
    )


def _ours(partition: confluent_kafka.TopicPartition) -> TopicPartition:
    return TopicPartition(partition.topic, partition.partition)


def _checked(result: Any) -> None:
    for tp in result or ():
        if getattr(tp, "error", None) is not None:
            raise confluent_kafka.KafkaException(tp.error)


def _operations(consumer: confluent_kafka.Consumer) -> dict[str, Callable[..., Any]]:
    """Java's view over confluent-kafka's calls (see the module docstring)."""

    def commit(offsets: Mapping[Any, int] | None = None) -> None:
        if offsets is None:
            _checked(consumer.commit(asynchronous=False))
            return
        if offsets:
            native = [_native(tp, offset) for tp, offset in offsets.items()]
            _checked(consumer.commit(offsets=native, asynchronous=False))

    def commit_async(offsets: Mapping[Any, int] | None = None) -> None:
        if offsets is None:
            consumer.commit(asynchronous=True)
        elif offsets:
            native = [_native(tp, offset) for tp, offset in offsets.items()]
            consumer.commit(offsets=native, asynchronous=True)

    def committed(partitions: Iterable[Any], timeout: float = -1) -> dict[TopicPartition, int]:
        found = consumer.committed([_native(tp) for tp in partitions], timeout=timeout)
        _checked(found)
        return {_ours(tp): tp.offset for tp in found}

    def position(partition: Any) -> int:
        (found,) = consumer.position([_native(partition)])
        return int(found.offset)

    def seek(partition: Any, offset: int) -> None:
        consumer.seek(_native(partition, offset))

    def seek_to_beginning(partitions: Iterable[Any]) -> None:
        for tp in partitions:
            consumer.seek(_native(tp, confluent_kafka.OFFSET_BEGINNING))

    def seek_to_end(partitions: Iterable[Any]) -> None:
        for tp in partitions:
            consumer.seek(_native(tp, confluent_kafka.OFFSET_END))

    def assignment() -> set[TopicPartition]:
        return {_ours(tp) for tp in consumer.assignment()}

    def pause(partitions: Iterable[Any]) -> None:
        consumer.pause([_native(tp) for tp in partitions])

    def resume(partitions: Iterable[Any]) -> None:
        consumer.resume([_native(tp) for tp in partitions])

    def watermarks(partitions: Iterable[Any], high: bool) -> dict[TopicPartition, int]:
        out: dict[TopicPartition, int] = {}
        for tp in partitions:
            low, top = consumer.get_watermark_offsets(_native(tp))
            out[TopicPartition(tp.topic, tp.partition)] = int(top if high else low)
        return out

    def beginning_offsets(partitions: Iterable[Any]) -> dict[TopicPartition, int]:
        return watermarks(partitions, high=False)

    def end_offsets(partitions: Iterable[Any]) -> dict[TopicPartition, int]:
        return watermarks(partitions, high=True)

    def group_metadata() -> Any:
        return consumer.consumer_group_metadata()

    return {
        "commit": commit,
        "commit_async": commit_async,
        "committed": committed,
        "position": position,
        "seek": seek,
        "seek_to_beginning": seek_to_beginning,
        "seek_to_end": seek_to_end,
        "assignment": assignment,
        "pause": pause,
        "resume": resume,
        "beginning_offsets": beginning_offsets,
        "end_offsets": end_offsets,
        "group_metadata": group_metadata,
    }


def rebalance_consumer(consumer: confluent_kafka.Consumer, callback: str) -> RebalanceConsumer:
    """A fresh view of ``consumer`` for one call of ``callback``."""
    return RebalanceConsumer(_operations(consumer), callback=callback, client="confluent-kafka")


class OneArgument:
    """A RebalanceListener in the bridge's one-argument shape (``on_partitions_revoked(revoked)``
    and so on), each call given its view of ``consumer``."""

    def __init__(self, consumer: confluent_kafka.Consumer, listener: RebalanceListener) -> None:
        self.consumer = consumer
        self.listener = listener

    def _call(self, kind: CallbackKind, partitions: set[TopicPartition]) -> None:
        invoke(self.listener, kind, partitions, lambda n: rebalance_consumer(self.consumer, n))

    def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        """The listener's ``on_partitions_revoked(revoked, view)``."""
        self._call("revoked", revoked)

    def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        """The listener's ``on_partitions_assigned(assigned, view)``."""
        self._call("assigned", assigned)

    def on_partitions_lost(self, lost: set[TopicPartition]) -> None:
        """The listener's ``on_partitions_lost(lost, view)`` (Java's default: revoked)."""
        self._call("lost", lost)

    def __repr__(self) -> str:
        return repr(self.listener)


def one_argument(consumer: confluent_kafka.Consumer, listener: Any) -> Any:
    """``listener`` as the bridge calls it: a RebalanceListener wrapped in
    :class:`OneArgument` (checked: plain methods only), anything else unchanged."""
    if isinstance(listener, RebalanceListener):
        from ...listener.contract import check_rebalance_listener

        check_rebalance_listener(listener, coroutines=False)
        return OneArgument(consumer, listener)
    return listener
