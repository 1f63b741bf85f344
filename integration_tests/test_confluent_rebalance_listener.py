"""Java 4.5's listener (KIP-1306) on confluent-kafka through the bridge, with the commit
guard, on a real broker.

Member ``a`` reads every record and commits nothing while it reads; ``b`` joins and takes
half the partitions. ``a``'s ``on_partitions_revoked`` commits the positions of the revoked
partitions through its ``RebalanceConsumer`` (``consumer.commit``, synchronous, inside
``poll()`` as librdkafka runs the callback; the guard lets it through: the partitions are
still ``a``'s). Checked: the committed offsets are ``a``'s positions at the revocation,
``b`` reads none of ``a``'s records again, and with more records written after the move the
two read every record once (nothing lost); ``poll``/``consume``/``close``/``subscribe``/
``unsubscribe``/``incremental_assign`` were refused inside the callback; the kept views
refuse use afterwards. Without the view's commit, ``b`` starts from the beginning.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import confluent_kafka
import pytest

from kafka_sticky_plugin import RebalanceListener
from kafka_sticky_plugin.confluent import (
    RebalanceConsumer,
    RebalanceConsumerClosedError,
    RebalanceConsumerError,
    TopicPartition,
    create_consumer,
    guard_commits,
    subscribe,
)

pytestmark = [pytest.mark.timeout(120), pytest.mark.kafka_only()]

PARTITIONS = 4
FORBIDDEN = ("poll", "consume", "close", "subscribe", "unsubscribe", "incremental_assign")
Read = dict[str, list[tuple[int, int]]]


class CommitOnRevoke(RebalanceListener):
    """Commits the revoked partitions' positions through the view; keeps the views."""

    def __init__(self) -> None:
        self.committed: dict[TopicPartition, int] = {}
        self.refused: list[str] = []
        self.views: list[RebalanceConsumer] = []

    def on_partitions_revoked(self, partitions: set[Any], consumer: RebalanceConsumer) -> None:
        self.views.append(consumer)
        for name in FORBIDDEN:
            try:
                getattr(consumer, name)
            except RebalanceConsumerError:
                self.refused.append(name)
        offsets = {tp: consumer.position(tp) for tp in partitions}
        consumer.commit(offsets)
        self.committed.update(offsets)

    def on_partitions_assigned(self, partitions: set[Any], consumer: RebalanceConsumer) -> None:
        self.views.append(consumer)


def _member(bootstrap: str, group: str, topic: str, listener: RebalanceListener) -> Any:
    consumer = create_consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "partition.assignment.strategy": "cooperative-sticky",
            "session.timeout.ms": 6000,
            "heartbeat.interval.ms": 500,
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            "log_level": 0,
        }
    )
    guard_commits(consumer)
    subscribe(consumer, [topic], listener)
    return consumer


def _read_until(members: dict[str, Any], seen: Read, done: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 60
    while not done():
        assert time.monotonic() < deadline, f"timed out; read so far: {seen}"
        for name, consumer in members.items():
            for message in consumer.consume(num_messages=100, timeout=0.1):
                if message.error() is None:
                    seen[name].append((message.partition(), message.offset()))


def _produce(bootstrap: str, topic: str, count: int) -> None:
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "log_level": 3})
    for n in range(count):
        producer.produce(topic, key=f"k{n % 64}".encode(), value=str(n).encode())
    assert producer.flush(15) == 0


def _ends(consumer: Any, topic: str) -> dict[TopicPartition, int]:
    out = {}
    for p in range(PARTITIONS):
        _low, high = consumer.get_watermark_offsets(confluent_kafka.TopicPartition(topic, p))
        out[TopicPartition(topic, p)] = high
    return out


def _committed(consumer: Any, partitions: set[TopicPartition]) -> dict[TopicPartition, int]:
    native = [confluent_kafka.TopicPartition(tp.topic, tp.partition) for tp in partitions]
    return {
        TopicPartition(tp.topic, tp.partition): tp.offset
        for tp in consumer.committed(native, timeout=10)
    }


def test_commit_on_revoke_through_the_view(
    broker: Any, topic_factory: Callable[[int], str], group_id: str
) -> None:
    topic = topic_factory(PARTITIONS)
    _produce(broker.bootstrap, topic, 200)
    listener = CommitOnRevoke()
    a = _member(broker.bootstrap, group_id, topic, listener)
    b: Any = None
    seen: Read = {"a": [], "b": []}
    try:
        _read_until({"a": a}, seen, lambda: len(seen["a"]) >= 200)
        first = _ends(a, topic)
        b = _member(broker.bootstrap, group_id, topic, CommitOnRevoke())

        def split() -> bool:
            held = ({*a.assignment()}, {*b.assignment()})
            return all(held) and len(held[0] | held[1]) == PARTITIONS and bool(listener.committed)

        _read_until({"a": a, "b": b}, seen, split)
        moved = set(listener.committed)
        assert moved == {TopicPartition(tp.topic, tp.partition) for tp in b.assignment()}
        now = _committed(b, moved)
        for tp in moved:  # a's position at the revocation (it had read everything) was committed
            assert listener.committed[tp] == first[tp] == now[tp]
        _produce(broker.bootstrap, topic, 40)
        ends = _ends(a, topic)
        expected = {(tp.partition, o) for tp, end in ends.items() for o in range(end)}
        _read_until({"a": a, "b": b}, seen, lambda: set(seen["a"]) | set(seen["b"]) >= expected)
    finally:
        for consumer in (b, a):
            if consumer is not None:
                consumer.close()
    assert len(seen["a"]) == len(set(seen["a"])) and len(seen["b"]) == len(set(seen["b"]))
    assert not set(seen["a"]) & set(seen["b"]), "b read records a had committed on revoke"
    assert set(seen["a"]) | set(seen["b"]) == expected  # nothing lost
    assert listener.refused and listener.refused == list(FORBIDDEN) * (
        len(listener.refused) // len(FORBIDDEN)
    )
    for view in listener.views:
        with pytest.raises(RebalanceConsumerClosedError, match="no longer valid"):
            view.assignment()
