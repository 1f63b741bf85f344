"""The balancing builder's indexed chain search against the member-by-member reference.

:func:`~kafka_sticky_plugin.core.balance_builder._find_chain` looks for chains over topics
with set operations and per-topic indexes (low members per topic, held topics per member);
the plan must equal, bit for bit (every member's kept and fresh lists, their order and the
dicts' order), what the previous breadth-first search over members gives. That search is
kept here as the reference (``_Reference``), on seeded random groups (the seed is printed)
that reach every branch: few and many (> ``_LOW_PRECHECK``) low members, frozen members,
chains through kept partitions, stickiness repairs, hinted and tied claims.
"""

from __future__ import annotations

import random
from collections import deque
from itertools import chain

import pytest

from kafka_sticky_plugin.core.balance_builder import (
    _LOW_PRECHECK,
    _balance,
    _find_chain,
    _Lows,
    _restore_owners,
    _State,
    build_balanced_plan,
    initial_state,
)
from kafka_sticky_plugin.core.claims import resolve_claims
from kafka_sticky_plugin.core.components import Component, split_components
from kafka_sticky_plugin.core.layout import build_layout
from kafka_sticky_plugin.core.spec import MemberSpec

SEEDS = range(300)

Path = list[tuple[int, int]]


class _Reference:
    """The balancing as it was before the indexed search: one breadth-first search over
    members per chain, a held-topic set built per visited member; moves on ``state``'s
    kept / fresh / load only."""

    def __init__(self, state: _State, comp: Component) -> None:
        self.state = state
        self.comp = comp

    def held_topics(self, m: int, fresh_only: bool) -> list[int]:
        topics = {t for t, qs in self.state.fresh[m].items() if qs}
        if not fresh_only:
            topics.update(t for t, qs in self.state.kept[m].items() if qs)
        return sorted(topics)

    def give(self, m: int, t: int, q: int) -> None:
        state = self.state
        bucket = state.kept if state.owner[q] == m else state.fresh
        bucket[m].setdefault(t, []).append(q)
        state.load[m] += 1

    def take(self, m: int, t: int, receiver: int) -> int:
        state = self.state
        fresh = state.fresh[m].get(t)
        if fresh:
            q = fresh.pop()
        else:
            kept = state.kept[m][t]
            q = kept[-1]
            for i in range(len(kept) - 1, -1, -1):
                if state.hints.get(kept[i]) == receiver:
                    q = kept[i]
                    break
            kept.remove(q)
        state.load[m] -= 1
        return q

    def run(self, path: Path) -> None:
        for i in range(1, len(path)):
            giver, (receiver, t) = path[i - 1][0], path[i]
            self.give(receiver, t, self.take(giver, t, receiver))

    def balance(self) -> None:
        frozen: set[int] = set()
        load = self.state.load
        while True:
            active = [m for m in self.comp.members if m not in frozen]
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
                path, _ = self.find_chain(source, low_set, frozen, fresh_only=True)
                reached: list[int] = []
                if path is None:
                    path, reached = self.find_chain(source, low_set, frozen, fresh_only=False)
                if path is None:
                    frozen.update(reached)
                    continue
                self.run(path)
                if load[path[-1][0]] > high - 2:
                    low_set.discard(path[-1][0])

    def restore_owners(self) -> None:
        state = self.state
        owner = state.owner
        displaced = [
            (x, t, q)
            for x in self.comp.members
            for t, qs in state.fresh[x].items()
            for q in qs
            if owner[q] >= 0
        ]
        for x, t, q in displaced:
            o = owner[q]
            if q not in state.fresh[x].get(t, ()) or not state.fresh[o]:
                continue
            path, _ = self.find_chain(o, {x}, set(), fresh_only=True)
            if path is None:
                continue
            self.run(path)
            state.fresh[x][t].remove(q)
            state.load[x] -= 1
            self.give(o, t, q)

    def find_chain(
        self, source: int, low_set: set[int], frozen: set[int], fresh_only: bool
    ) -> tuple[Path | None, list[int]]:
        subs = self.state.subs
        parent: dict[int, tuple[int, int]] = {source: (-1, -1)}
        queue = deque([source])
        expanded: set[int] = set()
        low_sorted = (
            sorted(low_set, key=lambda c: (len(subs[c]), c))
            if len(low_set) <= _LOW_PRECHECK
            else None
        )
        while queue:
            x = queue.popleft()
            topics = [t for t in self.held_topics(x, fresh_only) if t not in expanded]
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
                for y in self.state.subscribers[t]:
                    if y in parent or y in frozen:
                        continue
                    parent[y] = (x, t)
                    if y in low_set:
                        return _path(parent, y), []
                    queue.append(y)
        return None, list(parent)


def _path(parent: dict[int, tuple[int, int]], end: int) -> Path:
    path = []
    node = end
    while node != -1:
        prev, t = parent[node]
        path.append((node, t))
        node = prev
    path.reverse()
    return path


def _holdings(state: _State, comp: Component) -> list[object]:
    return [
        (m, state.load[m], list(state.kept[m].items()), list(state.fresh[m].items()))
        for m in comp.members
    ]


def _random_group(rng: random.Random) -> tuple[dict[str, int], list[MemberSpec]]:
    """Different subscriptions (a few shared classes or each its own), up to 160 members so
    that more than ``_LOW_PRECHECK`` can be low at once; claims from a random previous plan
    (some members gone, some new, some partitions lost) plus contested and invalid ones."""
    n_topics = rng.randint(1, 10)
    counts = {f"t{i:02d}": rng.choice([0, 1, 2, 3, 5, 8, 13, 40, 90]) for i in range(n_topics)}
    names = list(counts)
    n_members = rng.choice([rng.randint(1, 12), rng.randint(10, 60), rng.randint(60, 160)])
    classes = [rng.sample(names, rng.randint(1, n_topics)) for _ in range(rng.randint(1, 8))]
    shared = rng.random() < 0.6
    subs = [
        rng.choice(classes) if shared else rng.sample(names, rng.randint(1, n_topics))
        for _ in range(n_members)
    ]
    owned: list[set[tuple[str, int]]] = [set() for _ in range(n_members)]
    previous = rng.random()
    for t, c in counts.items():
        holders = [i for i in range(n_members) if t in subs[i]]
        for p in range(c):
            if holders and rng.random() < previous:
                owned[rng.choice(holders)].add((t, p))
    for i in range(n_members):
        if rng.random() < 0.15:
            owned[i] = set()  # a new member
        elif rng.random() < 0.1:
            owned[i].add((rng.choice([*names, "gone"]), rng.randint(-1, 95)))
    members = []
    for i in range(n_members):
        generation = rng.choice([1, 2, 2, 3]) if owned[i] else -1
        members.append(
            MemberSpec(member_id=f"m{i:03d}", topics=subs[i], owned=owned[i], generation=generation)
        )
    if rng.random() < 0.3 and n_members > 1:
        # a contested copy: the same claims at the same or another generation
        twin = members[0]
        members.append(
            MemberSpec(
                member_id="z-twin",
                topics=twin.topics,
                owned=twin.owned,
                generation=rng.choice([twin.generation, twin.generation + 1]),
            )
        )
    return counts, members


@pytest.mark.parametrize("seed", SEEDS)
def test_indexed_chains_equal_the_member_search(seed: int) -> None:
    print(f"seed={seed}")
    counts, members = _random_group(random.Random(seed))
    layout = build_layout(counts, members)
    claims = resolve_claims(layout)
    for comp in split_components(layout):
        if comp.homogeneous:
            continue
        got = initial_state(layout, claims, comp)
        want = initial_state(layout, claims, comp)
        subs = layout.subscriptions
        assert got.subscribers == {
            t: [m for m in comp.members if t in subs[m]] for t in comp.topics
        }
        reference = _Reference(want, comp)
        _balance(got, comp)
        reference.balance()
        assert _holdings(got, comp) == _holdings(want, comp)
        _restore_owners(got, comp)
        reference.restore_owners()
        assert _holdings(got, comp) == _holdings(want, comp)
        plan = build_balanced_plan(layout, claims, comp)
        for m in comp.members:
            qs = sorted(chain(*want.kept[m].values(), *want.fresh[m].values()))
            assert list(plan[m]) == qs


@pytest.mark.parametrize("seed", SEEDS)
def test_one_search_equals_the_member_search(seed: int) -> None:
    """One search from every member to random low members past random frozen ones: the
    same chain, or on failure the same closure (what gets frozen)."""
    print(f"seed={seed}")
    rng = random.Random(seed)
    counts, members = _random_group(rng)
    layout = build_layout(counts, members)
    claims = resolve_claims(layout)
    for comp in split_components(layout):
        if comp.homogeneous:
            continue
        state = initial_state(layout, claims, comp)
        reference = _Reference(initial_state(layout, claims, comp), comp)
        for source in comp.members:
            others = [m for m in comp.members if m != source]
            low = set(rng.sample(others, rng.randint(1, len(others)))) if others else set()
            rest = [m for m in others if m not in low]
            frozen = set(rng.sample(rest, rng.randint(0, len(rest))))
            for fresh_only in (True, False):
                lows = _Lows(layout.subscriptions, low)
                path, reached = _find_chain(state, source, lows, frozen, fresh_only)
                want, want_reached = reference.find_chain(source, low, frozen, fresh_only)
                assert path == want
                assert sorted(reached) == sorted(want_reached)


def test_random_groups_reach_every_branch() -> None:
    """The seeds above reach many low members, frozen members, chains through kept partitions
    and repairs: counted on the reference, so that a generator change cannot quietly drop a
    branch."""
    seen = {"many low": 0, "frozen": 0, "kept hop": 0, "repair": 0}
    for seed in SEEDS:
        counts, members = _random_group(random.Random(seed))
        layout = build_layout(counts, members)
        claims = resolve_claims(layout)
        for comp in split_components(layout):
            if comp.homogeneous:
                continue
            calls: list[tuple[bool, bool, int]] = []
            reference = _Spy(initial_state(layout, claims, comp), comp, calls)
            reference.balance()
            seen["many low"] += any(n > _LOW_PRECHECK for _, _, n in calls)
            seen["frozen"] += any(not fresh and not found for fresh, found, _ in calls)
            seen["kept hop"] += any(not fresh and found for fresh, found, _ in calls)
            del calls[:]
            reference.restore_owners()
            seen["repair"] += any(found for _, found, _ in calls)
    print(seen)
    assert min(seen.values()) >= 10


class _Spy(_Reference):
    """The reference, recording ``(fresh_only, found, low members)`` per search."""

    def __init__(self, state: _State, comp: Component, calls: list[tuple[bool, bool, int]]):
        super().__init__(state, comp)
        self.calls = calls

    def find_chain(
        self, source: int, low_set: set[int], frozen: set[int], fresh_only: bool
    ) -> tuple[Path | None, list[int]]:
        path, reached = super().find_chain(source, low_set, frozen, fresh_only)
        self.calls.append((fresh_only, path is not None, len(low_set)))
        return path, reached
