"""Plan for a heterogeneous component: members subscribe to different topic sets.

Goals, in order:

1. load optimality: when the plan is done, no chain of moves along subscriptions
   (member A gives a partition of topic t1 to B, who subscribes t1, B gives one of t2 to C,
   ...) can lower a member of load L while raising a member of load <= L - 2. This is the
   condition under which the load vector is lexicographically minimal, so max load is minimal
   and no member is needlessly starved;
2. stickiness (a good start only: :mod:`.keep_flow` then makes it exact among load-optimal
   plans): every validly owned partition starts with its owner; free partitions go to the
   least loaded eligible member; the balancing moves partitions that were free before this
   plan first, and moves along shortest chains.

The balancing runs level by level: at the current maximum load H every member at H looks
for a chain (breadth-first over topics, each topic expanded once) to a member at <= H - 2.
A member that finds none, together with everything it can reach, is *frozen*: nothing
reachable from it can ever go below H - 1 again, so later chains neither start in, pass
through, nor end in frozen members. The loop ends when the non-frozen members are within
one of each other, which together with the freezing argument gives goal 1.

Members and topics are dense indices; per member the held partitions are kept per topic, split
into "kept" (validly owned before) and "fresh" (given in this plan), so that a move can take a
fresh partition first.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, bisect_right, insort
from collections import deque
from collections.abc import Mapping
from itertools import chain

from .claims import TIED, UNOWNED, Claims
from .components import Component
from .layout import Layout
from .quota_builder import _free_indices

__all__ = ["build_balanced_plan", "initial_state", "water_fill"]

# A source whose chain search fails freezes what it reaches; below this many low members
# a cheap pre-check (does a low member subscribe to this topic?) runs before expanding.
_LOW_PRECHECK = 64


class _State:
    """Mutable holdings of one component; see the module docstring."""

    def __init__(self, layout: Layout, claims: Claims, comp: Component) -> None:
        self.layout = layout
        self.owner = claims.owner
        self.hints = claims.hints
        self.subs = layout.subscriptions
        self.load: dict[int, int] = {m: 0 for m in comp.members}
        self.kept: dict[int, dict[int, list[int]]] = {m: {} for m in comp.members}
        self.fresh: dict[int, dict[int, list[int]]] = {m: {} for m in comp.members}
        self.subscribers: dict[int, list[int]] = {t: [] for t in comp.topics}
        for m in comp.members:
            for t in self.subs[m]:
                self.subscribers[t].append(m)

    def held_topics(self, m: int, fresh_only: bool = False) -> list[int]:
        """Topics of which ``m`` holds at least one partition (only partitions given in this
        plan when ``fresh_only``), ascending."""
        topics = {t for t, qs in self.fresh[m].items() if qs}
        if not fresh_only:
            topics.update(t for t, qs in self.kept[m].items() if qs)
        return sorted(topics)

    def give(self, m: int, t: int, q: int) -> None:
        bucket = self.kept if self.owner[q] == m else self.fresh
        bucket[m].setdefault(t, []).append(q)
        self.load[m] += 1

    def take(self, m: int, t: int, receiver: int) -> int:
        """Remove one partition of topic ``t`` from ``m``: a fresh one first, else the kept
        one whose previous-owner hint is the receiver, else the highest kept one."""
        fresh = self.fresh[m].get(t)
        if fresh:
            q = fresh.pop()
        else:
            kept = self.kept[m][t]
            q = kept[-1]
            for i in range(len(kept) - 1, -1, -1):
                if self.hints.get(kept[i]) == receiver:
                    q = kept[i]
                    break
            kept.remove(q)
        self.load[m] -= 1
        return q


def build_balanced_plan(layout: Layout, claims: Claims, comp: Component) -> dict[int, list[int]]:
    """Return ``{member index: [global partition index, ...]}`` for any component."""
    state = initial_state(layout, claims, comp)
    _balance(state, comp)
    _restore_owners(state, comp)

    plan: dict[int, list[int]] = {}
    for m in comp.members:
        qs = list(chain.from_iterable(state.kept[m].values()))
        qs.extend(chain.from_iterable(state.fresh[m].values()))
        qs.sort()
        plan[m] = qs
    return plan


def initial_state(layout: Layout, claims: Claims, comp: Component) -> _State:
    """The holdings before balancing: every valid claim with its owner, then each free
    partition (most constrained topics first, ascending within a topic) to the least loaded
    subscriber, the smallest index on equal loads, except that a hinted previous claimant at
    that least load wins (the one-step rule, kept as the reference in
    ``tests/test_engine_bulk_plans.py``).

    Bulk: claims enter per (member, topic) run, and a topic whose free partitions carry no
    hint is dealt by :func:`water_fill`; only hinted topics take a heap step per partition.
    """
    state = _State(layout, claims, comp)
    offsets, counts = layout.offsets, layout.counts
    owner = claims.owner

    # Every validly owned partition starts with its owner: one slice per (member, topic) run
    # of its ascending claims, the run's end found by binary search.
    ends = [o + n for o, n in zip(offsets, counts, strict=True)]
    for m in comp.members:
        qs = claims.owned[m]
        if qs:
            runs = claims.owned_by_topic(m)
            state.kept[m] = _runs_by_topic(qs, offsets, ends) if runs is None else runs
            state.load[m] = len(qs)

    # Free partitions, most constrained topics first, each to the least loaded subscriber
    # (the previous owner named by a hint wins ties).
    hints = claims.hints
    order = sorted(comp.topics, key=lambda t: (len(state.subscribers[t]), t))
    for t in order:
        start = offsets[t]
        window = owner[start : start + counts[t]]
        n_free = window.count(UNOWNED) + window.count(TIED)
        if not n_free:
            continue
        free = (
            list(range(start, start + counts[t]))
            if n_free == len(window)
            else _free_indices(window, start, n_free)
        )
        if not hints or hints.keys().isdisjoint(free):
            for m, qs in water_fill(free, state.subscribers[t], state.load).items():
                state.fresh[m][t] = qs
                state.load[m] += len(qs)
            continue
        heap = [(state.load[m], m) for m in state.subscribers[t]]
        heapq.heapify(heap)
        for q in free:
            load, m = heap[0]
            h = hints.get(q)
            if h is not None and h in state.load and t in state.subs[h] and state.load[h] == load:
                m = h
                state.give(m, t, q)
                heap = [(state.load[x], x) for x in state.subscribers[t]]
                heapq.heapify(heap)
                continue
            state.give(m, t, q)
            heapq.heapreplace(heap, (load + 1, m))
    return state


def _runs_by_topic(qs: list[int], offsets: list[int], ends: list[int]) -> dict[int, list[int]]:
    """``{topic: its partitions in qs}`` for ascending global indices ``qs``, topics
    ascending: two binary searches and a slice per topic, not a step per partition (the
    topic is :meth:`.Layout.topic_of`'s, without its flat table's memory)."""
    runs: dict[int, list[int]] = {}
    i, n = 0, len(qs)
    while i < n:
        t = bisect_right(offsets, qs[i]) - 1
        j = bisect_left(qs, ends[t], i)
        runs[t] = qs[i:j]
        i = j
    return runs


def water_fill(free: list[int], takers: list[int], load: Mapping[int, int]) -> dict[int, list[int]]:
    """Deal ``free`` (ascending) one partition at a time to the least loaded of ``takers``
    (ascending member indices), the smallest index first on equal loads, counting what each
    has received: ``{member: its partitions, ascending}`` (members receiving nothing left
    out). ``load`` is read, not changed.

    The picks are the first ``len(free)`` pairs ``(level, member)`` with ``level >=
    load[member]`` in ascending order, so while the set of members at or below the current
    level stays the same for ``k`` levels, the ``j``-th of its ``n`` members (by index) takes
    every ``n``-th partition of the next ``n * k``: one slice per member and level change,
    not a heap step per partition.
    """
    got: dict[int, list[int]] = {}
    by_load = sorted(takers, key=lambda m: (load[m], m))
    eligible: list[int] = []
    k, pos, i, n_takers = len(free), 0, 0, len(by_load)
    while pos < k:
        level = load[by_load[i]]
        while i < n_takers and load[by_load[i]] == level:
            insort(eligible, by_load[i])
            i += 1
        n = len(eligible)
        stop = k if i == n_takers else min(k, pos + n * (load[by_load[i]] - level))
        for j, m in enumerate(eligible[: stop - pos]):
            qs = free[pos + j : stop : n]
            mine = got.get(m)
            if mine is None:
                got[m] = qs
            else:
                mine.extend(qs)
        pos = stop
    return got


def _balance(state: _State, comp: Component) -> None:
    frozen: set[int] = set()
    load = state.load
    while True:
        active = [m for m in comp.members if m not in frozen]
        if not active:
            return
        high = max(load[m] for m in active)
        low_set = {m for m in active if load[m] <= high - 2}
        if not low_set:
            return
        for source in [m for m in active if load[m] == high]:
            if source in frozen or load[source] != high:
                continue
            if not low_set:
                break
            # A chain that only moves partitions given in this plan costs no stickiness: try
            # it first; only a failed unrestricted search proves the source is stuck.
            path, _ = _find_chain(state, source, low_set, frozen, fresh_only=True)
            reached: list[int] = []
            if path is None:
                path, reached = _find_chain(state, source, low_set, frozen, fresh_only=False)
            if path is None:
                frozen.update(reached)
                continue
            target = path[-1][0]
            for (giver, t), receiver in _hops(path):
                q = state.take(giver, t, receiver)
                state.give(receiver, t, q)
            if load[target] > high - 2:
                low_set.discard(target)


def _restore_owners(state: _State, comp: Component) -> None:
    """Stickiness repair at equal loads.

    For a partition ``q`` that its valid owner ``o`` lost to ``x``, look for a chain from ``o``
    to ``x`` that moves only partitions given in this plan; if one exists, run it and hand
    ``q`` back to ``o``. Loads do not change (so load optimality is kept) and the number of
    partitions that stay with their owner grows by at least one per repair, so this ends.
    """
    owner = state.owner
    owner_at = owner.__getitem__
    displaced = [
        (x, t, q)
        for x in comp.members
        for t, qs in state.fresh[x].items()
        if qs and max(map(owner_at, qs)) >= 0  # most fresh lists hold free partitions only
        for q in qs
        if owner[q] >= 0
    ]
    for x, t, q in displaced:
        o = owner[q]
        if q not in state.fresh[x].get(t, ()) or not state.fresh[o]:
            continue
        path, _ = _find_chain(state, o, {x}, set(), fresh_only=True)
        if path is None:
            continue
        for (giver, topic), receiver in _hops(path):
            moved = state.take(giver, topic, receiver)
            state.give(receiver, topic, moved)
        state.fresh[x][t].remove(q)
        state.load[x] -= 1
        state.give(o, t, q)


def _hops(path: list[tuple[int, int]]) -> list[tuple[tuple[int, int], int]]:
    """``path`` is ``[(source, -1), (m1, t1), (m2, t2), ...]``: m_i receives topic t_i from
    m_{i-1}. Returns ``[((giver, topic), receiver), ...]`` in path order."""
    return [((path[i - 1][0], path[i][1]), path[i][0]) for i in range(1, len(path))]


def _find_chain(
    state: _State, source: int, low_set: set[int], frozen: set[int], fresh_only: bool
) -> tuple[list[tuple[int, int]] | None, list[int]]:
    """Breadth-first search for a chain from ``source`` to a member in ``low_set``; with
    ``fresh_only`` every hop must move a partition that was given in this plan.

    Returns ``(path, reached)``: the path as ``[(source, -1), (m1, t1), ...]`` or ``None``,
    and the members reached (the closure to freeze when no path exists).
    """
    subs = state.subs
    parent: dict[int, tuple[int, int]] = {source: (-1, -1)}
    queue = deque([source])
    expanded: set[int] = set()
    # Most constrained low members first: a member with few topics has few other ways in.
    low_sorted = (
        sorted(low_set, key=lambda c: (len(subs[c]), c)) if len(low_set) <= _LOW_PRECHECK else None
    )
    while queue:
        x = queue.popleft()
        topics = [t for t in state.held_topics(x, fresh_only) if t not in expanded]
        if low_sorted is not None:
            for t in topics:
                for c in low_sorted:
                    if t in subs[c] and c not in parent:
                        parent[c] = (x, t)
                        return _path(parent, c), []
        for t in topics:
            if t in expanded:
                continue
            expanded.add(t)
            for y in state.subscribers[t]:
                if y in parent or y in frozen:
                    continue
                parent[y] = (x, t)
                if y in low_set:
                    return _path(parent, y), []
                queue.append(y)
    return None, list(parent)


def _path(parent: dict[int, tuple[int, int]], end: int) -> list[tuple[int, int]]:
    path = []
    node = end
    while node != -1:
        prev, t = parent[node]
        path.append((node, t))
        node = prev
    path.reverse()
    return path
