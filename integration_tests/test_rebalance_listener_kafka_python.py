"""Java 4.5's listener (KIP-1306) on kafka-python 3.0 with the hooks, on a real broker.

Member ``a`` reads every record and commits nothing while it reads; ``b`` joins and takes
half the partitions. ``a``'s ``on_partitions_revoked`` commits the positions of the revoked
partitions through its ``RebalanceConsumer`` (``consumer.commit``, synchronous: the method
runs on a helper thread while kafka-python's IO loop goes on). Checked: ``b`` reads none of
``a``'s records again and, with more records written after the move, the two members
together read every record once (nothing lost); the committed offsets are ``a``'s positions
at the revocation; ``poll``/``close``/``subscribe``/``unsubscribe``/``wakeup`` were refused
inside the callback; the view kept by the listener refuses use once the callback returned.
Without the view's commit, ``b`` starts from the beginning and reads ``a``'s records again.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from kafka import KafkaConsumer, TopicPartition
from kafka.structs import OffsetAndMetadata

from kafka_sticky_plugin.brokers.embedded import RunningBroker
from kafka_sticky_plugin.kafka_python import (
    CooperativeStickyAssignor,
    RebalanceConsumer,
    RebalanceConsumerClosedError,
    RebalanceConsumerError,
    RebalanceListener,
    install_hooks,
)

pytestmark = [pytest.mark.timeout(120), pytest.mark.kafka_only()]

PARTITIONS = 4
FORBIDDEN = ("poll", "close", "subscribe", "unsubscribe", "wakeup")


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
        consumer.commit({tp: OffsetAndMetadata(at, "", -1) for tp, at in offsets.items()})
        self.committed.update(offsets)

    def on_partitions_assigned(self, partitions: set[Any], consumer: RebalanceConsumer) -> None:
        self.views.append(consumer)


def _member(bootstrap: str, group: str, topic: str, listener: RebalanceListener) -> Any:
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=group,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        partition_assignment_strategy=[CooperativeStickyAssignor],
        session_timeout_ms=6000,
        heartbeat_interval_ms=500,
    )
    install_hooks(consumer, listener=listener)
    consumer.subscribe([topic])
    return consumer


def _poll_until(
    members: dict[str, Any], seen: dict[str, list[tuple[int, int]]], done: Callable[[], bool]
) -> None:
    deadline = time.monotonic() + 60
    while not done():
        assert time.monotonic() < deadline, f"timed out; read so far: {seen}"
        for name, consumer in members.items():
            for records in consumer.poll(timeout_ms=100).values():
                seen[name].extend((r.partition, r.offset) for r in records)


def test_commit_on_revoke_through_the_view(
    broker: RunningBroker,
    topic_factory: Callable[[int], str],
    producer_factory: Callable[[str], Any],
    group_id: str,
) -> None:
    topic = topic_factory(PARTITIONS)
    producer = producer_factory(topic)
    producer.send_burst(200)
    listener = CommitOnRevoke()
    a = _member(broker.bootstrap, group_id, topic, listener)
    b: Any = None
    seen: dict[str, list[tuple[int, int]]] = {"a": [], "b": []}
    try:
        _poll_until({"a": a}, seen, lambda: len(seen["a"]) >= 200)
        first = a.end_offsets([TopicPartition(topic, p) for p in range(PARTITIONS)])
        b = _member(broker.bootstrap, group_id, topic, CommitOnRevoke())

        def split() -> bool:
            held = (a.assignment(), b.assignment())
            return all(held) and len(held[0] | held[1]) == PARTITIONS and bool(listener.committed)

        _poll_until({"a": a, "b": b}, seen, split)
        moved = set(listener.committed)
        assert moved == set(b.assignment())
        for tp in moved:  # a's position at the revocation (it had read everything) was committed
            assert listener.committed[tp] == first[tp] == b.committed(tp)
        producer.send_burst(40)
        ends = a.end_offsets([TopicPartition(topic, p) for p in range(PARTITIONS)])
        expected = {(tp.partition, o) for tp, end in ends.items() for o in range(end)}
        _poll_until({"a": a, "b": b}, seen, lambda: set(seen["a"]) | set(seen["b"]) >= expected)
    finally:
        for consumer in (b, a):
            if consumer is not None:
                consumer.close(autocommit=False)
    assert len(seen["a"]) == len(set(seen["a"])) and len(seen["b"]) == len(set(seen["b"]))
    assert not set(seen["a"]) & set(seen["b"]), "b read records a had committed on revoke"
    assert set(seen["a"]) | set(seen["b"]) == expected  # nothing lost
    assert listener.refused == list(FORBIDDEN) * (len(listener.refused) // len(FORBIDDEN))
    assert listener.refused
    for view in listener.views:
        with pytest.raises(RebalanceConsumerClosedError, match="no longer valid"):
            view.position(next(iter(moved)))
