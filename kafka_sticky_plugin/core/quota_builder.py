"""Plan for a homogeneous component: every member subscribes to the same topics.

Goals, in order (KIP-54: balance first, stickiness second):

1. balance: every member gets ``base`` or ``base + 1`` partitions (``base = P // M``), so
   max - min <= 1;
2. stickiness: every member keeps ``min(valid owned, final count)`` of what it owned; the
   ``P % M`` extra slots go first to members that already own more than ``base``;
3. per-topic spread: what a member gives up is taken from the topics it holds most of, rotating
   across topics between givers, and free partitions are dealt round-robin in
   ``(topic, partition)`` order, so a fresh group gets every topic spread within one partition;
4. a partition in the free pool whose previous owner (a KIP-341 hint) still has room goes back
   to it.

An already balanced assignment (every partition validly owned, counts ``base``/``base + 1``)
is returned unchanged.
"""

from __future__ import annotations

import heapq

from .claims import Claims
from .components import Component
from .layout import Layout

__all__ = ["build_quota_plan"]


def build_quota_plan(layout: Layout, claims: Claims, comp: Component) -> dict[int, list[int]]:
    """Return ``{member index: [global partition index, ...]}`` for a homogeneous component."""
    members = comp.members
    owner = claims.owner
    offsets, counts = layout.offsets, layout.counts
    total = sum(counts[t] for t in comp.topics)
    base, extra = divmod(total, len(members))

    owned = claims.owned
    # Extra slots: members that own more than base first (they keep one more), then by index.
    ranked = sorted(members, key=lambda m: (len(owned[m]) <= base, m))
    target = {m: base for m in members}
    for m in ranked[:extra]:
        target[m] = base + 1

    plan: dict[int, list[int]] = {}
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

    for t in comp.topics:
        start = offsets[t]
        for q in range(start, start + counts[t]):
            if owner[q] < 0:
                pool.append(q)
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

    # Deal the pool round-robin over members that still have room, in member order.
    takers = [m for m in members if deficit[m] > 0]
    i = 0
    rounds = 0
    while takers:
        for m in takers:
            plan[m].append(pool[i])
            i += 1
        rounds += 1
        takers = [m for m in takers if deficit[m] > rounds]
    return plan


def _hinted_drops(
    mine: list[int], excess: int, hints: dict[int, int], hint_room: dict[int, int]
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
    """
    by_topic: dict[int, list[int]] = {}
    for q in mine:
        by_topic.setdefault(layout.topic_of(q), []).append(q)
    heap = [(-len(qs), dropped_per_topic.get(t, 0), t) for t, qs in by_topic.items()]
    heapq.heapify(heap)
    drops: set[int] = set()
    for _ in range(excess):
        neg, given, t = heapq.heappop(heap)
        drops.add(by_topic[t].pop())
        dropped_per_topic[t] = dropped_per_topic.get(t, 0) + 1
        if neg + 1 < 0:
            heapq.heappush(heap, (neg + 1, given + 1, t))
    return drops
