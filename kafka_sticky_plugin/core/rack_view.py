"""The rack pass's shared view (KIP-881): member and partition racks as small integers, the
*mismatch* vocabulary, and when the pass runs at all. The pass itself is :mod:`.racks`."""

from __future__ import annotations

import operator
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import repeat

from .components import Component
from .implementation import Planned
from .layout import Layout
from .replica_racks import ReplicaRacks

__all__ = ["NO_RACK", "RackView", "build_rack_view", "rack_pass_applies"]

NO_RACK = -1


@dataclass
class RackView:
    """Dense rack information: ``member_rack[m]`` is a rack index or :data:`NO_RACK`;
    partition ``q``'s replica racks are ``rack_sets[partition_set[q]]``, a frozenset of rack
    indices; ``rack_sets[0]`` is the empty set (no information), so ``partition_set`` is one
    flat list of small ints over every global partition index."""

    member_rack: list[int]
    rack_sets: list[frozenset[int]]
    partition_set: list[int]


def build_rack_view(
    layout: Layout, partition_racks: Mapping[tuple[str, int], Iterable[str]]
) -> RackView | None:
    """Index racks, or return ``None`` when no placement anywhere could be a mismatch (no
    member has a rack, or every partition has a replica in every member rack): then the plan
    is exactly the plan without racks. Entries for unknown topics or partitions are ignored.

    Cost: one pass over the distinct replica-rack lists (cheap) decides the ``None`` case;
    only otherwise is every partition indexed.
    """
    member_rack_names = {spec.rack for spec in layout.specs if spec.rack}
    if not member_rack_names:
        return None
    distinct: set[tuple[str, ...]]
    if isinstance(partition_racks, ReplicaRacks):  # what the hooks pass: read topic by topic
        distinct = partition_racks.distinct_racks()
    else:
        try:  # tuples hash directly; other iterables are converted
            distinct = set(partition_racks.values())  # type: ignore[arg-type]
        except TypeError:
            distinct = {tuple(racks) for racks in partition_racks.values()}
    if all(member_rack_names <= set(racks) for racks in distinct):
        return None
    names: dict[str, int] = {}
    member_rack = []
    for spec in layout.specs:
        member_rack.append(names.setdefault(spec.rack, len(names)) if spec.rack else NO_RACK)
    # Racks only partitions name get the next indices in name order, never in set order:
    # indices order classes and buckets, so they must not depend on string hashing.
    for r in sorted({r for names_tuple in distinct for r in names_tuple if isinstance(r, str)}):
        if r:
            names.setdefault(r, len(names))
    by_tuple: dict[tuple[str, ...], frozenset[int]] = {}
    for names_tuple in distinct:
        by_tuple[names_tuple] = frozenset(
            names.setdefault(r, len(names)) for r in names_tuple if isinstance(r, str) and r
        )
    # Set ids in the sorted order of their rack indices: never in hash order.
    rack_sets = [frozenset[int]()]
    set_id = {rack_sets[0]: 0}
    for ids in sorted(set(by_tuple.values()), key=sorted):
        if ids not in set_id:
            set_id[ids] = len(rack_sets)
            rack_sets.append(ids)
    id_of = {names_tuple: set_id[ids] for names_tuple, ids in by_tuple.items()}
    partition_set = [0] * layout.total
    _index_partitions(layout, partition_racks, id_of, partition_set)
    return RackView(member_rack=member_rack, rack_sets=rack_sets, partition_set=partition_set)


def _index_partitions(
    layout: Layout,
    partition_racks: Mapping[tuple[str, int], Iterable[str]],
    id_of: dict[tuple[str, ...], int],
    partition_set: list[int],
) -> None:
    """Fill ``partition_set`` from ``partition_racks`` (``id_of``: a replica-rack tuple's set
    id). A :class:`~.replica_racks.ReplicaRacks` (what the hooks pass) is read per topic of
    the layout, never by key. Otherwise, when every key is a known topic and an in-range int
    partition, the million entries are read in a few C-level passes; else one at a time,
    skipping keys that name no partition of the group (an unknown topic, a partition out of
    range); a partition that is not an ``int`` raises ``TypeError`` naming the key."""
    topic_index, offsets, counts = layout.topic_index, layout.offsets, layout.counts
    if isinstance(partition_racks, ReplicaRacks):  # one C-level pass per topic of the group
        set_of = {**id_of, (): 0}
        for topic, start, count in zip(layout.topics, offsets, counts, strict=True):
            listed = partition_racks.topic_racks(topic)[:count]
            partition_set[start : start + len(listed)] = map(set_of.__getitem__, listed)
        return
    values = partition_racks.values()
    if set(map(type, values)) - {tuple}:
        values = [tuple(racks) for racks in values]  # type: ignore[assignment]
    ids = list(map(id_of.__getitem__, values))  # type: ignore[arg-type]
    if not ids:
        return
    try:
        topics, partitions = zip(*partition_racks, strict=True)
        ts = list(map(topic_index.__getitem__, topics))
        bulk = (
            set(map(type, partitions)) == {int}
            and min(partitions) >= 0
            and all(map(operator.lt, partitions, map(counts.__getitem__, ts)))
        )
    except (KeyError, TypeError, ValueError):
        bulk = False
    if bulk:
        qs = map(operator.add, map(offsets.__getitem__, ts), partitions)
        deque(map(operator.setitem, repeat(partition_set), qs, ids), maxlen=0)
        return
    for key, set_index in zip(partition_racks, ids, strict=True):
        t = topic_index.get(key[0])
        partition = key[1]
        if type(partition) is not int:
            raise TypeError(
                f"partition_racks key {key!r}: a partition number is an int,"
                f" got {type(partition).__name__}"
            )
        if t is None or not 0 <= partition < counts[t]:
            continue
        partition_set[offsets[t] + partition] = set_index


def rack_pass_applies(view: RackView, comp: Component, plan: Mapping[int, Planned]) -> bool:
    """True when the plan without racks has a mismatch in this component (with none it is
    already rack-optimal, and keeping it keeps every other property). Each racked member's
    held replica-rack sets are collected in C; only the distinct sets are looked at."""
    member_racks = {view.member_rack[m] for m in comp.members} - {NO_RACK}
    if not member_racks:
        return False
    sets = view.rack_sets
    if all(member_racks <= s for s in sets[1:]):
        return False
    at = view.partition_set.__getitem__
    for m in comp.members:
        rack = view.member_rack[m]
        if rack == NO_RACK:
            continue
        for i in set(map(at, plan[m])):
            if i and rack not in sets[i]:
                return True
    return False
