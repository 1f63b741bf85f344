"""KIP-881's rebalance trigger: have the racks of a subscribed partition's replicas changed
since the leader assigned? Client-free (typed values in, a decision out).

The leader remembers the replica placement it assigned with (:class:`RackTracker`); on every
metadata update its hooks compare the current placement with it and rebalance once when the
racks of some partition changed, as Java's ``ConsumerCoordinator`` does (its metadata snapshot
carries the replica racks since KIP-881). A placement lists, per topic and indexed by
partition, each partition's replicas, ``(replica id, rack)`` in replica-id order, where the
rack is ``None`` when the replica's broker is absent from the metadata (offline, or
restarting) and ``""`` when the broker is present without a rack; a partition the metadata
does not list is ``None`` in its topic's list (the list is as long as the topic's highest
listed partition + 1). Per topic, as :class:`~..core.replica_racks.ReplicaRacks` holds the
racks, so a topic whose replicas did not change is told in one list comparison.

The rule (:func:`changed_partitions`), which is Java's after KAFKA-20778: the racks of a
partition are compared by replica id, and a replica whose broker is absent from either
metadata never counts as a change (it keeps the rack the other side knows, or is left out
when neither knows it). So a broker bounce (its replicas vanish from the metadata, then come
back on the same rack) changes nothing, while a reassignment of a replica to a broker on
another rack, or a broker that comes back with another ``broker.rack``, is a change. A
reassignment between two brokers of the same rack keeps the racks and is not a change.
Partitions present on only one side are left out: partition counts and topics are the
client's own snapshot's business.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TypeAlias

__all__ = ["Placement", "RackTracker", "Replicas", "changed_partitions", "partition_racks_of"]

Partition: TypeAlias = tuple[str, int]
#: ``(replica id, rack)`` per replica of one partition: rack ``None`` = broker absent from the
#: metadata, ``""`` = broker present without a rack.
Replicas: TypeAlias = tuple[tuple[int, str | None], ...]
#: Every tracked partition's replicas: ``placement[topic][partition]`` (``None``: a partition
#: the metadata does not list).
Placement: TypeAlias = Mapping[str, Sequence[Replicas | None]]


def partition_racks_of(replicas: Replicas, other: Replicas) -> frozenset[str]:
    """The racks of ``replicas``, where a replica whose broker is absent takes the rack
    ``other`` (the same partition's replicas at another time) knows for the same replica id,
    and is left out when ``other`` does not know it either; ``""`` (no rack) is left out."""
    known = {replica: rack for replica, rack in other if rack is not None}
    racks = set()
    for replica, rack in replicas:
        if rack is None:
            rack = known.get(replica)
        if rack:
            racks.add(rack)
    return frozenset(racks)


def changed_partitions(assigned: Placement, current: Placement) -> list[Partition]:
    """The partitions (sorted) present in both placements whose racks differ, by the rule of
    the module docstring. A topic whose replicas are all the same on both sides (the common
    case: most metadata updates change nothing) is told by one list comparison; only the
    partitions of other topics are compared one by one."""
    changed = []
    for topic, then_replicas in assigned.items():
        now_replicas = current.get(topic)
        if now_replicas is None or now_replicas == then_replicas:
            continue
        both = zip(then_replicas, now_replicas, strict=False)  # partitions on both sides
        for partition, (then, now) in enumerate(both):
            if then is None or now is None or now == then:
                continue
            if partition_racks_of(then, now) != partition_racks_of(now, then):
                changed.append((topic, partition))
    return sorted(changed)


class RackTracker:
    """The leader's memory of the placement it assigned with (one per consumer).

    Invariants: :attr:`assigned` is ``None`` except between a leader's assignment in a group
    where some member has a rack and the next of: a new JoinGroup (:meth:`forget`), or the
    first change found (:meth:`check`, which forgets too: one rebalance per change).
    """

    def __init__(self) -> None:
        self.assigned: Placement | None = None

    def remember(self, placement: Placement | None, member_racks: Iterable[str | None]) -> None:
        """The leader assigned with ``placement``; tracked only when some member has a rack
        (a group without racks never rebalances for racks) and brokers were read."""
        if placement is not None and any(member_racks):
            self.assigned = {topic: list(replicas) for topic, replicas in placement.items()}
        else:
            self.assigned = None

    def forget(self) -> None:
        """A new JoinGroup: whoever leads it remembers its own placement."""
        self.assigned = None

    @property
    def tracking(self) -> bool:
        return self.assigned is not None

    def check(self, current: Placement | None) -> list[Partition]:
        """The partitions whose racks changed since the assignment (``[]``: none, or nothing
        tracked, or no metadata); a non-empty answer forgets the placement, so the caller
        asks for one rebalance."""
        if self.assigned is None or current is None:
            return []
        changed = changed_partitions(self.assigned, current)
        if changed:
            self.assigned = None
        return changed
