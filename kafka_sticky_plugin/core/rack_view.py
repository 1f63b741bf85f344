"""The rack pass's shared view (KIP-881): member and partition racks as small integers, the
*mismatch* vocabulary, and when the pass runs at all. The pass itself is :mod:`.racks`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .components import Component
from .layout import Layout

__all__ = ["NO_RACK", "RackView", "build_rack_view", "rack_pass_applies"]

NO_RACK = -1


@dataclass
class RackView:
    """Dense rack information: ``member_rack[m]`` is a rack index or :data:`NO_RACK`;
    ``partition_racks[q]`` is a frozenset of rack indices (empty: no information)."""

    member_rack: list[int]
    partition_racks: dict[int, frozenset[int]]


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
    try:  # tuples (what the adapters pass) hash directly; other iterables are converted
        distinct: set[tuple[str, ...]] = set(partition_racks.values())  # type: ignore[arg-type]
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
    racks_by_q: dict[int, frozenset[int]] = {}
    topic_index, offsets, counts = layout.topic_index, layout.offsets, layout.counts
    for key, racks in partition_racks.items():
        t = topic_index.get(key[0])
        partition = key[1]
        if t is None or not 0 <= partition < counts[t]:
            continue
        ids = by_tuple[racks if type(racks) is tuple else tuple(racks)]
        if ids:
            racks_by_q[offsets[t] + partition] = ids
    return RackView(member_rack=member_rack, partition_racks=racks_by_q)


def rack_pass_applies(view: RackView, comp: Component, plan: dict[int, list[int]]) -> bool:
    """True when the plan without racks has a mismatch in this component (with none it is
    already rack-optimal, and keeping it keeps every other property)."""
    member_racks = {view.member_rack[m] for m in comp.members} - {NO_RACK}
    if not member_racks:
        return False
    classes = set(view.partition_racks.values())
    if all(member_racks <= c for c in classes):
        return False
    get = view.partition_racks.get
    for m in comp.members:
        rack = view.member_rack[m]
        if rack == NO_RACK:
            continue
        for q in plan[m]:
            racks = get(q)
            if racks and rack not in racks:
                return True
    return False
