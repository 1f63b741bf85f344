"""Replica racks from kafka-python's cluster metadata (KIP-881 input for the leader).

kafka-python has no public accessor for replicas: 3.x keeps the Metadata response's partition
entries (``replica_nodes``) in ``ClusterMetadata._partitions``, 2.x keeps ``PartitionMetadata``
named tuples (``replicas``). Brokers carry ``rack`` in both. Anything missing or unexpected
means "no rack information" (the plan is then exactly the plan without racks), never an error.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["replica_racks"]


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
                out[(topic, partition)] = interned.setdefault(racks, tuple(sorted(racks)))
    return out or None
