"""Rack-aware assignment (KIP-881) with real replica racks: a three-node Apache Kafka cluster.

Why three nodes: a broker has one ``broker.rack``, and a partition's replicas live on distinct
brokers, so partitions whose replicas sit on different racks need several brokers. Three
nodes (racks ``r1``, ``r2``, ``r3``; the first also the KRaft controller) with replication
factor 1 give every partition exactly one replica rack, which makes the right answer exact:
each member, whose ``client_rack`` is one of the racks, should own exactly the partitions led
on its rack (balance allows it: two per rack). The leader reads the racks from the cluster
metadata its coordinator passes to ``assign()`` (``install_hooks`` adopts ``client_rack``).

The cluster is started by this module (it needs Apache Kafka's jars, so it runs in the Apache
Kafka tier, ``KAFKA_STICKY_BROKER=kafka``; in the Tansu tier it is skipped with that reason).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from kafka_sticky_plugin.brokers.embedded import RunningBroker
from kafka_sticky_plugin.groups.admin import admin_client, unique_name
from kafka_sticky_plugin.groups.events import Partition
from kafka_sticky_plugin.groups.runner import ConsumerGroupRunner
from testlab.checks import check_stable_assignment
from testlab.kafka_broker import kafka_broker

RACKS = ("r1", "r2", "r3")
PARTITIONS = 6


@pytest.fixture(scope="module")
def rack_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningBroker]:
    """Three Apache Kafka nodes, one per rack of :data:`RACKS`."""
    if os.environ.get("KAFKA_STICKY_BROKER") not in ("kafka", "apache-kafka"):
        pytest.skip("starts its own 3-node Apache Kafka cluster: runs in the Apache Kafka tier")
    with kafka_broker(tmp_path_factory.mktemp("racks"), racks=RACKS) as cluster:
        yield cluster


def _replica_racks(bootstrap: str, topic: str) -> dict[Partition, str]:
    """Create ``topic`` with partition p's only replica on node ``p % 3 + 1`` (Kafka's own
    placement need not be even); return partition -> rack, read back from the metadata."""
    from kafka.admin import NewTopic

    placement = {p: [p % len(RACKS) + 1] for p in range(PARTITIONS)}
    with admin_client(bootstrap) as admin:
        admin.create_topics([NewTopic(topic, -1, -1, replica_assignments=placement)])
        for _ in range(100):
            described = admin.describe_topics([topic])[0]
            if len(described.get("partitions") or ()) == PARTITIONS:
                break
        rack_of_node = {b["broker_id"]: b["rack"] for b in admin.describe_cluster()["brokers"]}
    return {
        (topic, p["partition_index"]): rack_of_node[p["replica_nodes"][0]]
        for p in described["partitions"]
    }


def _same_rack(assignment: dict[str, tuple[Partition, ...]], racks: dict[Partition, str]) -> int:
    return sum(1 for member, parts in assignment.items() for p in parts if racks[p] == member)


@pytest.mark.timeout(240)
@pytest.mark.parametrize("strategy", ["sticky", "cooperative-sticky"])
def test_members_get_the_partitions_of_their_rack(
    rack_cluster: RunningBroker, strategy: str
) -> None:
    """Every member owns exactly the partitions on its rack; after a member leaves, its
    partitions are spread (no same-rack member is left) with balance kept; when it comes back,
    the same-rack placement is restored (racks before stickiness)."""
    topic = unique_name("racks")
    racks = _replica_racks(rack_cluster.bootstrap, topic)
    assert sorted(racks.values()) == sorted(RACKS * (PARTITIONS // len(RACKS))), racks
    everything = set(racks)
    group = ConsumerGroupRunner(
        rack_cluster.bootstrap,
        unique_name(f"g-racks-{strategy}"),
        {topic: PARTITIONS},
        [strategy],
        install_hooks=True,
    )
    try:
        for rack in RACKS:
            group.start_member(rack, client_rack=rack)
        first = group.wait_stable(timeout_s=90)
        check_stable_assignment(first, everything)
        print(f"{strategy}: first {first.assignment}")
        assert _same_rack(first.assignment, racks) == PARTITIONS, first.assignment

        group.stop_member("r3")
        shrunk = group.wait_stable(timeout_s=90)
        check_stable_assignment(shrunk, everything)
        assert sorted(len(p) for p in shrunk.assignment.values()) == [3, 3], shrunk.assignment
        assert _same_rack(shrunk.assignment, racks) == 4, shrunk.assignment

        group.start_member("r3", client_rack="r3")
        back = group.wait_stable(timeout_s=90)
        check_stable_assignment(back, everything)
        print(f"{strategy}: back {back.assignment}")
        assert _same_rack(back.assignment, racks) == PARTITIONS, back.assignment
    finally:
        group.close()


def test_rack_cluster_nodes_report_their_racks(rack_cluster: RunningBroker) -> None:
    """The launcher's ``racks`` reach the brokers: the cluster metadata lists each rack once."""
    with admin_client(rack_cluster.bootstrap) as admin:
        brokers = admin.describe_cluster()["brokers"]
    assert sorted(b["rack"] for b in brokers) == sorted(RACKS)
    assert all(b["host"] == "127.0.0.1" for b in brokers)
    assert Path(str(rack_cluster.log_path)).exists()
