"""What the leader reads from a client's cluster metadata: partition counts and replica racks
(KIP-881 input). Client-free: the cluster object is read by duck typing.

kafka-python 3.x and aiokafka keep the Metadata response's partition entries in
``cluster._partitions`` (``{topic: {partition: meta}}``) with ``replica_nodes`` (kafka-python
3.x) or ``replicas`` (kafka-python 2.x, aiokafka); brokers carry ``nodeId`` (or ``node_id``)
and ``rack``. Anything missing or unexpected means "no rack information" (the plan is then
exactly the plan without racks), never an error.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from ..core.replica_racks import RackNames, ReplicaRacks
from ..core.spec import MemberSpec
from .rack_changes import RackTracker

__all__ = ["leader_racks", "partition_counts", "replica_placement", "replica_racks"]


def partition_counts(cluster: Any, topics: Iterable[str]) -> dict[str, int]:
    """``{topic: partition count}`` for the topics the cluster knows (others are left out),
    in sorted topic order."""
    counts: dict[str, int] = {}
    for topic in sorted(set(topics)):
        partitions = cluster.partitions_for_topic(topic)
        if partitions:
            counts[topic] = len(partitions)
    return counts


def _broker_racks(cluster: Any) -> dict[Any, str] | None:
    """``{broker id: rack or ""}`` of the brokers in the metadata, ``None`` when unreadable."""
    try:
        brokers = list(cluster.brokers())
    except Exception:  # a cluster object without brokers(): no rack information
        return None
    return {
        getattr(b, "nodeId", getattr(b, "node_id", None)): getattr(b, "rack", None) or ""
        for b in brokers
    }


def _replica_ids(meta: Any) -> Any:
    nodes = getattr(meta, "replica_nodes", None)
    return nodes if nodes is not None else getattr(meta, "replicas", None) or ()


def replica_placement(
    cluster: Any, topics: Iterable[str]
) -> dict[tuple[str, int], tuple[tuple[int, str | None], ...]] | None:
    """``{(topic, partition): ((replica id, rack), ...)}`` for the partitions of ``topics`` the
    cluster knows (the input of :mod:`.rack_changes`): rack ``None`` when the replica's broker
    is absent from the metadata, ``""`` when it has no rack; ``None`` when unreadable.
    Each distinct replica list is sorted once (partitions share a few)."""
    rack_of = _broker_racks(cluster)
    partitions = getattr(cluster, "_partitions", None)
    if rack_of is None or not isinstance(partitions, Mapping):
        return None
    out: dict[tuple[str, int], tuple[tuple[int, str | None], ...]] = {}
    of_replicas: dict[tuple[Any, ...], tuple[tuple[int, str | None], ...]] = {}
    for topic in set(topics):
        for partition, meta in (partitions.get(topic) or {}).items():
            replicas = tuple(_replica_ids(meta))
            placed = of_replicas.get(replicas)
            if placed is None:  # once per distinct replica list, as in replica_racks
                placed = of_replicas[replicas] = tuple(
                    sorted((int(n), rack_of.get(n)) for n in replicas)
                )
            out[(topic, int(partition))] = placed
    return out


def replica_racks(cluster: Any, partitions_per_topic: Mapping[str, int]) -> ReplicaRacks | None:
    """``{(topic, partition): sorted replica racks}`` (a :class:`ReplicaRacks`, built topic
    by topic: it knows which topics it lists whole) or ``None`` when no broker has a rack or
    no partition has a replica on a racked broker. A partition whose replicas have no rack
    is no key.

    Cost: one dict look-up per partition (its replica ids, as the metadata lists them): the
    racks of each distinct replica list are worked out once, and most partitions of a
    cluster share a few replica lists. The racks are looked up by the list itself, so a list
    the metadata holds as a mutable sequence is read as a tuple."""
    rack_of = _broker_racks(cluster)
    if not rack_of or not any(rack_of.values()):
        return None
    partitions = getattr(cluster, "_partitions", None)
    if not isinstance(partitions, Mapping):
        return None
    interned: dict[frozenset[str], RackNames] = {}
    of_replicas: dict[tuple[Any, ...], RackNames] = {}

    def racks_of(replicas: tuple[Any, ...]) -> RackNames:
        """The sorted distinct racks of ``replicas`` (``()``: none), one shared tuple each."""
        names = frozenset(r for r in map(rack_of.get, replicas) if r)
        racks = interned.get(names)
        if racks is None:
            racks = interned[names] = tuple(sorted(names))
        of_replicas[replicas] = racks
        return racks

    by_topic: dict[str, list[RackNames]] = {}
    for topic in partitions_per_topic:
        known = partitions.get(topic) or {}
        seq: list[RackNames] = [()] * (max(map(int, known), default=-1) + 1)
        for partition, meta in known.items():
            replicas = tuple(_replica_ids(meta))
            racks = of_replicas.get(replicas)
            if racks is None:
                racks = racks_of(replicas)
            if racks and int(partition) >= 0:  # Kafka numbers partitions from 0
                seq[int(partition)] = racks
        by_topic[topic] = seq
    out = ReplicaRacks(by_topic)
    return out or None


def leader_racks(
    cluster: Any, partitions_per_topic: Mapping[str, int], specs: Iterable[MemberSpec]
) -> tuple[ReplicaRacks | None, dict[tuple[str, int], tuple[tuple[int, str | None], ...]] | None]:
    """What a hooked leader reads about racks: ``(replica racks, replica placement)`` of the
    group's partitions, both ``None`` unless some member (``specs``) has a rack.

    KIP-881 places partitions by rack only for members with a rack: with none, the engine's
    plan is the plan without racks whatever the replica racks are (its rack view is ``None``,
    :func:`~..core.rack_view.build_rack_view`), and so is the round's description (rack
    locality counts racked members only). So a group without member racks, the common case
    on a rack-configured cluster, never reads the metadata's million partitions."""
    if not any(spec.rack for spec in specs):
        return None, None
    return (
        replica_racks(cluster, partitions_per_topic),
        replica_placement(cluster, partitions_per_topic),
    )


def racks_changed(tracker: RackTracker, cluster: Any, group_id: str, log: logging.Logger) -> bool:
    """One metadata update seen by a member that tracks the placement it assigned with as
    leader: ``True`` (said once at INFO on ``log``) when the racks of a subscribed partition's
    replicas changed and one rejoin is due (:mod:`.rack_changes`: a broker that is only absent
    is no change). Never raises: metadata it cannot read is logged at DEBUG and decided on the
    next update (a metadata listener's error would stop the client's other listeners)."""
    if not tracker.tracking:
        return False
    try:
        assigned = tracker.assigned or {}
        changed = tracker.check(replica_placement(cluster, {t for t, _ in assigned}))
    except Exception:
        log.debug("group %s: rack check failed", group_id, exc_info=True)
        return False
    if changed:
        log.info(
            "group %s: replica racks changed for %d partitions (%s...): rebalancing once (KIP-881)",
            group_id,
            len(changed),
            changed[:3],
        )
    return bool(changed)
