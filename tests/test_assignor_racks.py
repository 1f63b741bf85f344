"""Rack-aware assignment through kafka-python 3's assignor API: replica racks come from a real
``ClusterMetadata`` fed a real MetadataResponse, member racks from subscription v3."""

from __future__ import annotations

from collections.abc import Mapping

from kafka.cluster import ClusterMetadata
from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment
from kafka.protocol.metadata import MetadataResponse

from kafka_sticky_plugin import CooperativeStickyAssignor, StickyAssignor
from kafka_sticky_plugin.assignor.racks import replica_racks
from kafka_sticky_plugin.core.replica_racks import ReplicaRacks


def racked_cluster(count: int, broker_racks: Mapping[int, str | None]) -> ClusterMetadata:
    """Topic ``t`` with ``count`` partitions; partition p has its one replica on broker p % n."""
    resp = MetadataResponse
    topic_cls = resp.MetadataResponseTopic
    part_cls = topic_cls.MetadataResponsePartition
    n = len(broker_racks)
    response = resp(
        version=1,
        brokers=[
            resp.MetadataResponseBroker(
                version=1, node_id=b, host="127.0.0.1", port=9092 + b, rack=r
            )
            for b, r in broker_racks.items()
        ],
        controller_id=0,
        topics=[
            topic_cls(
                version=1,
                error_code=0,
                name="t",
                is_internal=False,
                partitions=[
                    part_cls(
                        version=1,
                        error_code=0,
                        partition_index=p,
                        leader_id=p % n,
                        replica_nodes=[p % n],
                        isr_nodes=[p % n],
                    )
                    for p in range(count)
                ],
            )
        ],
    )
    cluster = ClusterMetadata()
    cluster.update_metadata(response)
    return cluster


class Member:
    def __init__(self, member_id: str, metadata: bytes) -> None:
        self.member_id = member_id
        self.metadata = metadata
        self.group_instance_id = None


def plan_of(result: Mapping[str, bytes]) -> dict[str, list[int]]:
    return {
        m: sorted(tp.partition for tp in ConsumerProtocolAssignment.decode(v).partitions())
        for m, v in result.items()
    }


def test_replica_racks_read_from_cluster_metadata() -> None:
    """Brokers' racks and partitions' replica lists become the engine's partition_racks."""
    cluster = racked_cluster(4, {0: "a", 1: "b"})
    racks = replica_racks(cluster, {"t": 4})
    assert racks is not None
    assert dict(racks) == {
        ("t", 0): ("a",),
        ("t", 1): ("b",),
        ("t", 2): ("a",),
        ("t", 3): ("b",),
    }
    assert replica_racks(racked_cluster(4, {0: None, 1: None}), {"t": 4}) is None


def test_replica_racks_know_the_topics_they_list_whole() -> None:
    """The hooks' replica racks are a ``ReplicaRacks``: every partition listed when every
    replica's broker has a rack; a partition on an unracked broker is no key."""
    whole = replica_racks(racked_cluster(4, {0: "a", 1: "b"}), {"t": 4})
    assert isinstance(whole, ReplicaRacks) and whole.lists_every_partition({"t": 4})
    holed = replica_racks(racked_cluster(4, {0: "a", 1: None}), {"t": 4})
    assert isinstance(holed, ReplicaRacks)
    assert dict(holed) == {("t", 0): ("a",), ("t", 2): ("a",)}
    assert holed.listed_prefix("t") == 1 and not holed.lists_every_partition({"t": 4})


def test_leader_gives_members_the_partitions_of_their_rack() -> None:
    """Members in racks a and b each get exactly the partitions with a replica in their rack."""
    cluster = racked_cluster(6, {0: "a", 1: "b"})
    for cls in (StickyAssignor, CooperativeStickyAssignor):
        in_a, in_b = cls(rack_id="a"), cls(rack_id="b")
        members = [Member("m-b", in_a.metadata(["t"])), Member("m-a", in_b.metadata(["t"]))]
        # m-b reports rack a and m-a rack b: names are deliberately misleading
        plan = plan_of(in_a.assign(cluster, members))
        assert plan == {"m-b": [0, 2, 4], "m-a": [1, 3, 5]}


def test_without_broker_racks_the_plan_is_the_plain_one() -> None:
    """No broker reports a rack: member racks change nothing."""
    racked = [
        Member(f"m{i}", StickyAssignor(rack_id=r).metadata(["t"])) for i, r in enumerate("ab")
    ]
    plain = [Member(f"m{i}", StickyAssignor().metadata(["t"])) for i in range(2)]
    cluster = racked_cluster(6, {0: None, 1: None})
    assert plan_of(StickyAssignor().assign(cluster, racked)) == plan_of(
        StickyAssignor().assign(cluster, plain)
    )
