"""The commit guard on confluent-kafka against Apache Kafka (issue 25): a commit from a stale
view after a revocation is refused for the moved partitions (their new owner's offsets stay)
and the owned part lands; ``drop`` mode does the same without raising; a commit from
``on_partitions_lost`` is refused."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import Any

import confluent_kafka
import pytest

from kafka_sticky_plugin.confluent import (
    CommitRefusedError,
    TopicPartition,
    create_consumer,
    guard_commits,
    subscribe,
)

pytestmark = [pytest.mark.timeout(180), pytest.mark.kafka_only()]

PARTITIONS = 4
NEW_OWNER_OFFSET = 5
ZOMBIE_OFFSET = 999


class Listener:
    """Records calls; on loss tries a commit of the lost partitions (a zombie)."""

    def __init__(self) -> None:
        self.consumer: Any = None
        self.calls: list[str] = []
        self.lost_commit: BaseException | str | None = None

    def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        self.calls.append("revoked")

    def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        self.calls.append("assigned")

    def on_partitions_lost(self, lost: set[TopicPartition]) -> None:
        self.calls.append("lost")
        try:
            self.consumer.commit(offsets=stale(lost, ZOMBIE_OFFSET), asynchronous=False)
            self.lost_commit = "committed"
        except Exception as exc:
            self.lost_commit = exc


def stale(partitions: Any, offset: int) -> list[confluent_kafka.TopicPartition]:
    return [confluent_kafka.TopicPartition(tp.topic, tp.partition, offset) for tp in partitions]


def member(bootstrap: str, group: str, topic: str, listener: Listener) -> Any:
    consumer = create_consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "partition.assignment.strategy": "cooperative-sticky",
            "session.timeout.ms": 6000,
            "heartbeat.interval.ms": 500,
            "max.poll.interval.ms": 6000,
            "enable.auto.commit": False,
            "log_level": 0,
        }
    )
    guard_commits(consumer)
    listener.consumer = consumer
    subscribe(consumer, [topic], listener)
    return consumer


def owned(consumer: Any) -> set[int]:
    return {tp.partition for tp in consumer.assignment()}


def poll_until(consumers: list[Any], done: Callable[[], bool], timeout_s: float = 45) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for consumer in consumers:
            consumer.poll(0.1)
        if done():
            return
    raise AssertionError(f"no settled group: {[sorted(owned(c)) for c in consumers]}")


def committed(consumer: Any, topic: str) -> dict[int, int]:
    parts = [confluent_kafka.TopicPartition(topic, p) for p in range(PARTITIONS)]
    return {tp.partition: tp.offset for tp in consumer.committed(parts, timeout=10)}


def test_zombie_commits_after_a_revoke_and_a_loss_are_refused(
    broker: Any, topic_factory: Callable[[int], str], group_id: str
) -> None:
    topic = topic_factory(PARTITIONS)
    la, lb = Listener(), Listener()
    a = member(broker.bootstrap, group_id, topic, la)
    b = None
    try:
        poll_until([a], lambda: owned(a) == set(range(PARTITIONS)))
        view = a.assignment()  # a's view before b joins
        b = member(broker.bootstrap, group_id, topic, lb)
        poll_until([a, b], lambda: len(owned(a)) == 2 and len(owned(b)) == 2)
        for _ in range(10):  # let the cooperative follow-up round finish
            a.poll(0.1)
            b.poll(0.1)
        moved = owned(b)
        b.commit(offsets=stale(b.assignment(), NEW_OWNER_OFFSET), asynchronous=False)
        with pytest.raises(CommitRefusedError) as refused:
            a.commit(offsets=stale(view, ZOMBIE_OFFSET), asynchronous=False)
        assert [p for _t, p in refused.value.refused] == sorted(moved)
        seen = committed(a, topic)
        assert {seen[p] for p in moved} == {NEW_OWNER_OFFSET}, seen
        assert {seen[p] for p in owned(a)} == {ZOMBIE_OFFSET}, seen  # the owned part landed
        guard_commits(a, "drop")
        a.commit(offsets=stale(view, ZOMBIE_OFFSET + 1), asynchronous=False)  # no raise
        seen = committed(a, topic)
        assert {seen[p] for p in moved} == {NEW_OWNER_OFFSET}, seen
        assert {seen[p] for p in owned(a)} == {ZOMBIE_OFFSET + 1}, seen
        guard_commits(a, "refuse")
        # a stops polling past max.poll.interval.ms; b goes on and takes everything
        poll_until([b], lambda: owned(b) == set(range(PARTITIONS)), timeout_s=30)
        b.commit(offsets=stale(b.assignment(), NEW_OWNER_OFFSET), asynchronous=False)
        deadline = time.monotonic() + 20
        while "lost" not in la.calls and time.monotonic() < deadline:
            with contextlib.suppress(confluent_kafka.KafkaException):  # MAX_POLL_EXCEEDED
                a.poll(0.2)
            b.poll(0.1)
        assert "lost" in la.calls, la.calls
        assert isinstance(la.lost_commit, CommitRefusedError), la.lost_commit
        assert committed(b, topic) == {p: NEW_OWNER_OFFSET for p in range(PARTITIONS)}
    finally:
        a.close()
        if b is not None:
            b.close()
