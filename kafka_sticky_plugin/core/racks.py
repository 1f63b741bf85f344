"""Rack awareness (KIP-881): after balance, prefer giving a member partitions with a replica in
its rack; stickiness comes third.

Vocabulary: a *placement* of partition ``q`` on member ``m`` is a **mismatch** when ``m`` has a
rack, ``q`` has replica racks, and ``m``'s rack is not among them. Every other placement (no
member rack, no partition racks, or a matching rack) costs nothing.

The rack pass never changes how many partitions a member gets: it takes the plan made without
racks (whose loads are optimal) and redistributes partitions among members of one component
keeping every member's load, to minimise mismatches and then to keep owned partitions.

- Homogeneous components (every member may take every partition) are solved exactly at the
  level of *buckets* (one bucket per member rack, plus one for members without a rack): a
  maximum flow of racked partitions into buckets that do not mismatch them, by augmenting
  paths over the few buckets; owned partitions start in their owner's bucket so that the
  flow only moves them to make room for a match. Within a bucket, members keep their own
  partitions first.
- Heterogeneous components get a local improvement: exchanges of two partitions between two
  members (each subscribed to the other's topic) that lower the number of mismatches.

:func:`rack_pass_applies` says when any of this runs; when it does not, the plan is exactly
the plan without racks.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .claims import Claims
from .components import Component
from .layout import Layout

__all__ = ["RackView", "build_rack_view", "improve_rack_locality", "rack_pass_applies"]

NO_RACK = -1


@dataclass
class RackView:
    """Dense rack information: ``member_rack[m]`` is a rack index or :data:`NO_RACK`;
    ``partition_racks[q]`` is a frozenset of rack indices (empty: no information)."""

    member_rack: list[int]
    partition_racks: dict[int, frozenset[int]]

    def mismatch(self, m: int, q: int) -> bool:
        rack = self.member_rack[m]
        if rack == NO_RACK:
            return False
        racks = self.partition_racks.get(q)
        return bool(racks) and rack not in racks  # type: ignore[operator]


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


def improve_rack_locality(
    layout: Layout,
    claims: Claims,
    comp: Component,
    plan: dict[int, list[int]],
    view: RackView,
) -> dict[int, list[int]]:
    """Return a plan with the same load per member and fewer (or equal) mismatches."""
    if comp.homogeneous:
        return _homogeneous(claims, comp, plan, view)
    return _exchange(layout, comp, plan, view)


def _homogeneous(
    claims: Claims, comp: Component, plan: dict[int, list[int]], view: RackView
) -> dict[int, list[int]]:
    """Exact at bucket level. Balance fixes only the multiset of loads (``base`` or
    ``base + 1``), so the ``P % M`` extra slots go where the racked partitions need them.

    Partitions with the same replica racks form a *class*; the flow state is, per bucket and
    class, the partitions placed there (split into "owned by a member of this bucket" and the
    rest), so an augmenting path costs O(buckets x classes), not O(partitions).
    """
    owner = claims.owner
    members = comp.members
    total = sum(len(plan[m]) for m in members)
    base, extras = divmod(total, len(members))
    bucket_of = {m: view.member_rack[m] for m in members}
    buckets = sorted(set(bucket_of.values()))
    rooms = _Rooms(
        buckets, {b: sum(1 for m in members if bucket_of[m] == b) for b in buckets}, base, extras
    )

    allowed: dict[frozenset[int], list[int]] = {}
    racked: list[tuple[int, frozenset[int]]] = []
    neutral: list[int] = []
    get = view.partition_racks.get
    for q in sorted(q for m in members for q in plan[m]):
        racks = get(q)
        if racks:
            if racks not in allowed:
                allowed[racks] = [b for b in buckets if b == NO_RACK or b in racks]
            racked.append((q, racks))
        else:
            neutral.append(q)

    # holders[b][c] = ([placed here, owned by a member of b], [placed here, others])
    holders: dict[int, dict[frozenset[int], tuple[list[int], list[int]]]] = {b: {} for b in buckets}

    def put(q: int, c: frozenset[int], b: int) -> None:
        o = owner[q]
        lists = holders[b].get(c)
        if lists is None:
            lists = holders[b][c] = ([], [])
        lists[0 if o >= 0 and bucket_of.get(o) == b else 1].append(q)

    pending: dict[frozenset[int], list[int]] = {}
    for q, c in racked:
        o = owner[q]
        b = bucket_of.get(o, NO_RACK) if o >= 0 else NO_RACK
        if o >= 0 and o in bucket_of and b in allowed[c] and rooms.has(b):
            rooms.take(b)
            put(q, c, b)
        else:
            pending.setdefault(c, []).append(q)
    unmatched: list[int] = []
    for c in sorted(pending, key=lambda c: (len(allowed[c]), sorted(c))):
        qs = pending[c]
        for i, q in enumerate(qs):
            direct = next((b for b in allowed[c] if rooms.has(b)), None)
            if direct is not None:
                rooms.take(direct)
                put(q, c, direct)
                continue
            moves = _augmenting_path(c, allowed, holders, rooms)
            if moves is None:
                # nothing reachable has room: no later partition of this class fits either
                unmatched.extend(qs[i:])
                break
            rooms.take(moves[0][2])
            for cls, src, dst in moves:
                lists = holders[src][cls]
                moved = lists[1].pop() if lists[1] else lists[0].pop()
                put(moved, cls, dst)
            put(q, c, moves[-1][1])

    placed_in: dict[int, list[int]] = {b: [] for b in buckets}
    for b in buckets:
        for own, other in holders[b].values():
            placed_in[b].extend(own)
            placed_in[b].extend(other)

    # member capacities: base everywhere, each bucket's extras to its members owning the most
    # there, the remaining extras to the largest owners.
    owned_in: dict[int, int] = dict.fromkeys(members, 0)
    for b in buckets:
        for q in placed_in[b]:
            o = owner[q]
            if o >= 0 and bucket_of.get(o) == b:
                owned_in[o] += 1
    capacity = dict.fromkeys(members, base)
    for b in buckets:
        ranked = sorted((m for m in members if bucket_of[m] == b), key=lambda m: (-owned_in[m], m))
        for m in ranked[: rooms.extra_used[b]]:
            capacity[m] += 1
    spare = sorted(
        (m for m in members if capacity[m] == base), key=lambda m: (-len(claims.owned[m]), m)
    )
    for m in spare[: rooms.extras]:
        capacity[m] += 1

    assigned: dict[int, list[int]] = {m: [] for m in members}
    for b in buckets:
        rest = []
        for q in sorted(placed_in[b]):
            o = owner[q]
            if o >= 0 and bucket_of.get(o) == b and len(assigned[o]) < capacity[o]:
                assigned[o].append(q)
            else:
                rest.append(q)
        _deal(rest, [m for m in members if bucket_of[m] == b], assigned, capacity)
    rest = []
    for q in sorted(neutral + unmatched):
        o = owner[q]
        if o >= 0 and o in capacity and len(assigned[o]) < capacity[o]:
            assigned[o].append(q)
        else:
            rest.append(q)
    _deal(rest, members, assigned, capacity)
    for m in members:
        assigned[m].sort()
    return assigned


class _Rooms:
    """Free places per bucket: ``base`` per member, plus at most one extra per member while
    extras remain (``extras`` is the number not yet used)."""

    def __init__(self, buckets: list[int], size: dict[int, int], base: int, extras: int) -> None:
        self.size = size
        self.room = {b: base * size[b] for b in buckets}
        self.extra_used = dict.fromkeys(buckets, 0)
        self.extras = extras

    def has(self, b: int) -> bool:
        return self.room[b] > 0 or (self.extras > 0 and self.extra_used[b] < self.size[b])

    def take(self, b: int) -> None:
        if self.room[b] > 0:
            self.room[b] -= 1
        else:
            self.extra_used[b] += 1
            self.extras -= 1


def _augmenting_path(
    c: frozenset[int],
    allowed: dict[frozenset[int], list[int]],
    holders: dict[int, dict[frozenset[int], tuple[list[int], list[int]]]],
    rooms: _Rooms,
) -> list[tuple[frozenset[int], int, int]] | None:
    """Breadth-first over buckets for a new partition of class ``c``: it enters a full allowed
    bucket, which passes one partition of some class to another bucket allowed for that class,
    ... until a bucket with room. Returns the moves ``(class, from, to)`` in the order to apply
    them (the first fills the bucket with room), with the entry bucket as the last ``from``;
    ``None`` when no bucket with room is reachable."""
    parent: dict[int, tuple[int, frozenset[int]] | None] = {}
    queue: deque[int] = deque()
    for b in allowed[c]:
        parent[b] = None
        queue.append(b)
    while queue:
        b = queue.popleft()
        for cls, (own, other) in holders[b].items():
            if not own and not other:
                continue
            for b2 in allowed[cls]:
                if b2 in parent:
                    continue
                parent[b2] = (b, cls)
                if rooms.has(b2):
                    moves: list[tuple[frozenset[int], int, int]] = []
                    node = b2
                    link = parent[node]
                    while link is not None:
                        src, moved_cls = link
                        moves.append((moved_cls, src, node))
                        node = src
                        link = parent[node]
                    return moves
                queue.append(b2)
    return None


def _deal(
    qs: list[int], members: list[int], assigned: dict[int, list[int]], capacity: dict[int, int]
) -> None:
    """Round-robin ``qs`` over ``members`` that still have room (keeps topics spread)."""
    takers = [m for m in members if len(assigned[m]) < capacity[m]]
    i = 0
    while i < len(qs):
        if not takers:
            raise RuntimeError("rack pass: capacities do not add up (engine bug)")
        nxt = []
        for m in takers:
            if i == len(qs):
                break
            assigned[m].append(qs[i])
            i += 1
            if len(assigned[m]) < capacity[m]:
                nxt.append(m)
        takers = nxt


def _exchange(
    layout: Layout, comp: Component, plan: dict[int, list[int]], view: RackView
) -> dict[int, list[int]]:
    """Pairwise exchanges that lower mismatches, keeping loads and subscriptions valid."""
    subs = layout.subscriptions
    topic_of = layout.topic_of
    held = {m: set(plan[m]) for m in comp.members}
    improved = True
    while improved:
        improved = False
        bad = [(m, q) for m in comp.members for q in sorted(held[m]) if view.mismatch(m, q)]
        for x, q in bad:
            if q not in held[x]:
                continue
            tq = topic_of(q)
            racks = view.partition_racks[q]
            for y in comp.members:
                if y == x or view.member_rack[y] not in racks or tq not in subs[y]:
                    continue
                swap = next(
                    (
                        f
                        for f in sorted(held[y])
                        if topic_of(f) in subs[x]
                        and view.mismatch(x, f) + view.mismatch(y, q) < 1 + view.mismatch(y, f)
                    ),
                    None,
                )
                if swap is None:
                    continue
                held[x].remove(q)
                held[y].remove(swap)
                held[x].add(swap)
                held[y].add(q)
                improved = True
                break
    return {m: sorted(held[m]) for m in comp.members}
