"""What the leader needs from aiokafka's ``ClusterMetadata``: partition counts and replica
racks (KIP-881). Read-only; a cluster that lacks a method simply yields no racks."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["partition_counts", "replica_racks"]


def partition_counts(cluster: Any, topics: Iterable[str]) -> dict[str, int]:
    """``{topic: partition count}`` for the topics the cluster knows (others are left out)."""
    counts: dict[str, int] = {}
    for topic in sorted(set(topics)):
        partitions = cluster.partitions_for_topic(topic)
        if partitions:
            counts[topic] = len(partitions)
    return counts


def replica_racks(
    cluster: Any, partitions_per_topic: Mapping[str, int]
) -> dict[tuple[str, int], list[str]] | None:
    """Replica racks per partition, or ``None`` when no broker reports a rack."""
    brokers = getattr(cluster, "brokers", None)
    by_topic = getattr(cluster, "_partitions", None)
    if not callable(brokers) or not isinstance(by_topic, Mapping):
        return None
    rack_of = {b.nodeId: b.rack for b in brokers() if getattr(b, "rack", None)}
    if not rack_of:
        return None
    racks: dict[tuple[str, int], list[str]] = {}
    for topic in partitions_per_topic:
        for partition, meta in (by_topic.get(topic) or {}).items():
            names = sorted({rack_of[r] for r in getattr(meta, "replicas", ()) if r in rack_of})
            if names:
                racks[(topic, int(partition))] = names
    return racks or None
