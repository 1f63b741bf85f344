"""A kafka-python ``ClusterMetadata`` holding a bench input's replica racks, so a benchmark
can time reading them from metadata as a leader does (``assign_cluster``, the hooks'
:func:`~kafka_sticky_plugin.assignor.racks.leader_racks`).

:func:`cluster_metadata` feeds a real ``MetadataResponse`` to a real ``ClusterMetadata``:
every rack named by the input gets ``BROKERS_PER_RACK`` brokers; a partition whose replica
racks are ``(r_1, ..., r_k)`` has one replica on each, the broker within the rack chosen by
the partition number (as a cluster's replicas spread over a rack's brokers), so
``replica_racks`` of the metadata equals the input's racks (sorted, as the metadata holds
no order) and the partitions share a few replica lists, as on a real cluster.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kafka.cluster import ClusterMetadata
from kafka.protocol.metadata import MetadataResponse

__all__ = ["BROKERS_PER_RACK", "cluster_metadata"]

BROKERS_PER_RACK = 2


def cluster_metadata(
    partitions: Mapping[str, int], racks: Mapping[tuple[str, int], tuple[str, ...]]
) -> Any:
    """The metadata of ``partitions`` (``{topic: count}``) with replicas on ``racks``
    (``{(topic, partition): replica racks}``; a partition without an entry has no replica)."""
    names = sorted({r for rs in racks.values() for r in rs})
    first = {name: i * BROKERS_PER_RACK for i, name in enumerate(names)}
    broker_cls = MetadataResponse.MetadataResponseBroker
    topic_cls = MetadataResponse.MetadataResponseTopic
    part_cls = topic_cls.MetadataResponsePartition
    brokers = [
        broker_cls(version=1, node_id=first[n] + k, host="127.0.0.1", port=9092, rack=n)
        for n in names
        for k in range(BROKERS_PER_RACK)
    ]
    topics = []
    for topic, count in partitions.items():
        entries = []
        for p in range(count):
            ids = [first[r] + p % BROKERS_PER_RACK for r in racks.get((topic, p), ())]
            entries.append(
                part_cls(
                    version=1,
                    error_code=0,
                    partition_index=p,
                    leader_id=ids[0] if ids else -1,
                    replica_nodes=ids,
                    isr_nodes=ids,
                )
            )
        topics.append(
            topic_cls(version=1, error_code=0, name=topic, is_internal=False, partitions=entries)
        )
    response = MetadataResponse(version=1, brokers=brokers, controller_id=0, topics=topics)
    cluster = ClusterMetadata()
    cluster.update_metadata(response)
    return cluster
