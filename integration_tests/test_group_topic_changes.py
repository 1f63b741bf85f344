"""Topic changes during consumption, on a real broker.

- More partitions (CreatePartitions): the group's leader notices the new metadata and a
  rebalance hands the new partitions out, balanced, without moving the old ones more than
  balance needs. The embedded broker has no CreatePartitions, so this is ``kafka_only``.
- A subscribed topic deleted: the group keeps consuming the other topic, every partition of
  which stays owned by exactly one member, and no record of it is lost. On the embedded broker
  the leader's rejoin after the metadata change is ignored (no new generation, so members keep
  the deleted topic's partitions forever: measured in ``test_broker_profile.py``), so this is
  ``kafka_only`` too.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from kafka_sticky_plugin.testing.admin import delete_topic, grow_topic
from kafka_sticky_plugin.testing.analysis import analyse_deliveries
from kafka_sticky_plugin.testing.checks import (
    check_deliveries,
    check_exclusive_ownership,
    check_stable_assignment,
)
from kafka_sticky_plugin.testing.embedded_broker import RunningBroker
from kafka_sticky_plugin.testing.group import ConsumerGroupRunner

PARTITIONS = 6


@pytest.mark.kafka_only("partition_growth")
@pytest.mark.timeout(150)
@pytest.mark.parametrize("strategy", ["sticky", "cooperative-sticky"])
def test_partition_count_increased_during_consumption(
    strategy: str,
    broker: RunningBroker,
    topic_factory: Callable[[int], str],
    group_id: str,
    group_factory: Callable[..., ConsumerGroupRunner],
    producer_factory: Callable[[str], Any],
) -> None:
    """6 -> 12 partitions: the new ones get owners; old owners keep what balance allows."""
    topic = topic_factory(PARTITIONS)
    producer = producer_factory(topic)
    producer.send_burst(PARTITIONS * 10)
    producer.start(50)
    group = group_factory(group_id, {topic: PARTITIONS}, [strategy])
    group.start_members(["m0", "m1", "m2"])
    before = group.wait_stable(timeout_s=60)
    check_stable_assignment(before, group.all_partitions())
    grow_topic(broker.bootstrap, topic, PARTITIONS * 2)
    group.set_partition_count(topic, PARTITIONS * 2)
    after = group.wait_stable(timeout_s=90)
    check_stable_assignment(after, group.all_partitions())
    old_owner, new_owner = before.owner_of(), after.owner_of()
    assert all(new_owner[p] == old_owner[p] for p in old_owner), "old partitions moved"
    producer.stop()
    drained = group.wait_delivered(producer.acknowledged(), timeout_s=30)
    group.close()
    events = group.log.events()
    check_exclusive_ownership(events, time.monotonic())
    check_deliveries(analyse_deliveries(producer.acknowledged(), group.log.deliveries(), events))
    assert drained


@pytest.mark.kafka_only("leader_rejoin_rebalances")
@pytest.mark.timeout(150)
@pytest.mark.parametrize("strategy", ["sticky", "cooperative-sticky"])
def test_subscribed_topic_deleted_during_consumption(
    strategy: str,
    broker: RunningBroker,
    topic_factory: Callable[[int], str],
    group_id: str,
    group_factory: Callable[..., ConsumerGroupRunner],
    producer_factory: Callable[[str], Any],
) -> None:
    """The group outlives a deleted topic and keeps every partition of the other owned."""
    kept = topic_factory(PARTITIONS)
    doomed = topic_factory(PARTITIONS)
    producer = producer_factory(kept)
    producer.send_burst(PARTITIONS * 10)
    producer.start(50)
    group = group_factory(group_id, {kept: PARTITIONS, doomed: PARTITIONS}, [strategy])
    group.start_members(["m0", "m1"])
    before = group.wait_stable(timeout_s=60)
    check_stable_assignment(before, group.all_partitions())
    delete_topic(broker.bootstrap, doomed)
    group.set_partition_count(doomed, 0)
    after = group.wait_stable(timeout_s=90)
    check_stable_assignment(after, group.all_partitions())
    producer.stop()
    drained = group.wait_delivered(producer.acknowledged(), timeout_s=30)
    group.close()
    events = group.log.events()
    errors = [e.detail for e in events if e.kind == "error"]
    assert not errors, errors
    check_exclusive_ownership(events, time.monotonic())
    check_deliveries(analyse_deliveries(producer.acknowledged(), group.log.deliveries(), events))
    assert drained
