"""Rack-aware members on Apache Kafka (issue 42, KIP-881 and KIP-392): three brokers in racks
r0/r1/r2 with ``RackAwareReplicaSelector``, one cluster shared by every scenario.

- **A rolling bounce** (each broker stopped, restarted, back in every ISR, then the next),
  steady production, rack-aware members of hooked kafka-python and hooked aiokafka
  (cooperative-sticky, one member per rack, ``metadata_max_age_ms`` at its 5-minute default so
  nothing but the client itself refreshes the metadata): no rebalance, and after each restart
  every acknowledged record is delivered within :data:`CATCH_UP_S` (kafka-python 3.0.x alone
  fetches nothing from a partition whose closest replica just restarted until its next
  periodic metadata refresh: :mod:`kafka_sticky_plugin.adapters.kafka_python.hooks.read_replica`).
- **A replica moved to another rack** (``alterPartitionReassignments``: two RF 1 partitions
  swap brokers, so the plan made before is 4/6 rack-local and a 6/6 one exists): exactly one
  rebalance (eager: one generation; cooperative: KIP-429's two rounds, revoke then assign),
  and the plan is 6/6 rack-local again. The members are child processes, frozen (SIGSTOP)
  while the reassignment runs, so no metadata refresh sees its intermediate state (the
  partition on both brokers), which is a rack change of its own.

confluent-kafka is left out: librdkafka's own leader rebalances on broker bounces with racks
(librdkafka#4742) and our bridge does not own its leader (docs/racks.md).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from kafka_sticky_plugin.groups.admin import admin_client, unique_name
from kafka_sticky_plugin.groups.analysis import rebalance_rounds
from kafka_sticky_plugin.groups.events import Partition
from kafka_sticky_plugin.groups.producer import KeyedProducer
from kafka_sticky_plugin.groups.runner import ConsumerGroupRunner, StableGroup
from testlab.checks import check_stable_assignment
from testlab.kafka_cluster import KafkaCluster, kafka_cluster

RACKS = ("r0", "r1", "r2")  # broker i is on RACKS[i - 1]
SELECTOR = {"replica.selector.class": "org.apache.kafka.common.replica.RackAwareReplicaSelector"}
#: How long after a broker is back in every ISR all acknowledged records must be delivered
#: (far below the 5-minute metadata age a stalled kafka-python member would wait for).
CATCH_UP_S = 60.0
BOUNCE_PARTITIONS = 12
MOVE_PARTITIONS = 6


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaCluster]:
    if os.environ.get("KAFKA_STICKY_BROKER") not in ("kafka", "apache-kafka"):
        pytest.skip("starts its own 3-broker Apache Kafka cluster: runs in the Apache Kafka tier")
    started = time.monotonic()
    with kafka_cluster(
        3, tmp_path_factory.mktemp("racks"), settings=SELECTOR, racks=RACKS
    ) as running:
        print(f"racks cluster up in {time.monotonic() - started:.1f}s")
        yield running
    print(f"racks module wall time {time.monotonic() - started:.1f}s")


def create(cluster: KafkaCluster, topic: str, placement: Mapping[int, list[int]]) -> None:
    from kafka.admin import NewTopic

    with admin_client(cluster.bootstrap) as admin:
        admin.create_topics([NewTopic(topic, -1, -1, replica_assignments=dict(placement))])
        for _ in range(100):
            if len(describe(admin, topic)) == len(placement):
                return
            time.sleep(0.2)
    raise AssertionError(f"topic {topic} not created")


def describe(admin: Any, topic: str) -> dict[int, dict[str, Any]]:
    described = admin.describe_topics([topic])[0]
    return {p["partition_index"]: p for p in described.get("partitions") or ()}


def wait_in_sync(cluster: KafkaCluster, topic: str, broker: int, timeout_s: float = 90.0) -> None:
    """Broker ``broker`` is back in the ISR of every partition of ``topic``."""
    deadline = time.monotonic() + timeout_s
    with admin_client(cluster.bootstrap) as admin:
        while time.monotonic() < deadline:
            partitions = describe(admin, topic)
            if partitions and all(broker in p["isr_nodes"] for p in partitions.values()):
                return
            time.sleep(0.5)
    raise AssertionError(f"broker {broker} not back in the ISR of {topic}")


def unread(group: ConsumerGroupRunner, acknowledged: Mapping[Partition, set[int]]) -> int:
    seen = {(d.topic, d.partition, d.offset) for d in group.log.deliveries()}
    return sum(
        1 for (t, p), offsets in acknowledged.items() for o in offsets if (t, p, o) not in seen
    )


@pytest.mark.timeout(600)
def test_rolling_bounce_no_rebalance_nothing_unread(cluster: KafkaCluster) -> None:
    topic = unique_name("racks-bounce")
    create(
        cluster,
        topic,
        {p: [p % 3 + 1, (p + 1) % 3 + 1, (p + 2) % 3 + 1] for p in range(BOUNCE_PARTITIONS)},
    )
    groups = {
        client: ConsumerGroupRunner(
            cluster.bootstrap,
            unique_name(f"g-racks-bounce-{client}"),
            {topic: BOUNCE_PARTITIONS},
            ["cooperative-sticky"],
            client=client,
            metadata_max_age_ms=300_000,
            session_timeout_ms=10_000,
        )
        for client in ("kafka-python", "aiokafka")
    }
    producer = KeyedProducer(cluster.bootstrap, topic)
    started = time.monotonic()
    try:
        for group in groups.values():
            for rack in RACKS:
                group.start_member(rack, client_rack=rack)
        stable = {}
        for client, group in groups.items():
            stable[client] = group.wait_stable(timeout_s=90)
            check_stable_assignment(stable[client], group.all_partitions())
        producer.start(rate_per_s=50)
        t_bounce = time.monotonic()
        for broker in cluster.broker_ids:
            cluster.stop(broker)
            time.sleep(3)  # members fail over to the other replicas
            cluster.restart(broker)
            wait_in_sync(cluster, topic, broker)
            acknowledged = producer.acknowledged()
            for client, group in groups.items():
                delivered = group.wait_delivered(acknowledged, timeout_s=CATCH_UP_S)
                left = unread(group, acknowledged)
                print(f"bounce {broker}: {client} unread {left}")
                assert delivered and left == 0, (
                    f"{client}: {left} records unread after bounce {broker}"
                )
        producer.stop()
        acknowledged = producer.acknowledged()
        for client, group in groups.items():
            assert group.wait_delivered(acknowledged, timeout_s=CATCH_UP_S), client
            after = group.wait_stable(timeout_s=30)
            rounds = rebalance_rounds(group.log.events(), t_bounce, time.monotonic())
            print(
                f"{client}: {sum(map(len, acknowledged.values()))} records, rounds during the"
                f" bounce {rounds}, generation {stable[client].generation} -> {after.generation}"
            )
            assert rounds == [] and after.generation == stable[client].generation, client
            assert unread(group, acknowledged) == 0, client
        print(f"rolling bounce scenario {time.monotonic() - started:.1f}s")
    finally:
        producer.close()
        for group in groups.values():
            group.close()


def rack_local(stable: StableGroup, rack_of: Mapping[int, str], topic: str) -> int:
    """Partitions owned by the member named after the rack of their only replica."""
    return sum(
        1
        for member, parts in stable.assignment.items()
        for t, p in parts
        if t == topic and rack_of[p] == member
    )


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    ("client", "strategy", "rounds"),
    [("kafka-python", "sticky", 1), ("aiokafka", "cooperative-sticky", 2)],
)
def test_replica_moved_to_another_rack_rebalances_once(
    cluster: KafkaCluster, client: str, strategy: str, rounds: int
) -> None:
    topic = unique_name(f"racks-move-{client}")
    placement = {p: [p % 3 + 1] for p in range(MOVE_PARTITIONS)}
    create(cluster, topic, placement)
    group = ConsumerGroupRunner(
        cluster.bootstrap,
        unique_name(f"g-racks-move-{client}"),
        {topic: MOVE_PARTITIONS},
        [strategy],
        client=client,
        session_timeout_ms=15_000,
    )
    started = time.monotonic()
    try:
        for rack in RACKS:
            group.start_member(rack, process=True, client_rack=rack)
        first = group.wait_stable(timeout_s=90)
        check_stable_assignment(first, group.all_partitions())
        racks = {p: RACKS[ids[0] - 1] for p, ids in placement.items()}
        assert rack_local(first, racks, topic) == MOVE_PARTITIONS, first.assignment
        # swap one partition of r0's member (on broker 1) with one of r1's (on broker 2)
        a = min(p for t, p in first.assignment["r0"])
        b = min(p for t, p in first.assignment["r1"])
        moved = {a: [2], b: [1]}
        from kafka.structs import TopicPartition

        t_move = time.monotonic()
        for rack in RACKS:
            group.member(rack).pause()  # type: ignore[attr-defined]
        try:
            with admin_client(cluster.bootstrap) as admin:
                result = admin.alter_partition_reassignments(
                    {TopicPartition(topic, p): ids for p, ids in moved.items()}
                )
                assert all(error is None for error in result.values()), result
                deadline = time.monotonic() + 30
                while time.monotonic() < deadline:
                    now = describe(admin, topic)
                    if all(now[p]["replica_nodes"] == ids for p, ids in moved.items()):
                        break
                    time.sleep(0.2)
                else:
                    raise AssertionError(f"reassignment of {moved} not done: {now}")
        finally:
            for rack in RACKS:
                group.member(rack).resume()  # type: ignore[attr-defined]
        racks.update({p: RACKS[ids[0] - 1] for p, ids in moved.items()})
        deadline = time.monotonic() + 60
        while True:
            after = group.wait_stable(timeout_s=60)
            if rack_local(after, racks, topic) == MOVE_PARTITIONS or time.monotonic() > deadline:
                break
            time.sleep(1)
        time.sleep(12)  # two more metadata refreshes: nothing else may follow
        settled = group.wait_stable(timeout_s=30)
        seen = rebalance_rounds(group.log.events(), t_move, time.monotonic())
        local = rack_local(settled, racks, topic)
        print(
            f"{client} {strategy}: moved {moved}, rounds {seen}, rack-local {local}/"
            f"{MOVE_PARTITIONS}, scenario {time.monotonic() - started:.1f}s"
        )
        check_stable_assignment(settled, group.all_partitions())
        assert len(seen) == rounds, seen
        assert local == MOVE_PARTITIONS, settled.assignment
    finally:
        group.close()
