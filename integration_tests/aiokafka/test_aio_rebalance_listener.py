"""Java 4.5's listener (KIP-1306) on aiokafka with the hooks and the commit guard, on a real
broker (run once per aiokafka matrix venv).

Member ``a`` reads every record and commits nothing while it reads; ``b`` joins and takes
half the partitions. ``a``'s ``async on_partitions_revoked`` awaits ``consumer.position`` and
``consumer.commit`` on its ``RebalanceConsumer`` (the guard lets the commit through: the
partitions are still ``a``'s). Checked: the committed offsets are ``a``'s positions at the
revocation, ``b`` reads none of ``a``'s records again, and with more records written after
the move the two read every record once (nothing lost); ``getmany``/``stop``/``subscribe``/
``unsubscribe`` were refused inside the callback; the kept views refuse use afterwards.
Without the view's commit, ``b`` starts from the beginning (committed offsets ``None``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from hooks_harness import create_topics, unique

from kafka_sticky_plugin.aiokafka import (
    CooperativeStickyAssignor,
    RebalanceConsumer,
    RebalanceConsumerClosedError,
    RebalanceConsumerError,
    RebalanceListener,
    guard_commits,
    install_hooks,
)

pytestmark = [pytest.mark.timeout(120), pytest.mark.kafka_only()]

PARTITIONS = 4
FORBIDDEN = ("getmany", "stop", "subscribe", "unsubscribe")
Read = dict[str, list[tuple[int, int]]]


class CommitOnRevoke(RebalanceListener):
    """Commits the revoked partitions' positions through the view; keeps the views."""

    def __init__(self) -> None:
        self.committed: dict[TopicPartition, int] = {}
        self.refused: list[str] = []
        self.views: list[RebalanceConsumer] = []

    async def on_partitions_revoked(self, partitions: set[Any], consumer: Any) -> None:
        self.views.append(consumer)
        for name in FORBIDDEN:
            try:
                getattr(consumer, name)
            except RebalanceConsumerError:
                self.refused.append(name)
        offsets = {tp: await consumer.position(tp) for tp in partitions}
        await consumer.commit(offsets)
        self.committed.update(offsets)

    def on_partitions_assigned(self, partitions: set[Any], consumer: Any) -> None:
        self.views.append(consumer)


def _member(bootstrap: str, group: str, topic: str, listener: RebalanceListener) -> Any:
    consumer = AIOKafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        group_id=group,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        partition_assignment_strategy=[CooperativeStickyAssignor],
        session_timeout_ms=6000,
        heartbeat_interval_ms=500,
    )
    install_hooks(consumer, listener=listener)
    guard_commits(consumer)
    return consumer


async def _read_until(members: dict[str, Any], seen: Read, done: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 60
    while not done():
        assert time.monotonic() < deadline, f"timed out; read so far: {seen}"
        for name, consumer in members.items():
            batches = await consumer.getmany(timeout_ms=100)
            for records in batches.values():
                seen[name].extend((r.partition, r.offset) for r in records)


async def _produce(bootstrap: str, topic: str, count: int, start: int) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all")
    await producer.start()
    try:
        for n in range(start, start + count):
            await producer.send(topic, f"v{n}".encode(), key=f"k{n % 64}".encode())
        await producer.flush()
    finally:
        await producer.stop()


async def _scenario(bootstrap: str, group: str, topic: str) -> None:
    await _produce(bootstrap, topic, 200, 0)
    listener = CommitOnRevoke()
    a = _member(bootstrap, group, topic, listener)
    b = _member(bootstrap, group, topic, CommitOnRevoke())
    seen: Read = {"a": [], "b": []}
    everything = [TopicPartition(topic, p) for p in range(PARTITIONS)]
    await a.start()
    try:
        await _read_until({"a": a}, seen, lambda: len(seen["a"]) >= 200)
        first = await a.end_offsets(everything)
        await b.start()

        def split() -> bool:
            held = (a.assignment(), b.assignment())
            return all(held) and len(held[0] | held[1]) == PARTITIONS and bool(listener.committed)

        await _read_until({"a": a, "b": b}, seen, split)
        moved = set(listener.committed)
        assert moved == set(b.assignment())
        for tp in moved:  # a's position at the revocation (it had read everything) was committed
            assert listener.committed[tp] == first[tp] == await b.committed(tp)
        await _produce(bootstrap, topic, 40, 200)
        ends = await a.end_offsets(everything)
        expected = {(tp.partition, o) for tp, end in ends.items() for o in range(end)}
        await _read_until(
            {"a": a, "b": b}, seen, lambda: set(seen["a"]) | set(seen["b"]) >= expected
        )
    finally:
        await b.stop()
        await a.stop()
    assert len(seen["a"]) == len(set(seen["a"])) and len(seen["b"]) == len(set(seen["b"]))
    assert not set(seen["a"]) & set(seen["b"]), "b read records a had committed on revoke"
    assert set(seen["a"]) | set(seen["b"]) == expected  # nothing lost
    assert listener.refused and listener.refused == list(FORBIDDEN) * (
        len(listener.refused) // len(FORBIDDEN)
    )
    for view in listener.views:
        with pytest.raises(RebalanceConsumerClosedError, match="no longer valid"):
            view.assignment()


def test_commit_on_revoke_through_the_view(broker: Any) -> None:
    topic = unique("t-aio-kip1306")
    create_topics(broker.bootstrap, {topic: PARTITIONS})
    asyncio.run(_scenario(broker.bootstrap, unique("g-aio-kip1306"), topic))
