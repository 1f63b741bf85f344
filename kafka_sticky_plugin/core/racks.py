"""Rack awareness (KIP-881): after balance, prefer giving a member partitions with a replica in
its rack; stickiness comes third.

Vocabulary: a *placement* of partition ``q`` on member ``m`` is a **mismatch** when ``m`` has a
rack, ``q`` has replica racks, and ``m``'s rack is not among them. Every other placement (no
member rack, no partition racks, or a matching rack) costs nothing.

The rack pass never unbalances the plan: it takes the plan made without racks (whose loads
are optimal) and redistributes partitions among members of one component, to minimise
mismatches, then to keep owned partitions, then to move as little as possible.

- Homogeneous components (every member may take every partition) are solved exactly at the
  level of *buckets* (one bucket per member rack, plus one for members without a rack): a
  maximum flow of racked partitions into buckets that do not mismatch them, by augmenting
  paths over the few buckets; owned partitions start in their owner's bucket so that the
  flow only moves them to make room for a match. Within a bucket, members keep their own
  partitions first. The multiset of loads is kept (``base`` or ``base + 1``); which members
  get the extra partitions may change, to where racked partitions need them.
- Heterogeneous components keep every member's exact load and are solved exactly as well: a
  transportation problem between partition *classes* (topic, replica racks) and member
  *groups* (subscription, rack), solved as a min-cost flow (:mod:`.rack_flow`) that starts from
  the plan without racks with its mismatched placements taken out and puts them back along
  cheapest paths. The cost is lexicographic (mismatches, then partitions taken from their
  validated owner, then partitions moved), so the result has the fewest mismatches of every
  assignment with these loads and subscriptions, and a plan with none avoidable comes back
  unchanged. Cost: a few shortest-path phases over (classes + groups) nodes and (classes x
  subscribing groups) arcs, plus linear passes over the partitions.

:func:`rack_pass_applies` says when any of this runs; when it does not, the plan is exactly
the plan without racks.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..errors import InvariantViolation
from .claims import Claims
from .components import Component
from .layout import Layout
from .rack_flow import FlowNetwork

__all__ = ["RackView", "build_rack_view", "improve_rack_locality", "rack_pass_applies"]

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


def improve_rack_locality(
    layout: Layout,
    claims: Claims,
    comp: Component,
    plan: dict[int, list[int]],
    view: RackView,
) -> dict[int, list[int]]:
    """Return a plan with fewer (or equal) mismatches and the same multiset of loads (the same
    load per member when the component is heterogeneous)."""
    if comp.homogeneous:
        return _homogeneous(claims, comp, plan, view)
    return _heterogeneous(layout, claims, comp, plan, view)


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

    def put_all(qs: list[int], c: frozenset[int], b: int) -> None:
        """Place partitions of class ``c`` in bucket ``b`` (owned by a member of ``b`` or not)."""
        lists = holders[b].get(c)
        if lists is None:
            lists = holders[b][c] = ([], [])
        own, other = lists
        for q in qs:
            o = owner[q]
            (own if o >= 0 and bucket_of.get(o) == b else other).append(q)

    # Owned partitions whose owner's bucket matches them stay in that bucket while it has
    # room (in partition order, as one at a time would); the rest wait, by class.
    pending: dict[frozenset[int], list[int]] = {}
    staying: dict[tuple[int, frozenset[int]], list[int]] = {}
    for q, c in racked:
        o = owner[q]
        b = bucket_of.get(o, NO_RACK) if o >= 0 else NO_RACK
        if o >= 0 and o in bucket_of and b in allowed[c] and rooms.has(b):
            rooms.take(b)
            staying.setdefault((b, c), []).append(q)
        else:
            pending.setdefault(c, []).append(q)
    for (b, c), qs in staying.items():
        put_all(qs, c, b)
    unmatched: list[int] = []
    for c in sorted(pending, key=lambda c: (len(allowed[c]), sorted(c))):
        qs = pending[c]
        i = 0
        while i < len(qs):
            # Direct placements in bulk: each partition takes the first allowed bucket with
            # room, so the buckets fill in order.
            for b in allowed[c]:
                k = min(rooms.free(b), len(qs) - i)
                if k > 0:
                    rooms.take_many(b, k)
                    put_all(qs[i : i + k], c, b)
                    i += k
            if i == len(qs):
                break
            moves = _augmenting_path(c, allowed, holders, rooms)
            if moves is None:
                # nothing reachable has room: no later partition of this class fits either
                unmatched.extend(qs[i:])
                break
            rooms.take(moves[0][2])
            for cls, src, dst in moves:
                lists = holders[src][cls]
                moved = lists[1].pop() if lists[1] else lists[0].pop()
                put_all([moved], cls, dst)
            put_all([qs[i]], c, moves[-1][1])
            i += 1

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

    def free(self, b: int) -> int:
        """How many :meth:`take` calls on ``b`` would succeed in a row."""
        return self.room[b] + min(self.size[b] - self.extra_used[b], self.extras)

    def take_many(self, b: int, k: int) -> None:
        """``k`` :meth:`take` calls on ``b`` (``k <= free(b)``): base room first, then extras."""
        from_room = min(k, self.room[b])
        self.room[b] -= from_room
        self.extra_used[b] += k - from_room
        self.extras -= k - from_room


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
            raise InvariantViolation("rack pass: capacities do not add up (engine bug)")
        nxt = []
        for m in takers:
            if i == len(qs):
                break
            assigned[m].append(qs[i])
            i += 1
            if len(assigned[m]) < capacity[m]:
                nxt.append(m)
        takers = nxt


def _heterogeneous(
    layout: Layout, claims: Claims, comp: Component, plan: dict[int, list[int]], view: RackView
) -> dict[int, list[int]]:
    """Exact for any subscriptions: a transportation problem between partition *classes* and
    member *groups*, solved as a min-cost flow from the plan without racks.

    - A class is (topic, replica racks seen by this component): its partitions are
      interchangeable for every member. Racks no member of the component has are dropped;
      partitions without rack information form their own class per topic (never a mismatch).
    - A group is (subscription class, rack): its members may take the same partitions at the
      same cost. Members without a rack form their own group per subscription.
    - ``x[c][g]`` units of class ``c`` go to group ``g``, with ``sum_g x[c][g]`` the size of the
      class and ``sum_c x[c][g]`` the group's load in the plan without racks (so every member
      can keep its own load), and ``x[c][g] > 0`` only when ``g`` subscribes ``c``'s topic.

    The cost is lexicographic: mismatches first, then partitions that leave a validated owner
    holding them in the plan without racks, then partitions that leave their holder in that
    plan (each unit of ``x[c][g]`` beyond what ``g`` held of ``c`` is one move). The search
    starts from that plan with its mismatched placements taken out (a cheapest flow of its
    value: every remaining placement costs nothing) and adds them back along cheapest paths
    (:class:`FlowNetwork`), so the result is a cheapest flow: the fewest mismatches of all
    assignments with these loads and subscriptions, then the fewest owned partitions lost, then
    the fewest moves. A plan with no avoidable mismatch therefore comes back unchanged (any
    move would cost). :func:`_realise` turns the class counts back into partitions, moving
    exactly the partitions the flow counts as moved.
    """
    members = comp.members
    member_rack = view.member_rack
    comp_racks = frozenset(member_rack[m] for m in members) - {NO_RACK}

    # groups, ordered by their first (smallest) member
    group_index: dict[tuple[frozenset[int], int], int] = {}
    group_members: list[list[int]] = []
    group_rack: list[int] = []
    group_subs: list[frozenset[int]] = []
    group_of: dict[int, int] = {}
    for m in members:
        key = (layout.subscriptions[m], member_rack[m])
        g = group_index.get(key)
        if g is None:
            g = group_index[key] = len(group_members)
            group_members.append([])
            group_rack.append(member_rack[m])
            group_subs.append(key[0])
        group_members[g].append(m)
        group_of[m] = g

    # classes, ordered by (topic, first partition); None = no rack information
    get = view.partition_racks.get
    seen: dict[frozenset[int], frozenset[int]] = {}
    class_racks: list[frozenset[int] | None] = []
    class_size: list[int] = []
    classes_of_topic: dict[int, list[int]] = {}
    class_of: dict[int, int] = {}
    for t in comp.topics:
        local: dict[frozenset[int] | None, int] = {}
        start = layout.offsets[t]
        for q in range(start, start + layout.counts[t]):
            racks = get(q)
            eff: frozenset[int] | None = None
            if racks:
                eff = seen.get(racks)
                if eff is None:
                    eff = seen[racks] = racks & comp_racks
            c = local.get(eff)
            if c is None:
                c = local[eff] = len(class_racks)
                class_racks.append(eff)
                class_size.append(0)
                classes_of_topic.setdefault(t, []).append(c)
            class_size[c] += 1
            class_of[q] = c

    def mismatch(c: int, g: int) -> bool:
        rack, racks = group_rack[g], class_racks[c]
        return rack != NO_RACK and racks is not None and rack not in racks

    # the plan without racks, aggregated: held[g][c] = (partitions held, owned by their holder)
    owner = claims.owner
    held: list[dict[int, list[int]]] = [{} for _ in group_members]
    for m in members:
        per_class = held[group_of[m]]
        for q in plan[m]:
            c = class_of[q]
            counts = per_class.get(c)
            if counts is None:
                counts = per_class[c] = [0, 0]
            counts[0] += 1
            if owner[q] == m:
                counts[1] += 1

    n_classes, n_groups = len(class_racks), len(group_members)
    total = sum(class_size)
    moved_unit = 1
    owned_unit = total + 1  # > any number of moves
    mismatch_unit = owned_unit * total + total + 1  # > any trade of owned kept and moves
    source, sink = 0, n_classes + n_groups + 1
    net = FlowNetwork(n_classes + n_groups + 2)
    placed = [0] * n_classes  # flow kept from the plan (matching placements only)
    arcs: list[list[tuple[int, int]]] = [[] for _ in group_members]  # per group: (class, arc)
    group_placed = [0] * n_groups
    for g in range(n_groups):
        node = 1 + n_classes + g
        per_class = held[g]
        for t in sorted(group_subs[g]):
            for c in classes_of_topic.get(t, ()):
                bad = mismatch(c, g)
                base = mismatch_unit if bad else 0
                n_held, n_owned = per_class.get(c, (0, 0))
                # (capacity, cost, initial flow): stay with the owner, stay, arrive
                for amount, cost, initial in (
                    (n_owned, base - owned_unit, 0 if bad else n_owned),
                    (n_held - n_owned, base, 0 if bad else n_held - n_owned),
                    (class_size[c], base + moved_unit, 0),
                ):
                    if amount:
                        arcs[g].append((c, net.add_arc(1 + c, node, amount, cost, initial)))
                if not bad:
                    placed[c] += n_held
                    group_placed[g] += n_held
    for c in range(n_classes):
        net.add_arc(source, 1 + c, class_size[c], 0, placed[c])
    load = {m: len(plan[m]) for m in members}
    for g in range(n_groups):
        demand = sum(load[m] for m in group_members[g])
        net.add_arc(1 + n_classes + g, sink, demand, 0, group_placed[g])
    if sum(placed) + net.push_min_cost(source, sink) != total:
        raise InvariantViolation("rack pass: the flow does not place every partition (engine bug)")

    units: list[dict[int, int]] = [{} for _ in group_members]
    for g in range(n_groups):
        for c, a in arcs[g]:
            f = net.flow(a)
            if f:
                units[g][c] = units[g].get(c, 0) + f
    return _realise(claims, members, plan, load, group_of, group_members, class_of, held, units)


def _realise(
    claims: Claims,
    members: list[int],
    plan: dict[int, list[int]],
    load: dict[int, int],
    group_of: dict[int, int],
    group_members: list[list[int]],
    class_of: dict[int, int],
    held: list[dict[int, list[int]]],
    units: list[dict[int, int]],
) -> dict[int, list[int]]:
    """Partitions for class counts ``units[g][c]`` (see :func:`_heterogeneous`; ``held[g][c]``
    starts with the count in the plan without racks), every member getting exactly
    ``load[m]`` partitions.

    - In each (group, class), the partitions held there by the plan without racks stay with
      their holder up to the new count: first those validly owned by their holder, then the
      others, each in member and partition order; the rest are released to their class's
      pool.
    - A released partition goes back to its validated owner when the owner's group receives its
      class and the owner has room; the others fill the receiving groups in ascending group
      order, by partition index, and are dealt round-robin over each group's members with
      room (ascending member index), so topics stay spread.

    The number of partitions that change member is exactly the number released.
    """
    owner = claims.owner
    assigned: dict[int, list[int]] = {m: [] for m in members}
    quota = [dict(per_class) for per_class in units]
    pool: dict[int, list[int]] = {}
    for owned_pass in (True, False):
        for m in members:
            left = quota[group_of[m]]
            mine = assigned[m]
            for q in plan[m]:
                if (owner[q] == m) is not owned_pass:
                    continue
                c = class_of[q]
                if left.get(c, 0) > 0:
                    left[c] -= 1
                    mine.append(q)
                else:
                    pool.setdefault(c, []).append(q)
    need: list[dict[int, int]] = [{} for _ in group_members]
    for g, per_class in enumerate(units):
        for c, n in per_class.items():
            extra = n - held[g].get(c, (0,))[0]
            if extra > 0:
                need[g][c] = extra

    incoming: list[list[int]] = [[] for _ in group_members]
    for c in sorted(pool):
        rest = []
        for q in sorted(pool[c]):
            o = owner[q]
            g = group_of.get(o, -1) if o >= 0 else -1
            if g >= 0 and need[g].get(c, 0) > 0 and len(assigned[o]) < load[o]:
                assigned[o].append(q)
                need[g][c] -= 1
            else:
                rest.append(q)
        i = 0
        for g in range(len(group_members)):
            n = need[g].get(c, 0)
            incoming[g].extend(rest[i : i + n])
            i += n
        if i != len(rest):
            raise InvariantViolation("rack pass: class counts do not add up (engine bug)")
    for g, qs in enumerate(incoming):
        qs.sort()
        _deal(qs, group_members[g], assigned, load)
    for m in members:
        if len(assigned[m]) != load[m]:
            raise InvariantViolation("rack pass: a member's load changed (engine bug)")
        assigned[m].sort()
    return assigned
