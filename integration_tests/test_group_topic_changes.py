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

import pytest
from group_flow import FlowingGroupFactory

from kafka_sticky_plugin.brokers.embedded import RunningBroker
from kafka_sticky_plugin.groups.admin import delete_topic, grow_topic
from testlab.checks import check_stable_assignment

PARTITIONS = 6


@pytest.mark.kafka_only("partition_growth")
@pytest.mark.timeout(150)
@pytest.mark.parametrize("strategy", ["sticky", "cooperative-sticky"])
def test_partition_count_increased_during_consumption(
    strategy: str, broker: RunningBroker, flowing_group: FlowingGroupFactory
) -> None:
    """6 -> 12 partitions: the new ones get owners; old owners keep what balance allows."""
    flow = flowing_group([strategy], PARTITIONS, rate_per_s=50)
    topic, group = flow.topic, flow.group
    group.start_members(["m0", "m1", "m2"])
    before = group.wait_stable(timeout_s=60)
    check_stable_assignment(before, group.all_partitions())
    grow_topic(broker.bootstrap, topic, PARTITIONS * 2)
    group.set_partition_count(topic, PARTITIONS * 2)
    after = group.wait_stable(timeout_s=90)
    check_stable_assignment(after, group.all_partitions())
    old_owner, new_owner = before.owner_of(), after.owner_of()
    assert all(new_owner[p] == old_owner[p] for p in old_owner), "old partitions moved"
    flow.finish()


@pytest.mark.kafka_only("leader_rejoin_rebalances")
@pytest.mark.timeout(150)
@pytest.mark.parametrize("strategy", ["sticky", "cooperative-sticky"])
def test_subscribed_topic_deleted_during_consumption(
    strategy: str, broker: RunningBroker, flowing_group: FlowingGroupFactory
) -> None:
    """The group outlives a deleted topic and keeps every partition of the other owned."""
    # The produced topic is the one kept; the idle one is deleted.
    flow = flowing_group([strategy], PARTITIONS, rate_per_s=50, idle_topics=1)
    (doomed,) = flow.idle_topics
    group = flow.group
    group.start_members(["m0", "m1"])
    before = group.wait_stable(timeout_s=60)
    check_stable_assignment(before, group.all_partitions())
    delete_topic(broker.bootstrap, doomed)
    group.set_partition_count(doomed, 0)
    after = group.wait_stable(timeout_s=90)
    check_stable_assignment(after, group.all_partitions())
    flow.stop()
    errors = [e.detail for e in group.log.events() if e.kind == "error"]
    assert not errors, errors
    flow.check_guarantees()
