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
from dataclasses import dataclass
from typing import Any

from ..core.replica_racks import RackNames, ReplicaRacks
from ..core.spec import MemberSpec
from .rack_changes import Placement, RackTracker, Replicas

__all__ = [
    "MetadataRacks",
    "leader_racks",
    "partition_counts",
    "read_metadata_racks",
    "replica_placement",
    "replica_racks",
]


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


@dataclass(frozen=True)
class MetadataRacks:
    """One walk over the metadata's partitions of some topics (:func:`read_metadata_racks`):
    per topic, lists indexed by partition, as long as the topic's highest listed partition
    + 1 (a topic the metadata does not know has empty lists; a negative partition, which
    Kafka never numbers, is left out).

    ``racks[topic][p]``: the sorted distinct racks of partition ``p``'s replicas (``()``:
    none known, or ``p`` not listed), the input of :class:`ReplicaRacks`;
    ``placement[topic][p]``: its replicas as ``(replica id, rack)`` in replica-id order (rack
    ``None``: broker absent from the metadata, ``""``: no rack; the entry is ``None`` when
    ``p`` is not listed), the input of :mod:`.rack_changes`; ``broker_racks``: whether some
    broker of the metadata has a rack."""

    racks: dict[str, list[RackNames]]
    placement: dict[str, list[Replicas | None]]
    broker_racks: bool

    def replica_racks(self) -> ReplicaRacks | None:
        """The racks as the engine takes them; ``None`` when no partition has a replica on a
        racked broker."""
        return (ReplicaRacks(self.racks) or None) if self.broker_racks else None


def read_metadata_racks(cluster: Any, topics: Iterable[str]) -> MetadataRacks | None:
    """The racks and the placement of the partitions of ``topics`` (in the order given,
    each once), read in one walk over the metadata's partitions (see :class:`MetadataRacks`);
    ``None`` when the brokers or the partitions cannot be read.

    Cost: per partition, one dict look-up (its replica ids, as the metadata lists them) and
    two list stores: the racks and the placement of each distinct replica list are worked
    out once, and most partitions of a cluster share a few replica lists. The replica list
    is looked up as a tuple, so a list the metadata holds as a mutable sequence is read too.
    """
    metadata = _brokers_and_partitions(cluster)
    return None if metadata is None else _walk(*metadata, topics)


def _brokers_and_partitions(cluster: Any) -> tuple[dict[Any, str], Mapping[str, Any]] | None:
    """``({broker id: rack or ""}, {topic: {partition: meta}})`` of ``cluster``, ``None`` when
    either is unreadable."""
    rack_of = _broker_racks(cluster)
    partitions = getattr(cluster, "_partitions", None)
    if rack_of is None or not isinstance(partitions, Mapping):
        return None
    return rack_of, partitions


def _walk(
    rack_of: Mapping[Any, str], partitions: Mapping[str, Any], topics: Iterable[str]
) -> MetadataRacks:
    """:func:`read_metadata_racks` once the brokers and partitions are read."""
    interned: dict[frozenset[str], RackNames] = {}
    of_replicas: dict[tuple[Any, ...], tuple[RackNames, Replicas]] = {}

    def resolve(replicas: tuple[Any, ...]) -> tuple[RackNames, Replicas]:
        """``replicas``' racks (sorted, distinct, one shared tuple per set) and placement."""
        names = frozenset(r for r in map(rack_of.get, replicas) if r)
        racks = interned.setdefault(names, tuple(sorted(names)))
        placed = tuple(sorted((int(n), rack_of.get(n)) for n in replicas))
        of_replicas[replicas] = (racks, placed)
        return racks, placed

    by_topic: dict[str, list[RackNames]] = {}
    placement: dict[str, list[Replicas | None]] = {}
    for topic in dict.fromkeys(topics):
        known = partitions.get(topic) or {}
        size = max(map(int, known), default=-1) + 1
        topic_racks: list[RackNames] = [()] * size
        topic_placement: list[Replicas | None] = [None] * size
        for partition, meta in known.items():
            replicas = tuple(_replica_ids(meta))
            racks, placed = of_replicas.get(replicas) or resolve(replicas)
            p = int(partition)
            if p >= 0:  # Kafka numbers partitions from 0
                topic_racks[p] = racks
                topic_placement[p] = placed
        by_topic[topic] = topic_racks
        placement[topic] = topic_placement
    return MetadataRacks(by_topic, placement, any(rack_of.values()))


def replica_placement(cluster: Any, topics: Iterable[str]) -> Placement | None:
    """The placement of the partitions of ``topics`` (:attr:`MetadataRacks.placement`, the
    input of :mod:`.rack_changes`); ``None`` when unreadable."""
    read = read_metadata_racks(cluster, topics)
    return None if read is None else read.placement


def replica_racks(cluster: Any, partitions_per_topic: Mapping[str, int]) -> ReplicaRacks | None:
    """``{(topic, partition): sorted replica racks}`` (a :class:`ReplicaRacks`, built topic
    by topic: it knows which topics it lists whole) or ``None`` when no broker has a rack
    (then the partitions are not read) or no partition has a replica on a racked broker. A
    partition whose replicas have no rack is no key. Read as :func:`read_metadata_racks`
    reads them."""
    metadata = _brokers_and_partitions(cluster)
    if metadata is None or not any(metadata[0].values()):
        return None
    return _walk(*metadata, partitions_per_topic).replica_racks()


def leader_racks(
    cluster: Any, partitions_per_topic: Mapping[str, int], specs: Iterable[MemberSpec]
) -> tuple[ReplicaRacks | None, Placement | None]:
    """What a hooked leader reads about racks: ``(replica racks, replica placement)`` of the
    group's partitions, from one walk over the metadata (:func:`read_metadata_racks`), both
    ``None`` unless some member (``specs``) has a rack.

    KIP-881 places partitions by rack only for members with a rack: with none, the engine's
    plan is the plan without racks whatever the replica racks are (its rack view is ``None``,
    :func:`~..core.rack_view.build_rack_view`), and so is the round's description (rack
    locality counts racked members only). So a group without member racks, the common case
    on a rack-configured cluster, never reads the metadata's million partitions."""
    if not any(spec.rack for spec in specs):
        return None, None
    read = read_metadata_racks(cluster, partitions_per_topic)
    if read is None:
        return None, None
    return read.replica_racks(), read.placement


def racks_changed(tracker: RackTracker, cluster: Any, group_id: str, log: logging.Logger) -> bool:
    """One metadata update seen by a member that tracks the placement it assigned with as
    leader: ``True`` (said once at INFO on ``log``) when the racks of a subscribed partition's
    replicas changed and one rejoin is due (:mod:`.rack_changes`: a broker that is only absent
    is no change). Never raises: metadata it cannot read is logged at DEBUG and decided on the
    next update (a metadata listener's error would stop the client's other listeners)."""
    if not tracker.tracking:
        return False
    try:
        changed = tracker.check(replica_placement(cluster, tracker.assigned or {}))
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
