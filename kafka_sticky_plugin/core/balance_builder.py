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
A member that finds none, together with everything it can reach, is *frozen*; later chains
neither start in, pass through, nor end in frozen members. The loop ends when the non-frozen
members are within one of each other.

Why that gives goal 1. Write ``x -> y`` when ``x`` holds a partition of a topic ``y``
subscribes to (one move of a chain).

- Frozen members' holdings never change again (no chain touches them), so their arrows
  never change; a member frozen at level H has load H - 1 or H (H is the maximum of the
  non-frozen, and the failed search reached no one at <= H - 2), and every arrow out of
  it goes to a member frozen at the same time or earlier (the search followed every arrow
  not into a frozen member). Levels never go up, so along any chain out of a member frozen
  at H every member is frozen at a level >= H, hence has load >= H - 1.
- A non-frozen member never exceeds the current level (a chain raises only a member at
  <= H - 2), so at the end every non-frozen load is <= the last level, which is <= the level
  of every freeze.

So a chain from ``a`` (load L) to ``b`` at the end: if ``a`` is frozen at H, ``b`` is frozen
at >= H and ``load(b) >= H - 1 >= L - 1``; if ``a`` is not frozen and ``b`` is, ``b``'s
level is >= the last level >= L, so ``load(b) >= L - 1``; if neither is, both are within one
of each other. No chain lowers L while raising a member at <= L - 2.

The search (:func:`_find_chain`) is exactly that breadth-first search over members, run on
indexes so that its steps are per topic, not per member or partition: the topics each
member holds (all, or given in this plan only), every topic's subscribers as a set, and the
low members with the topics they subscribe to (:class:`_Lows`). One source's search is
then an intersection (does it hold a topic a low member subscribes to?) and, when it does
not, one set difference per expanded topic.

Members and topics are dense indices; per member the held partitions are kept per topic, split
into "kept" (validly owned before) and "fresh" (given in this plan), so that a move can take a
fresh partition first.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, bisect_right
from collections.abc import Mapping
from functools import reduce
from itertools import compress, islice, repeat
from operator import add, iadd

from .claims import TIED, UNOWNED, Claims, Indices, Planned
from .components import Component
from .layout import Layout
from .quota_builder import _few_free_block, _free_indices, _free_partitions

__all__ = ["build_balanced_plan", "initial_state", "topic_subscribers", "water_fill"]

#: With at most this many low members a chain reaching a low topic ends in the most
#: constrained low subscriber (fewest topics, then smallest index), with more in the smallest
#: low subscriber (:meth:`_Lows.taker`; the name is that of the pre-check that made the rule).
_LOW_PRECHECK = 64


class _HeldTopics(dict[int, set[int]]):
    """``{member: the topics of which it holds a partition in one of buckets}``: an entry is
    computed when first read, then kept exact by :class:`_State`'s moves, which update only
    computed entries (so a plan that needs no search never builds one)."""

    def __init__(self, *buckets: dict[int, dict[int, list[int]]]) -> None:
        super().__init__()
        self.buckets = buckets

    def __missing__(self, m: int) -> set[int]:
        topics: set[int] = set()
        for bucket in self.buckets:
            lists = bucket[m]
            topics.update(compress(lists, lists.values()))  # lists emptied by moves left out
        self[m] = topics
        return topics

    def add(self, m: int, t: int) -> None:
        topics = self.get(m)
        if topics is not None:
            topics.add(t)

    def discard(self, m: int, t: int) -> None:
        topics = self.get(m)
        if topics is not None:
            topics.discard(t)


class _KeptRuns(dict[int, dict[int, list[int]]]):
    """``{member: {topic: its kept partitions, ascending}}`` (topics ascending): an entry is
    split from the member's valid claims when first read (:meth:`.Claims.owned_by_topic`,
    else by binary search), then changed in place by :class:`_State`'s moves; a member never
    read (one the balancing does not touch) is never split."""

    def __init__(self, layout: Layout, claims: Claims) -> None:
        super().__init__()
        self.claims = claims
        self.offsets = layout.offsets
        self.ends = list(map(add, layout.offsets, layout.counts))

    def __missing__(self, m: int) -> dict[int, list[int]]:
        qs = self.claims.owned[m]
        runs = self.claims.owned_by_topic(m) if qs else {}
        if runs is None:
            runs = _runs_by_topic(qs, self.offsets, self.ends)
        self[m] = runs
        return runs


class _SubscriberSets(dict[int, set[int]]):
    """``{topic: its subscribers as a set}``, each built when first read."""

    def __init__(self, subscribers: dict[int, list[int]]) -> None:
        super().__init__()
        self.subscribers = subscribers

    def __missing__(self, t: int) -> set[int]:
        members = self[t] = set(self.subscribers[t])
        return members


class _State:
    """Mutable holdings of one component; see the module docstring.

    Besides the held partitions (``kept`` / ``fresh``, per member and topic, ``subscribers``
    per topic ascending) it keeps the indexes the chain search reads: ``held_fresh[m]`` /
    ``held_any[m]``, the topics of which ``m`` holds a fresh partition / any partition
    (exactly the topics with a non-empty list), ``subscriber_sets[t]`` (``subscribers[t]``
    as a set) and ``displaced_to``, every member that was given a partition validly owned by
    another member. It starts empty, or with ``holding_claims`` holding every valid claim
    with its owner (``kept`` then splits a member's claims when first read). ``subscribers``
    may be given (:func:`topic_subscribers` of ``comp``, only read, so the caller can share
    it).
    """

    def __init__(
        self,
        layout: Layout,
        claims: Claims,
        comp: Component,
        holding_claims: bool = False,
        subscribers: dict[int, list[int]] | None = None,
    ) -> None:
        self.layout = layout
        self.owner = claims.owner
        self.hints = claims.hints
        self.subs = layout.subscriptions
        self.load: dict[int, int] = {m: 0 for m in comp.members}
        self.kept: dict[int, dict[int, list[int]]] = {m: {} for m in comp.members}
        if holding_claims:
            owned = claims.owned
            self.load = {m: len(owned[m]) for m in comp.members}
            self.kept = _KeptRuns(layout, claims)
        self.fresh: dict[int, dict[int, list[int]]] = {m: {} for m in comp.members}
        if subscribers is None:
            subscribers = topic_subscribers(self.subs, comp)
        self.subscribers = subscribers
        self.subscriber_sets = _SubscriberSets(self.subscribers)
        self.held_fresh = _HeldTopics(self.fresh)
        self.held_any = _HeldTopics(self.kept, self.fresh)
        self.displaced_to: set[int] = set()

    def give(self, m: int, t: int, q: int) -> None:
        o = self.owner[q]
        if o == m:
            self.kept[m].setdefault(t, []).append(q)
        else:
            self.fresh[m].setdefault(t, []).append(q)
            self.held_fresh.add(m, t)
            if o >= 0:
                self.displaced_to.add(m)
        self.held_any.add(m, t)
        self.load[m] += 1

    def take(self, m: int, t: int, receiver: int) -> int:
        """Remove one partition of topic ``t`` from ``m``: a fresh one first, else the kept
        one whose previous-owner hint is the receiver, else the highest kept one."""
        fresh = self.fresh[m].get(t)
        if fresh:
            q = fresh.pop()
            if not fresh:
                self._forget_fresh(m, t)
        else:
            kept = self.kept[m][t]
            q = kept[-1]
            for i in range(len(kept) - 1, -1, -1):
                if self.hints.get(kept[i]) == receiver:
                    q = kept[i]
                    break
            kept.remove(q)
            if not kept:
                self.held_any.discard(m, t)
        self.load[m] -= 1
        return q

    def withdraw(self, m: int, t: int, q: int) -> None:
        """Remove the fresh partition ``q`` of topic ``t`` from ``m``."""
        fresh = self.fresh[m][t]
        fresh.remove(q)
        if not fresh:
            self._forget_fresh(m, t)
        self.load[m] -= 1

    def _forget_fresh(self, m: int, t: int) -> None:
        """``m``'s fresh list of ``t`` has just become empty."""
        self.held_fresh.discard(m, t)
        if not self.kept[m].get(t):
            self.held_any.discard(m, t)


def topic_subscribers(subs: list[frozenset[int]], comp: Component) -> dict[int, list[int]]:
    """``{topic: its subscribers, ascending}``: one extend per subscription class and topic
    when members share classes, else one append per member and topic."""
    subscribers: dict[int, list[int]] = {t: [] for t in comp.topics}
    members = comp.members
    if 2 * len(set(map(id, map(subs.__getitem__, members)))) > len(members):
        for m in members:
            for t in subs[m]:
                subscribers[t].append(m)
        return subscribers
    by_class: dict[frozenset[int], list[int]] = {}
    for m in members:
        by_class.setdefault(subs[m], []).append(m)
    for cls, ms in by_class.items():
        for t in cls:
            subscribers[t] += ms
    for ms in subscribers.values():
        ms.sort()
    return subscribers


def build_balanced_plan(
    layout: Layout,
    claims: Claims,
    comp: Component,
    subscribers: dict[int, list[int]] | None = None,
) -> Mapping[int, Planned]:
    """Return ``{member index: [global partition index, ...]}`` for any component;
    ``subscribers``: :func:`topic_subscribers` of ``comp`` when the caller has it. (The
    compiled twin carries this step inside :func:`.api.plan_component`.)"""
    state = initial_state(layout, claims, comp, subscribers)
    _balance(state, comp)
    _restore_owners(state, comp)

    plan: dict[int, Planned] = {}
    for m in comp.members:
        fresh, owned = state.fresh[m], claims.owned[m]
        if state.load[m] == len(owned) and not any(fresh.values()):
            # it holds kept partitions only, as many as it claimed: exactly its claims (the
            # claims' own list: plans are only read)
            plan[m] = owned
            continue
        qs: list[int] = []  # extended in place, list by list (in C)
        qs = reduce(iadd, fresh.values(), reduce(iadd, state.kept[m].values(), qs))
        qs.sort()
        plan[m] = qs
    return plan


def initial_state(
    layout: Layout,
    claims: Claims,
    comp: Component,
    subscribers: dict[int, list[int]] | None = None,
) -> _State:
    """The holdings before balancing: every valid claim with its owner, then each free
    partition (most constrained topics first, ascending within a topic) to the least loaded
    subscriber, the smallest index on equal loads, except that a hinted previous claimant at
    that least load wins (the one-step rule, kept as the reference in
    ``tests/test_engine_bulk_plans.py``).

    Bulk: claims enter per (member, topic) run when a member is first read
    (:class:`_KeptRuns`), and a topic whose free partitions carry no hint is dealt by
    :func:`water_fill`; only hinted topics take a heap step per partition.
    """
    state = _State(layout, claims, comp, holding_claims=True, subscribers=subscribers)
    owner = claims.owner

    # Every validly owned partition starts with its owner (``state.kept``, split per topic
    # when first read). A member's valid claims lie in its subscribed topics, all in the
    # component: when they number the component's partitions, none is free.
    claimed = sum(map(len, map(claims.owned.__getitem__, comp.members)))
    total = sum(map(layout.counts.__getitem__, comp.topics))
    if claimed == total:
        return state

    # Free partitions, most constrained topics first, each to the least loaded subscriber
    # (the previous owner named by a hint wins ties).
    hints = claims.hints
    free_of = _free_per_topic(layout, owner, comp.topics, total - claimed)
    order = sorted(free_of, key=lambda t: (len(state.subscribers[t]), t))
    for t in order:
        free = free_of[t]
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


def _free_per_topic(
    layout: Layout, owner: list[int], topics: list[int], n_free: int
) -> dict[int, list[int]]:
    """``{topic: its free (unowned or tied) partitions, ascending}`` for the topics of
    ``topics`` with any (``n_free`` in all, positive). A few free partitions of adjacent
    topics are found by ``list.index`` over their block (:func:`.quota_builder._free_partitions`)
    and put under their topics; otherwise each topic's owners are checked in one C pass
    (``min``) and a topic with free ones is counted and scanned."""
    if _few_free_block(layout, topics, n_free) is not None:
        found = sorted(_free_partitions(layout, owner, topics, n_free))
        free_of: dict[int, list[int]] = {}
        for q in found:
            free_of.setdefault(layout.topic_of(q), []).append(q)
        return free_of
    offsets, counts = layout.offsets, layout.counts
    free_of = {}
    for t in topics:
        start = offsets[t]
        window = owner[start : start + counts[t]]
        if not window or min(window) >= 0:  # one C pass: every partition validly owned
            continue
        n = window.count(UNOWNED) + window.count(TIED)
        free_of[t] = (
            list(range(start, start + counts[t]))
            if n == len(window)
            else _free_indices(window, start, n)
        )
    return free_of


def _runs_by_topic(qs: Indices, offsets: list[int], ends: list[int]) -> dict[int, list[int]]:
    """``{topic: its partitions in qs}`` for ascending global indices ``qs``, topics
    ascending: two binary searches and a slice per topic, not a step per partition (the
    topic is :meth:`.Layout.topic_of`'s, without its flat table's memory)."""
    runs: dict[int, list[int]] = {}
    i, n = 0, len(qs)
    while i < n:
        t = bisect_right(offsets, qs[i]) - 1
        j = bisect_left(qs, ends[t], i)
        runs[t] = qs[i:j].tolist()
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
    every ``n``-th partition of the next ``n * k``. No heap step per partition: for
    ``k >= _SLICE_FROM`` one slice per member; a shorter run (typically one level, one
    partition per member) only extends the list of pick owners, and the pending picks are
    appended to their owners' lists in one C-level pass (:func:`_append_picks`).
    """
    got: dict[int, list[int]] = {m: [] for m in takers}
    by_load = sorted(takers, key=load.__getitem__)  # stable: equal loads stay by index
    levels = list(map(load.__getitem__, by_load))
    eligible: list[int] = []
    owners: list[int] = []  # owners of free[start:pos], not yet appended
    k, start, pos, i, n_takers = len(free), 0, 0, 0, len(by_load)
    while pos < k:
        level = levels[i]
        j = bisect_right(levels, level, i)
        eligible.extend(by_load[i:j])
        eligible.sort()
        i = j
        n = len(eligible)
        stop = k if i == n_takers else min(k, pos + n * (levels[i] - level))
        rounds = -(-(stop - pos) // n)
        if rounds < _SLICE_FROM:
            owners += eligible * rounds  # past ``stop`` only in the last run: ignored
        else:
            _append_picks(got, owners, free[start:pos])
            owners = []
            for m, first in zip(eligible, range(pos, stop), strict=False):
                got[m] += free[first:stop:n]
            start = stop
        pos = stop
    _append_picks(got, owners, free[start:])
    return dict(compress(got.items(), got.values()))


#: :func:`water_fill` cuts one slice per member from this many levels with the same members on.
_SLICE_FROM = 8


def _append_picks(got: dict[int, list[int]], owners: list[int], picks: list[int]) -> None:
    """Append ``picks[i]`` to ``got[owners[i]]`` for every ``i < len(picks)``, in order, in
    C (``owners`` may be longer)."""
    any(map(list.append, map(got.__getitem__, owners), picks))  # append returns None


def _balance(state: _State, comp: Component) -> None:
    """Level by level (see the module docstring): every member at the current maximum load
    looks for a chain to a low member, fresh partitions only first, then any."""
    frozen: set[int] = set()
    load = state.load
    lows: _Lows | None = None
    while True:
        active = [m for m in comp.members if m not in frozen]
        if not active:
            return
        high = max(load[m] for m in active)
        low_set = {m for m in active if load[m] <= high - 2}
        if not low_set:
            return
        lows = _Lows(state.subs, low_set) if lows is None else lows.narrowed(low_set)
        for source in [m for m in active if load[m] == high]:
            if source in frozen or load[source] != high:
                continue
            if not lows.members:
                break
            # A chain that only moves partitions given in this plan costs no stickiness: try
            # it first; only a failed unrestricted search proves the source is stuck. Most
            # chains are one move, found by the search's first step: made here directly.
            t, target = lows.first_hit(state.held_fresh[source], state.subscribers)
            if target >= 0:
                state.give(target, t, state.take(source, t, target))
                if load[target] > high - 2:
                    lows.discard(target)
                continue
            path, _ = _find_chain(state, source, lows, frozen, fresh_only=True)
            reached: list[int] = []
            if path is None:
                path, reached = _find_chain(state, source, lows, frozen, fresh_only=False)
            if path is None:
                frozen.update(reached)
                continue
            _run(state, path)
            target = path[-1][0]
            if load[target] > high - 2:
                lows.discard(target)


def _restore_owners(state: _State, comp: Component) -> None:
    """Stickiness repair at equal loads.

    For a partition ``q`` that its valid owner ``o`` lost to ``x``, look for a chain from ``o``
    to ``x`` that moves only partitions given in this plan; if one exists, run it and hand
    ``q`` back to ``o``. Loads do not change (so load optimality is kept) and the number of
    partitions that stay with their owner grows by at least one per repair, so this ends.
    Only members in ``displaced_to`` can hold such a ``q``; they are visited in member order.
    """
    owner = state.owner
    owner_at = owner.__getitem__
    displaced = [
        (x, t, q)
        for x in sorted(state.displaced_to)
        for t, qs in state.fresh[x].items()
        if qs and max(map(owner_at, qs)) >= 0  # most fresh lists hold free partitions only
        for q in qs
        if owner[q] >= 0
    ]
    for x, t, q in displaced:
        o = owner[q]
        if q not in state.fresh[x].get(t, ()) or not state.fresh[o]:
            continue
        path, _ = _find_chain(state, o, _Lows(state.subs, {x}), set(), fresh_only=True)
        if path is None:
            continue
        _run(state, path)
        state.withdraw(x, t, q)
        state.give(o, t, q)


def _run(state: _State, path: list[tuple[int, int]]) -> None:
    """Move one partition along each hop of ``path`` (``[(source, -1), (m1, t1), ...]``: m_i
    receives a partition of topic t_i from m_{i-1})."""
    for i in range(1, len(path)):
        giver, (receiver, t) = path[i - 1][0], path[i]
        state.give(receiver, t, state.take(giver, t, receiver))


class _Lows:
    """The members a chain may end in (``members``: never frozen, never reached by a search
    before it ends) and ``topics``, a superset of the topics at least one of them
    subscribes to: a topic stays when its last low subscriber leaves and is dropped when a
    search first meets it (:meth:`first_hit`), so that a member leaving costs one step."""

    def __init__(self, subs: list[frozenset[int]], members: set[int]) -> None:
        self.subs = subs
        self.members = set(members)
        self.topics: set[int] = set().union(*set(map(subs.__getitem__, members)))
        self._constrained: list[int] | None = None
        self._scan_from: dict[int, int] = {}

    def narrowed(self, members: set[int]) -> _Lows:
        """These lows restricted to ``members`` (a new index if ``members`` adds any)."""
        if not members <= self.members:
            return _Lows(self.subs, members)
        for m in self.members - members:
            self.discard(m)
        return self

    def discard(self, m: int) -> None:
        if m in self.members:
            self.members.discard(m)
            if self._constrained is not None:
                self._constrained.remove(m)

    def first_hit(self, topics: set[int], subscribers: dict[int, list[int]]) -> tuple[int, int]:
        """``(t, y)``: the smallest of ``topics`` that a low member subscribes to and the low
        member a chain reaching it ends in (:meth:`taker`); ``(-1, -1)`` if there is none."""
        if topics and self.topics.issuperset(topics):  # low members subscribe to them all
            t = min(topics)
            y = self.taker(t, subscribers[t])
            if y >= 0:
                return t, y
        hits = topics & self.topics
        while hits:
            t = min(hits)
            y = self.taker(t, subscribers[t])
            if y >= 0:
                return t, y
            self.topics.discard(t)
            hits.discard(t)
        return -1, -1

    def taker(self, t: int, subscribers: list[int]) -> int:
        """The low member a chain that reaches topic ``t`` ends in, -1 if none subscribes to
        it: with few low members the most constrained one (fewest topics, then smallest
        index), else the first low one of ``subscribers`` (ascending). Both scans run in C;
        the second starts where the last one for ``t`` found its member, since members only
        leave."""
        members = self.members
        if len(members) > _LOW_PRECHECK:
            start = self._scan_from.get(t, 0)
            y = next(filter(members.__contains__, islice(subscribers, start, None)), -1)
            if y >= 0:
                self._scan_from[t] = subscribers.index(y, start)
            return y
        subs = self.subs
        if self._constrained is None:
            self._constrained = sorted(members, key=lambda c: (len(subs[c]), c))
        order = self._constrained
        takes_t = map(frozenset.__contains__, map(subs.__getitem__, order), repeat(t))
        return next(compress(order, takes_t), -1)


#: One expansion of a breadth-first search: ``(member, topic, members it reached first)``.
_Batch = tuple[int, int, set[int] | list[int]]


def _find_chain(
    state: _State, source: int, lows: _Lows, frozen: set[int], fresh_only: bool
) -> tuple[list[tuple[int, int]] | None, list[int]]:
    """Breadth-first search for a chain from ``source`` to a member of ``lows``; with
    ``fresh_only`` every hop must move a partition that was given in this plan.

    Returns ``(path, reached)``: the path as ``[(source, -1), (m1, t1), ...]`` or ``None``,
    and the members reached (the closure to freeze when no path exists).

    The search visits members in queue order, each *expanding* the topics it holds that no
    earlier member expanded (ascending); expanding ``t`` queues the subscribers of ``t`` not
    yet reached nor frozen (ascending). It ends at the first expansion of a topic in
    ``lows.topics``, with :meth:`_Lows.taker`. Each step is a set operation, and lazy: an
    expansion only notes ``(member, topic)``; whom it reached (one set difference, then a
    sort) is computed when the search gets to visit them, which gives the same sets since
    expansions are visited in the order they were made. Whether a member holds a low topic
    is one intersection; members holding nothing are skipped in C.
    """
    held = state.held_fresh if fresh_only else state.held_any
    subscriber_sets = state.subscriber_sets
    seen = {source}
    expanded: set[int] = set()
    levels: list[list[_Batch]] = []
    expansions = [(-1, -1)]
    while expansions:
        level: list[_Batch] = []
        levels.append(level)
        following: list[tuple[int, int]] = []
        for parent, via in expansions:
            if parent < 0:
                batch: set[int] | list[int] = [source]
            else:
                batch = subscriber_sets[via] - seen
                if frozen and batch:
                    batch -= frozen
                if not batch:
                    continue
                seen |= batch
            level.append((parent, via, batch))
            members = sorted(batch)
            for x in compress(members, map(held.__getitem__, members)):
                topics = held[x] - expanded
                if not topics:
                    continue
                t, y = lows.first_hit(topics, state.subscribers)
                if y >= 0:
                    return _path(levels, x, (y, t)), []
                following.extend(zip(repeat(x), sorted(topics)))
                expanded |= topics
        expansions = following
    return None, list(seen)


def _path(levels: list[list[_Batch]], x: int, last: tuple[int, int]) -> list[tuple[int, int]]:
    """The chain from the source (``levels[0]``) to member ``x`` of the deepest level, then
    ``last``; each member's parent is the member whose expansion reached it (every level
    but the deepest complete)."""
    path = [last]
    for level in reversed(levels[1:]):
        parent, t, _ = next(b for b in level if x in b[2])
        path.append((x, t))
        x = parent
    path.append((x, -1))
    path.reverse()
    return path
