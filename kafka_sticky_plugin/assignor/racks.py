"""What the leader reads from a client's cluster metadata: partition counts and replica racks
(KIP-881 input). Client-free: the cluster object is read by duck typing.

kafka-python 3.x and aiokafka keep the Metadata response's partition entries in
``cluster._partitions`` (``{topic: {partition: meta}}``) with ``replica_nodes`` (kafka-python
3.x) or ``replicas`` (kafka-python 2.x, aiokafka); brokers carry ``nodeId`` (or ``node_id``)
and ``rack``. Anything missing or unexpected means "no rack information" (the plan is then
exactly the plan without racks), never an error.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["partition_counts", "replica_racks"]


def partition_counts(cluster: Any, topics: Iterable[str]) -> dict[str, int]:
    """``{topic: partition count}`` for the topics the cluster knows (others are left out),
    in sorted topic order."""
    counts: dict[str, int] = {}
    for topic in sorted(set(topics)):
        partitions = cluster.partitions_for_topic(topic)
        if partitions:
            counts[topic] = len(partitions)
    return counts


def replica_racks(
    cluster: Any, partitions_per_topic: Mapping[str, int]
) -> dict[tuple[str, int], tuple[str, ...]] | None:
    """``{(topic, partition): sorted replica racks}`` or ``None`` when no broker has a rack."""
    try:
        brokers = list(cluster.brokers())
    except Exception:  # a cluster object without brokers(): no rack information
        return None
    rack_of = {
        getattr(b, "nodeId", getattr(b, "node_id", None)): getattr(b, "rack", None) for b in brokers
    }
    if not any(rack_of.values()):
        return None
    partitions = getattr(cluster, "_partitions", None)
    if not isinstance(partitions, Mapping):
        return None
    interned: dict[frozenset[str], tuple[str, ...]] = {}
    out: dict[tuple[str, int], tuple[str, ...]] = {}
    for topic in partitions_per_topic:
        for partition, meta in (partitions.get(topic) or {}).items():
            nodes = getattr(meta, "replica_nodes", None)
            if nodes is None:
                nodes = getattr(meta, "replicas", None) or ()
            racks = frozenset(r for r in (rack_of.get(n) for n in nodes) if r)
            if racks:
                out[(topic, int(partition))] = interned.setdefault(racks, tuple(sorted(racks)))
    return out or None
