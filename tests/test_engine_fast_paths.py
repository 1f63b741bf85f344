"""The engine's bulk (C-level) fast paths against plain one-step-at-a-time references.

Claims resolution, the pool scan, the round-robin deal and the choice of drops take bulk
shortcuts for speed (a million partitions); each must give exactly what the plain rule
gives, on seeded random inputs that include every kind of invalid and contested claim.
"""

from __future__ import annotations

import random

import pytest

from kafka_sticky_plugin.core.claims import TIED, UNOWNED, Planned, resolve_claims
from kafka_sticky_plugin.core.components import split_components
from kafka_sticky_plugin.core.layout import build_layout
from kafka_sticky_plugin.core.quota_builder import (
    _choose_drops,
    _deal_round_robin,
    _free_indices,
    build_quota_plan,
    fresh_quota_ranges,
)
from kafka_sticky_plugin.core.spec import MemberSpec

SEEDS = range(40)


def _reference_owner(layout: object) -> tuple[list[int], dict[int, int]]:
    """The claims policy one claim at a time (claims.py's module docstring)."""
    from kafka_sticky_plugin.core.layout import Layout

    assert isinstance(layout, Layout)
    owner = [UNOWNED] * layout.total
    gens = [s.generation for s in layout.specs]
    at_tie: dict[int, list[int]] = {}
    losers: dict[int, tuple[int, int]] = {}

    def lose(q: int, m: int) -> None:
        best = losers.get(q)
        if best is None or gens[m] > best[0] or (gens[m] == best[0] and m < best[1]):
            losers[q] = (gens[m], m)

    for m, spec in enumerate(layout.specs):
        for topic, p in spec.owned:
            t = layout.topic_index.get(topic)
            if t is None or t not in layout.subscriptions[m] or not 0 <= p < layout.counts[t]:
                continue
            q = layout.offsets[t] + p
            cur = owner[q]
            if cur == UNOWNED:
                owner[q] = m
            elif cur == TIED:
                tied = at_tie[q]
                if gens[m] > gens[tied[0]]:
                    owner[q] = m
                    for loser in at_tie.pop(q):
                        lose(q, loser)
                elif gens[m] == gens[tied[0]]:
                    tied.append(m)
                else:
                    lose(q, m)
            elif gens[m] > gens[cur]:
                lose(q, cur)
                owner[q] = m
            elif gens[m] == gens[cur]:
                owner[q] = TIED
                at_tie[q] = [cur, m]
            else:
                lose(q, m)
    return owner, {q: m for q, (_, m) in losers.items() if owner[q] != m}


def _random_members(rng: random.Random) -> tuple[dict[str, int], list[MemberSpec]]:
    counts = {f"t{i}": rng.randint(0, 6) for i in range(rng.randint(1, 5))}
    names = [*counts, "gone"]
    members = []
    for i in range(rng.randint(1, 7)):
        topics = rng.sample(names, rng.randint(0, len(names)))
        owned = {(rng.choice(names), rng.randint(-1, 7)) for _ in range(rng.randint(0, 12))}
        members.append(
            MemberSpec(
                member_id=f"m{i}",
                topics=topics,
                owned=sorted(owned),
                generation=rng.choice([-1, 1, 2, 2, 3]),
            )
        )
    return counts, members


@pytest.mark.parametrize("seed", SEEDS)
def test_claims_match_the_one_claim_at_a_time_policy(seed: int) -> None:
    print(f"seed={seed}")
    counts, members = _random_members(random.Random(seed))
    layout = build_layout(counts, members)
    claims = resolve_claims(layout)
    owner, hints = _reference_owner(layout)
    assert claims.owner == owner
    assert claims.hints == hints
    assert [qs.tolist() for qs in claims.owned] == [
        [q for q, o in enumerate(owner) if o == m] for m in range(len(layout.specs))
    ]


@pytest.mark.parametrize("seed", SEEDS)
def test_free_indices_are_the_unowned_and_tied_ones(seed: int) -> None:
    print(f"seed={seed}")
    rng = random.Random(seed)
    held = [rng.choice([UNOWNED, TIED, *([0, 1, 2] * rng.randint(0, 30))]) for _ in range(200)]
    free = held.count(UNOWNED) + held.count(TIED)
    expected = [500 + i for i, o in enumerate(held) if o < 0]
    assert _free_indices(held, 500, free) == expected


@pytest.mark.parametrize("seed", SEEDS)
def test_slice_deal_equals_the_round_by_round_deal(seed: int) -> None:
    print(f"seed={seed}")
    rng = random.Random(seed)
    members = sorted(rng.sample(range(50), rng.randint(1, 20)))
    deficit = {m: rng.choice([0, 1, 3, 3, 4, 9]) for m in members}
    pool = sorted(rng.sample(range(10_000), sum(deficit.values())))
    got: dict[int, Planned] = {m: [] for m in members}
    _deal_round_robin(pool, members, deficit, got)
    want: dict[int, list[int]] = {m: [] for m in members}
    i, r = 0, 0
    while any(deficit[m] > r for m in members):
        for m in members:
            if deficit[m] > r:
                want[m].append(pool[i])
                i += 1
        r += 1
    assert got == want


@pytest.mark.parametrize("seed", SEEDS)
def test_drops_come_from_the_fullest_topics_highest_partitions_first(seed: int) -> None:
    print(f"seed={seed}")
    rng = random.Random(seed)
    counts = {f"t{i}": rng.randint(1, 8) for i in range(rng.randint(1, 6))}
    layout = build_layout(counts, [MemberSpec(member_id="m", topics=list(counts))])
    mine = sorted(rng.sample(range(layout.total), rng.randint(1, layout.total)))
    excess = rng.randint(1, len(mine))
    history = {t: rng.randint(0, 2) for t in range(len(counts))}
    got = _choose_drops(layout, mine, excess, dict(history))
    # reference: repeatedly take the highest partition of the topic held most of, ties to the
    # topic given up least often so far, then the lowest topic index
    left = {t: [q for q in mine if layout.topic_of(q) == t] for t in range(len(counts))}
    given = dict(history)
    want = set()
    for _ in range(excess):
        t = min((t for t in left if left[t]), key=lambda t: (-len(left[t]), given[t], t))
        want.add(left[t].pop())
        given[t] += 1
    assert got == want


@pytest.mark.parametrize("seed", SEEDS)
def test_fresh_ranges_equal_the_quota_plan(seed: int) -> None:
    """A fresh equal-subscription component planned as ranges gets exactly the quota plan;
    anything not fresh (a kept claim, a tie) or not contiguous is left to the quota builder."""
    print(f"seed={seed}")
    rng = random.Random(seed)
    counts = {f"t{i}": rng.randint(0, 9) for i in range(rng.randint(1, 6))}
    topics = sorted(rng.sample(sorted(counts), rng.randint(1, len(counts))))
    owners = rng.choice(["fresh", "fresh", "claimed", "tied"])
    members = []
    for i in range(rng.randint(1, 12)):
        owned = []
        if owners != "fresh" and i < 2 and counts[topics[0]]:
            owned = [(topics[0], 0)]
        members.append(MemberSpec(member_id=f"m{i:02d}", topics=topics, owned=owned, generation=1))
    if owners == "claimed":
        members[-1] = MemberSpec(member_id=members[-1].member_id, topics=topics, generation=2)
    layout = build_layout(counts, members)
    claims = resolve_claims(layout)
    for comp in split_components(layout):
        ranges = fresh_quota_ranges(layout, claims, comp)
        fresh = all(o == UNOWNED for o in claims.owner)
        assert (ranges is not None) == fresh, (owners, claims.owner)
        if ranges is not None:
            quota = build_quota_plan(layout, claims, comp)
            assert {m: list(r) for m, r in ranges.items()} == {
                m: sorted(qs) for m, qs in quota.items()
            }


def test_fresh_ranges_need_adjacent_topics() -> None:
    """Two components whose topics interleave in name order are not contiguous blocks."""
    members = [
        MemberSpec(member_id="a", topics=["t1", "t3"]),
        MemberSpec(member_id="b", topics=["t2"]),
    ]
    layout = build_layout({"t1": 2, "t2": 2, "t3": 2}, members)
    claims = resolve_claims(layout)
    by_first = {c.topics[0]: c for c in split_components(layout)}
    assert fresh_quota_ranges(layout, claims, by_first[0]) is None
    assert fresh_quota_ranges(layout, claims, by_first[1]) == {1: range(2, 4, 1)}
