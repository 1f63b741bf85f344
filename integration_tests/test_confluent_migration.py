"""The supported range -> cooperative-sticky migrations for confluent-kafka, on a real broker.

librdkafka refuses Java's mixed-list rolling upgrade, so a group switches protocol while it is
stopped: under the same group id where the broker re-elects the protocol of an empty group
(Apache Kafka), or under a new group id with the committed offsets copied over (any broker,
including the embedded Tansu broker, which fixes a group's protocol forever). Either way no
record may be lost or read twice across a clean switch.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import confluent_kafka
import pytest

from kafka_sticky_plugin.confluent import (
    RebalanceProtocol,
    TopicPartition,
    check_config,
    copy_committed_offsets,
    create_consumer,
    subscribe,
)
from kafka_sticky_plugin.errors import ConfigurationError

PARTITIONS = 4
RECORDS = 200


class Quiet:
    """A listener with nothing to do: commit-on-revoke is the bridge's job."""

    def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        """Nothing to do."""

    def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        """Nothing to do."""


def produce(bootstrap: str, topic: str) -> None:
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "log_level": 3})
    for n in range(RECORDS):
        producer.produce(topic, key=f"key-{n % 13}".encode(), value=str(n).encode())
    assert producer.flush(15) == 0


def member_config(bootstrap: str, group: str, strategy: str) -> dict[str, Any]:
    return {
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "partition.assignment.strategy": strategy,
        "session.timeout.ms": 6000,
        "heartbeat.interval.ms": 1000,
        "max.poll.interval.ms": 10000,
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        "log_level": 3,
    }


def consume(config: dict[str, Any], topic: str, limit: int) -> list[tuple[int, int, int]]:
    """Read up to ``limit`` records as (partition, offset, value), then close cleanly
    (close revokes, and commit-on-revoke commits the positions)."""
    consumer = create_consumer(config)
    read: list[tuple[int, int, int]] = []
    try:
        subscribe(consumer, [topic], Quiet(), commit_on_revoke=True)
        deadline = time.monotonic() + 40
        while len(read) < limit and time.monotonic() < deadline:
            message = consumer.poll(0.2)
            if message is not None and message.error() is None:
                read.append(
                    (message.partition() or 0, message.offset() or 0, int(message.value() or -1))
                )
    finally:
        consumer.close()
    return read


def committed(bootstrap: str, group: str, topic: str) -> dict[TopicPartition, int]:
    reader = confluent_kafka.Consumer(
        {"bootstrap.servers": bootstrap, "group.id": group, "log_level": 3}
    )
    try:
        parts = [confluent_kafka.TopicPartition(topic, p) for p in range(PARTITIONS)]
        return {
            TopicPartition(tp.topic, tp.partition): tp.offset
            for tp in reader.committed(parts, timeout=10)
            if tp.offset >= 0
        }
    finally:
        reader.close()


def assert_clean_switch(
    before: list[tuple[int, int, int]], after: list[tuple[int, int, int]]
) -> None:
    values_before = [value for _, _, value in before]
    values_after = [value for _, _, value in after]
    assert not set(values_before) & set(values_after), "records read again after the switch"
    assert sorted(values_before + values_after) == list(range(RECORDS)), "records lost"


@pytest.mark.timeout(120)
def test_switch_under_a_new_group_id_with_copied_offsets(
    broker: Any, topic_factory: Callable[[int], str], group_id: str
) -> None:
    """range group stopped, offsets copied, cooperative-sticky group resumes exactly there."""
    topic = topic_factory(PARTITIONS)
    produce(broker.bootstrap, topic)
    old_config = member_config(broker.bootstrap, group_id, "range")
    assert check_config(old_config) is RebalanceProtocol.EAGER
    before = consume(old_config, topic, RECORDS // 2)
    assert len(before) == RECORDS // 2
    old_offsets = committed(broker.bootstrap, group_id, topic)
    assert sum(old_offsets.values()) == RECORDS // 2, "commit-on-revoke at close missed some"

    new_group = f"{group_id}-cooperative"
    copied = copy_committed_offsets(
        {"bootstrap.servers": broker.bootstrap, "log_level": 3}, group_id, new_group, [topic]
    )
    assert copied == old_offsets
    assert committed(broker.bootstrap, new_group, topic) == old_offsets

    new_config = member_config(broker.bootstrap, new_group, "cooperative-sticky")
    assert check_config(new_config) is RebalanceProtocol.COOPERATIVE
    after = consume(new_config, topic, RECORDS - len(before))
    assert_clean_switch(before, after)
    assert committed(broker.bootstrap, group_id, topic) == old_offsets, "source group changed"


@pytest.mark.timeout(60)
def test_copy_refuses_to_overwrite_a_group_with_offsets(
    broker: Any, topic_factory: Callable[[int], str], group_id: str
) -> None:
    """Copying onto a group that already committed would move it backwards: refused."""
    topic = topic_factory(PARTITIONS)
    produce(broker.bootstrap, topic)
    config = member_config(broker.bootstrap, group_id, "cooperative-sticky")
    assert consume(config, topic, 10)
    target = f"{group_id}-target"
    connection = {"bootstrap.servers": broker.bootstrap, "log_level": 3}
    assert consume(member_config(broker.bootstrap, target, "cooperative-sticky"), topic, 5)
    before = committed(broker.bootstrap, target, topic)
    with pytest.raises(ConfigurationError, match="already has committed offsets"):
        copy_committed_offsets(connection, group_id, target, [topic])
    assert committed(broker.bootstrap, target, topic) == before
    with pytest.raises(ConfigurationError, match="two different group ids"):
        copy_committed_offsets(connection, group_id, group_id, [topic])


@pytest.mark.timeout(60)
def test_copy_from_a_group_without_offsets_is_refused_unless_allowed(
    broker: Any, topic_factory: Callable[[int], str], group_id: str
) -> None:
    """A misspelt source group has nothing committed: refused, the target stays untouched;
    allow_empty=True accepts the empty copy."""
    topic = topic_factory(PARTITIONS)
    produce(broker.bootstrap, topic)
    assert consume(member_config(broker.bootstrap, group_id, "cooperative-sticky"), topic, 10)
    connection = {"bootstrap.servers": broker.bootstrap, "log_level": 3}
    target = f"{group_id}-target"
    with pytest.raises(ConfigurationError, match="has no committed offsets"):
        copy_committed_offsets(connection, f"{group_id}-misspelt", target, [topic])
    assert committed(broker.bootstrap, target, topic) == {}
    assert (
        copy_committed_offsets(
            connection, f"{group_id}-misspelt", target, [topic], allow_empty=True
        )
        == {}
    )


@pytest.mark.kafka_only("protocol_vote")
@pytest.mark.timeout(120)
def test_offline_switch_under_the_same_group_id(
    broker: Any, topic_factory: Callable[[int], str], group_id: str
) -> None:
    """Apache Kafka re-elects an empty group's protocol: stop all, restart cooperative."""
    topic = topic_factory(PARTITIONS)
    produce(broker.bootstrap, topic)
    before = consume(member_config(broker.bootstrap, group_id, "range"), topic, RECORDS // 2)
    after = consume(
        member_config(broker.bootstrap, group_id, "cooperative-sticky"),
        topic,
        RECORDS - len(before),
    )
    assert_clean_switch(before, after)
