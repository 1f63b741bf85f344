"""Lost partitions on the real broker: reported through on_partitions_lost, never committed.

A confluent-kafka member that stops polling past ``max.poll.interval.ms`` is expelled; when it
polls again librdkafka reports its partitions as lost. Without an ``on_lost`` callback
confluent-kafka routes them to ``on_revoke``, where a commit-on-revoke handler commits for a
membership that no longer exists (the broker refuses it). Through
:func:`kafka_sticky_plugin.confluent.subscribe` the listener hears ``lost``, nothing is
committed, and ``poll()`` goes on. Errors raised inside the listener leave ``poll()`` as real,
catchable exceptions.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import confluent_kafka
import pytest

from kafka_sticky_plugin.confluent import (
    TopicPartition,
    commit_positions,
    create_consumer,
    subscribe,
)

PARTITIONS = 2


class Recorder:
    """Remembers which callback saw which partitions."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, set[int]]] = []

    def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        self.calls.append(("revoked", {tp.partition for tp in revoked}))

    def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        self.calls.append(("assigned", {tp.partition for tp in assigned}))

    def on_partitions_lost(self, lost: set[TopicPartition]) -> None:
        self.calls.append(("lost", {tp.partition for tp in lost}))


def config(bootstrap: str, group: str) -> dict[str, Any]:
    return {
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "partition.assignment.strategy": "cooperative-sticky",
        "session.timeout.ms": 6000,
        "heartbeat.interval.ms": 1000,
        "max.poll.interval.ms": 6000,
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        "log_level": 0,
    }


def fill(bootstrap: str, topic: str) -> None:
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "log_level": 3})
    for n in range(100):
        producer.produce(topic, partition=n % PARTITIONS, value=str(n).encode())
    assert producer.flush(15) == 0


def read_some(consumer: confluent_kafka.Consumer, count: int) -> None:
    read, deadline = 0, time.monotonic() + 30
    while read < count and time.monotonic() < deadline:
        message = consumer.poll(0.2)
        if message is not None and message.error() is None:
            read += 1
    assert read == count, f"read only {read} records"


def committed(consumer: confluent_kafka.Consumer, topic: str) -> dict[int, int]:
    parts = [confluent_kafka.TopicPartition(topic, p) for p in range(PARTITIONS)]
    return {tp.partition: tp.offset for tp in consumer.committed(parts, timeout=10)}


def expel(consumer: confluent_kafka.Consumer) -> list[str]:
    """Stop polling past max.poll.interval.ms, then poll for a few seconds; return errors."""
    time.sleep(8)
    errors = []
    for _ in range(20):
        try:
            message = consumer.poll(0.2)
        except confluent_kafka.KafkaException as exc:
            errors.append(repr(exc))
            continue
        if message is not None and message.error() is not None:
            errors.append(str(message.error()))
    return errors


@pytest.mark.timeout(90)
def test_lost_partitions_are_reported_as_lost_and_never_committed(
    broker: Any, topic_factory: Callable[[int], str], group_id: str
) -> None:
    """After expulsion: on_partitions_lost, no commit, no exception, offsets unchanged."""
    topic = topic_factory(PARTITIONS)
    fill(broker.bootstrap, topic)
    consumer = create_consumer(config(broker.bootstrap, group_id))
    listener = Recorder()
    try:
        subscribe(consumer, [topic], listener, commit_on_revoke=True)
        read_some(consumer, 10)
        commit_positions(consumer, consumer.assignment())
        before = committed(consumer, topic)
        read_some(consumer, 20)  # read, not committed: in flight when the member is expelled
        errors = expel(consumer)
        assert ("lost", set(range(PARTITIONS))) in listener.calls, listener.calls
        assert not [c for c in listener.calls if c[0] == "revoked"], listener.calls
        assert all("MAX_POLL_EXCEEDED" in e for e in errors), errors
        assert committed(consumer, topic) == before
    finally:
        consumer.close()


@pytest.mark.timeout(90)
def test_without_on_lost_a_commit_on_revoke_handler_commits_for_a_dead_membership(
    broker: Any, topic_factory: Callable[[int], str], group_id: str
) -> None:
    """The mistake the bridge prevents: confluent-kafka's default sends lost partitions to
    on_revoke, and a commit there is for a membership the broker no longer knows."""
    topic = topic_factory(PARTITIONS)
    fill(broker.bootstrap, topic)
    consumer = confluent_kafka.Consumer(config(broker.bootstrap, group_id))
    revoked: list[list[int]] = []
    refused: list[str] = []

    def on_revoke(c: confluent_kafka.Consumer, parts: list[confluent_kafka.TopicPartition]) -> None:
        revoked.append(sorted(tp.partition for tp in parts))
        try:
            commit_positions(c, parts)
        except confluent_kafka.KafkaException as exc:  # never let it leave the callback raw
            refused.append(repr(exc))

    try:
        consumer.subscribe([topic], on_revoke=on_revoke)
        read_some(consumer, 30)
        expel(consumer)
        assert revoked == [list(range(PARTITIONS))], revoked
        assert any("UNKNOWN_MEMBER_ID" in e or "ILLEGAL_GENERATION" in e for e in refused), refused
    finally:
        consumer.close()


class SeeksNowhere(Recorder):
    """A listener whose on_partitions_assigned makes confluent-kafka's C code raise."""

    def __init__(self, consumer: confluent_kafka.Consumer, topic: str) -> None:
        super().__init__()
        self.consumer, self.topic = consumer, topic

    def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        super().on_partitions_assigned(assigned)
        self.consumer.seek(confluent_kafka.TopicPartition(self.topic, 99, 0))


@pytest.mark.timeout(60)
def test_a_listener_error_leaves_poll_as_a_catchable_exception(
    broker: Any, topic_factory: Callable[[int], str], group_id: str
) -> None:
    """A KafkaException raised by confluent-kafka's C code inside the listener comes out of
    poll() as a real KafkaException: confluent-kafka 2.16 on Python < 3.12 would re-raise the
    bare KafkaError, which no except clause catches. The assignment is in place regardless."""
    topic = topic_factory(PARTITIONS)
    consumer = create_consumer(config(broker.bootstrap, group_id))
    listener = SeeksNowhere(consumer, topic)
    caught: list[confluent_kafka.KafkaException] = []
    try:
        subscribe(consumer, [topic], listener)
        deadline = time.monotonic() + 30
        while not caught and time.monotonic() < deadline:
            try:
                consumer.poll(0.2)
            except confluent_kafka.KafkaException as exc:
                caught.append(exc)
        assert caught, "the listener's error never came out of poll()"
        assert ("assigned", set(range(PARTITIONS))) in listener.calls, listener.calls
        assert {tp.partition for tp in consumer.assignment()} == set(range(PARTITIONS))
    finally:
        consumer.close()
