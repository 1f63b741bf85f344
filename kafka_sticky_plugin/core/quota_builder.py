"""Plan for a homogeneous component: every member subscribes to the same topics.

Goals, in order (KIP-54: balance first, stickiness second):

1. balance: every member gets ``base`` or ``base + 1`` partitions (``base = P // M``), so
   max - min <= 1;
2. stickiness: every member keeps ``min(valid owned, final count)`` of what it owned; the
   ``P % M`` extra slots go first to members that already own more than ``base``;
3. per-topic spread: what a member gives up is taken from the topics it holds most of, rotating
   across topics between givers, and free partitions are dealt round-robin in
   ``(topic, partition)`` order, so a fresh group gets every topic spread within one partition;
   after any rebalance, a swap pass (:func:`_spread_moved`) then guarantees that no two members
   can exchange two *moved* partitions (partitions neither validly owned) so that one topic's
   gap of two or more between them narrows while no other topic's gap between them exceeds
   one. Only moved partitions take part, so the swaps cost no stickiness and no balance;
4. a partition in the free pool whose previous owner (a KIP-341 hint) still has room goes back
   to it.

An already balanced assignment (every partition validly owned, counts ``base``/``base + 1``)
is returned unchanged.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left
from collections import Counter
from collections.abc import Mapping
from operator import itemgetter
from typing import TypeAlias

import kafka_sticky_plugin.core.implementation as implementation

from .claims import TIED, UNOWNED, Claims, Indices, Planned
from .components import Component
from .layout import Layout

__all__ = ["DensePart", "build_quota_plan", "fresh_quota_ranges"]

#: One member's planned global partition indices, ascending: a list, its claims' own array
#: (:data:`.claims.Planned`), or a ``range`` when the member's share of a fresh component is
#: an arithmetic progression.
DensePart: TypeAlias = "Planned | range"


def build_quota_plan(layout: Layout, claims: Claims, comp: Component) -> Mapping[int, Planned]:
    """Return ``{member index: [global partition index, ...]}`` for a homogeneous component:
    the compiled twin's plan when it gives one (:mod:`.implementation`: the same plan)."""
    twin = implementation.twin
    if twin is not None:
        planned = twin.build_quota_plan(
            comp.members, comp.topics, layout.offsets, layout.counts, claims.owned, claims.hints
        )
        if planned is not None:
            return implementation.component_plan(comp.members, planned, claims.owned)
    members = comp.members
    owner = claims.owner
    counts = layout.counts
    total = sum(counts[t] for t in comp.topics)
    base, extra = divmod(total, len(members))

    owned = claims.owned
    # Extra slots: members that own more than base first (they keep one more), then by index.
    ranked = sorted(members, key=lambda m: (len(owned[m]) <= base, m))
    target = {m: base for m in members}
    for m in ranked[:extra]:
        target[m] = base + 1

    plan: dict[int, Planned] = {}
    pool: list[int] = []
    dropped_per_topic: dict[int, int] = {}
    hint_room = {m: target[m] - len(owned[m]) for m in members}
    for m in members:
        mine = owned[m]
        excess = len(mine) - target[m]
        if excess <= 0:
            plan[m] = list(mine)
            continue
        drops = _hinted_drops(mine, excess, claims.hints, hint_room)
        if len(drops) < excess:
            rest = [q for q in mine if q not in drops]
            drops |= _choose_drops(layout, rest, excess - len(drops), dropped_per_topic)
        plan[m] = [q for q in mine if q not in drops]
        pool.extend(drops)

    n_free = total - sum(map(len, map(owned.__getitem__, members)))
    if n_free:
        pool.extend(_free_partitions(layout, owner, comp.topics, n_free))
    pool.sort()

    deficit = {m: target[m] - len(plan[m]) for m in members}
    if claims.hints and pool:
        rest = []
        for q in pool:
            h = claims.hints.get(q)
            if h is not None and deficit.get(h, 0) > 0:
                plan[h].append(q)
                deficit[h] -= 1
            else:
                rest.append(q)
        pool = rest
    _deal_round_robin(pool, members, deficit, plan)
    if any(owned[m] for m in members) or claims.hints:
        # Every pool partition is moved (a dropper is over its target, never a receiver), so
        # the members that received any are exactly the holders of moved partitions.
        receivers = [m for m in members if len(plan[m]) > len(owned[m])]
        _spread_moved(layout, owned, receivers, plan)
    return plan


def fresh_quota_ranges(layout: Layout, claims: Claims, comp: Component) -> dict[int, range] | None:
    """:func:`build_quota_plan`'s plan for a fresh component, as one ``range`` per member; or
    ``None`` when the component is not fresh or its topics are not adjacent in the layout.

    Fresh: every partition of the component is unowned (no claim kept, none tied, so no hint
    either); a member with a valid claim rules it out at once. Then the quota plan deals the
    whole contiguous block ``lo .. hi - 1`` round-robin to the ``n`` members in index order,
    the first ``extra`` of them one partition more: member ``j`` gets ``lo + j, lo + j + n,
    ...``, ``base`` or ``base + 1`` of them, which is ``range(lo + j, lo + j + n * count, n)``.
    No partition index is materialised.
    """
    topics = comp.topics
    if topics[-1] - topics[0] + 1 != len(topics) or any(
        map(claims.owned.__getitem__, comp.members)
    ):
        return None
    lo = layout.offsets[topics[0]]
    hi = lo + sum(layout.counts[t] for t in topics)
    if claims.owner[lo:hi].count(UNOWNED) != hi - lo:
        return None
    n = len(comp.members)
    base, extra = divmod(hi - lo, n)
    return {
        m: range(lo + j, lo + j + n * (base + 1 if j < extra else base), n)
        for j, m in enumerate(comp.members)
    }


def _free_partitions(layout: Layout, owner: list[int], topics: list[int], n_free: int) -> list[int]:
    """The ``n_free`` (positive) partitions of ``topics`` that nobody validly owns (unowned
    or tied), in some order.

    ``n_free`` is known from the claims: every partition of a component that is validly
    owned is owned by a component member (a valid claim is on a subscribed topic). When the
    topics are adjacent in the layout and the free partitions few, ``list.index`` finds them
    over the whole block (one C-level pass for the unowned ones, another only if some are
    tied); otherwise each topic's owners are counted and scanned (:func:`_free_indices`)."""
    offsets, counts = layout.offsets, layout.counts
    block = _few_free_block(layout, topics, n_free)
    if block is not None:
        lo, hi = block
        found: list[int] = []
        i = lo - 1
        try:
            while len(found) < n_free:
                i = owner.index(UNOWNED, i + 1, hi)
                found.append(i)
        except ValueError:  # the rest are tied
            i = lo - 1
            for _ in range(n_free - len(found)):
                i = owner.index(TIED, i + 1, hi)
                found.append(i)
        return found
    pool: list[int] = []
    for t in topics:
        start = offsets[t]
        end = start + counts[t]
        held = owner[start:end]
        free = held.count(UNOWNED) + held.count(TIED)
        if free == len(held):
            pool.extend(range(start, end))
        elif free:
            pool.extend(_free_indices(held, start, free))
    return pool


def _few_free_block(layout: Layout, topics: list[int], n_free: int) -> tuple[int, int] | None:
    """``(lo, hi)``, the global indices of ``topics`` (ascending), when they are adjacent in
    the layout and ``n_free`` of them are few enough (one in 16) to be found by
    ``list.index`` over the block; else ``None``."""
    lo = layout.offsets[topics[0]]
    hi = layout.offsets[topics[-1]] + layout.counts[topics[-1]]
    if topics[-1] - topics[0] + 1 == len(topics) and n_free * 16 <= hi - lo:
        return lo, hi
    return None


def _free_indices(held: list[int], start: int, free: int) -> list[int]:
    """The global indices of the ``free`` unowned or tied entries of ``held`` (the owners of
    ``start, start + 1, ...``), ascending; a few are found by ``list.index`` (in C)."""
    if free * 16 > len(held):
        return [start + i for i, o in enumerate(held) if o < 0]
    found: list[int] = []
    for marker in (UNOWNED, TIED):
        i = -1
        for _ in range(held.count(marker)):
            i = held.index(marker, i + 1)
            found.append(start + i)
    found.sort()
    return found


def _deal_round_robin(
    pool: list[int], members: list[int], deficit: dict[int, int], plan: dict[int, Planned]
) -> None:
    """Deal ``pool`` round-robin, in member order, to the members with room: round ``r`` gives
    the next partition to every member whose ``deficit`` exceeds ``r``.

    While the set of takers stays the same for ``k`` rounds, taker ``j`` of ``n`` receives
    every ``n``-th partition of the next ``n * k``: one slice each, so a fresh million-partition
    group costs a slice per member and taker set, not a Python step per partition.
    """
    takers = [m for m in members if deficit[m] > 0]
    i = 0
    rounds = 0
    while takers:
        n = len(takers)
        until = min(deficit[m] for m in takers)
        span = n * (until - rounds)
        for j, m in enumerate(takers):
            plan[m].extend(pool[i + j : i + span : n])
        i += span
        rounds = until
        takers = [m for m in takers if deficit[m] > rounds]


def _spread_moved(
    layout: Layout, owned: list[Indices], members: list[int], plan: dict[int, Planned]
) -> None:
    """Swap moved partitions between ``members`` (every holder of a moved partition is in it)
    until no *spread swap* exists.

    A moved partition is one its holder did not validly own: ``plan[m]`` of a member of
    ``members`` is its valid claims ``owned[m]`` (all kept, a receiver gives nothing up)
    followed by moved partitions only. A spread swap takes a moved
    partition of topic ``t`` from ``a`` and a moved partition of topic ``u != t`` from ``b``
    and exchanges them, where ``c_t(a) >= c_t(b) + 2`` and ``c_u(b) >= c_u(a) + 1`` (``c_t(m)``:
    partitions of ``t`` that ``m`` holds). Loads and kept partitions do not change, and
    ``sum c_t(m)**2`` drops by at least 2 per swap, so the pass ends. A fresh group (no claims)
    never needs it: the round-robin deal already spreads every topic within one.
    """
    topic_at = layout.topic_at()
    moved: dict[int, dict[int, list[int]]] = {}
    counts: dict[int, Counter[int]] = {}
    for m in members:
        mine = plan[m][len(owned[m]) :]
        if not mine:
            continue
        by_topic: dict[int, list[int]] = {}
        for q in mine:
            by_topic.setdefault(topic_at[q], []).append(q)
        moved[m] = by_topic
        counts[m] = Counter(map(topic_at.__getitem__, plan[m]))
    if len(moved) < 2:
        return
    holders = sorted(moved)
    holder_counts = [counts[b] for b in holders]
    # Each topic's lowest count over the holders, kept exact at each sweep's start: only a
    # swap changes counts (of its two topics), so only the topics it touched are recounted.
    # (A swap never lowers a lowest count, so a stale one would only let through partner
    # searches that find nothing: the plan does not depend on it, the time does.)
    known: dict[int, int] = {}
    touched: set[int] = set()
    changed = True
    while changed:
        changed = False
        # Topics where some holder of a moved partition is two above the lowest holder.
        candidates = {t for a in holders for t, qs in moved[a].items() if qs and counts[a][t] >= 2}
        for t in touched:
            known.pop(t, None)
        touched.clear()
        known.update(_lowest_counts(candidates.difference(known), holder_counts))
        low = {t: known[t] for t in candidates}
        # ``low`` may go stale within a sweep; it only filters, and a sweep with a swap is
        # followed by another with fresh values, so the last sweep sees exact ones.
        for a in holders:
            for t in sorted(moved[a]):
                while moved[a][t] and t in low and counts[a][t] >= low[t] + 2:
                    partner = _find_partner(a, t, holders, moved, counts)
                    if partner is None:
                        break
                    b, u = partner
                    q = moved[a][t].pop()
                    r = moved[b][u].pop()
                    plan[a].remove(q)
                    plan[b].remove(r)
                    plan[a].append(r)
                    plan[b].append(q)
                    moved[a].setdefault(u, []).append(r)
                    moved[b].setdefault(t, []).append(q)
                    for m, gain, loss in ((a, u, t), (b, t, u)):
                        counts[m][gain] = counts[m].get(gain, 0) + 1
                        counts[m][loss] -= 1
                    touched.update((t, u))
                    changed = True


def _lowest_counts(topics: set[int], counts: list[Counter[int]]) -> dict[int, int]:
    """``{t: min(c[t] for c in counts)}`` for every ``t`` in ``topics`` (a missing topic counts
    0): one ``map`` per topic, the holders stepped in C."""
    return {t: min(map(itemgetter(t), counts)) for t in topics}


def _find_partner(
    a: int,
    t: int,
    holders: list[int],
    moved: dict[int, dict[int, list[int]]],
    counts: dict[int, Counter[int]],
) -> tuple[int, int] | None:
    """The first ``(b, u)`` (member order, then topic order) that makes a spread swap with
    ``a``'s moved partition of ``t``, or ``None``."""
    ca = counts[a]
    limit = ca[t] - 2
    for b in holders:
        cb = counts[b]
        if b == a or cb.get(t, 0) > limit:
            continue
        for u in sorted(moved[b]):
            if u != t and moved[b][u] and cb[u] >= ca.get(u, 0) + 1:
                return b, u
    return None


def _hinted_drops(
    mine: Indices, excess: int, hints: dict[int, int], hint_room: dict[int, int]
) -> set[int]:
    """Partitions of ``mine`` whose previous owner (a hint) has room: giving them up first
    lets them go back where they were, at no extra cost in moves."""
    drops: set[int] = set()
    if not hints:
        return drops
    for q in mine:
        h = hints.get(q)
        if h is not None and hint_room.get(h, 0) > 0:
            drops.add(q)
            hint_room[h] -= 1
            if len(drops) == excess:
                break
    return drops


def _choose_drops(
    layout: Layout, mine: list[int], excess: int, dropped_per_topic: dict[int, int]
) -> set[int]:
    """Pick ``excess`` partitions of ``mine`` to give up.

    Take from the topic the member holds most of; among equal topics, the one given up least
    often so far by earlier givers (so consecutive givers free different topics); then the
    lowest topic index. Within a topic, the highest partition number goes first.

    ``mine`` is ascending, so a topic's partitions are one run of it: only the per-topic
    counts are built (in C), and each drop is found by a binary search for its run's end.
    """
    held = Counter(map(layout.topic_at().__getitem__, mine))
    heap = [(-n, dropped_per_topic.get(t, 0), t) for t, n in held.items()]
    heapq.heapify(heap)
    taken: dict[int, int] = {}
    drops: set[int] = set()
    for _ in range(excess):
        neg, given, t = heapq.heappop(heap)
        k = taken.get(t, 0)
        end = layout.offsets[t] + layout.counts[t]
        drops.add(mine[bisect_left(mine, end) - 1 - k])
        taken[t] = k + 1
        dropped_per_topic[t] = dropped_per_topic.get(t, 0) + 1
        if neg + 1 < 0:
            heapq.heappush(heap, (neg + 1, given + 1, t))
    return drops
