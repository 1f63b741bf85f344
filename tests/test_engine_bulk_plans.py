"""The different-subscription path's bulk steps against their one-step references.

The balancing builder's initial holdings (claims per run, free partitions dealt by
:func:`~kafka_sticky_plugin.core.balance_builder.water_fill`) and the stickiness flow's
class counts are built with bulk operations over dense indices; each must equal, bit for
bit (lists, dict contents and dict order), what the one-step rule gives, on seeded random
groups that include invalid, contested and tied claims (the seed is printed).
"""

from __future__ import annotations

import heapq
import random

import pytest

from kafka_sticky_plugin.core.balance_builder import _State, initial_state, water_fill
from kafka_sticky_plugin.core.claims import Claims, resolve_claims
from kafka_sticky_plugin.core.components import Component, split_components
from kafka_sticky_plugin.core.keep_flow import _claim_classes, _topic_groups
from kafka_sticky_plugin.core.layout import Layout, build_layout
from kafka_sticky_plugin.core.spec import MemberSpec

SEEDS = range(300)


def _reference_water_fill(
    free: list[int], takers: list[int], load: dict[int, int]
) -> dict[int, list[int]]:
    """One heap step per partition: the least loaded taker, smallest index on ties."""
    got: dict[int, list[int]] = {}
    heap = [(load[m], m) for m in takers]
    heapq.heapify(heap)
    for q in free:
        level, m = heap[0]
        got.setdefault(m, []).append(q)
        heapq.heapreplace(heap, (level + 1, m))
    return got


def _reference_initial_state(layout: Layout, claims: Claims, comp: Component) -> _State:
    """The builder's initial holdings one partition at a time (the rule of
    :func:`~kafka_sticky_plugin.core.balance_builder.initial_state`)."""
    state = _State(layout, claims, comp)
    for m in comp.members:
        for q in claims.owned[m]:
            state.give(m, layout.topic_of(q), q)
    order = sorted(comp.topics, key=lambda t: (len(state.subscribers[t]), t))
    for t in order:
        start = layout.offsets[t]
        free = [q for q in range(start, start + layout.counts[t]) if claims.owner[q] < 0]
        for q in free:
            best = min(state.subscribers[t], key=lambda x: (state.load[x], x))
            h = claims.hints.get(q)
            if (
                h is not None
                and h in state.load
                and t in state.subs[h]
                and state.load[h] == state.load[best]
            ):
                best = h
            state.give(best, t, q)
    return state


def _random_group(rng: random.Random) -> tuple[dict[str, int], list[MemberSpec]]:
    """Different subscriptions; claims from a plausible previous plan plus noise (unknown
    topics, out-of-range partitions, contested and tied claims)."""
    counts = {f"t{i:02d}": rng.choice([0, 1, 2, 3, 5, 8, 13, 40]) for i in range(rng.randint(1, 9))}
    names = [*counts, "gone"]
    pairs = [(t, p) for t, c in counts.items() for p in range(c)]
    members = []
    n_members = rng.randint(1, 12)
    for i in range(n_members):
        topics = rng.sample(names, rng.randint(1, len(names)))
        owned: set[tuple[str, int]] = set()
        for _ in range(rng.randint(0, 2 * len(pairs) // n_members + 2)):
            if pairs and rng.random() < 0.9:
                owned.add(rng.choice(pairs))
            else:
                owned.add((rng.choice(names), rng.randint(-1, 45)))
        generation = rng.choice([-1, 1, 2, 2, 3, 3, 3])
        members.append(
            MemberSpec(member_id=f"m{i:02d}", topics=topics, owned=owned, generation=generation)
        )
    return counts, members


@pytest.mark.parametrize("seed", SEEDS)
def test_water_fill_equals_one_heap_step_per_partition(seed: int) -> None:
    print(f"seed={seed}")
    rng = random.Random(seed)
    takers = sorted(rng.sample(range(40), rng.randint(1, 12)))
    load = {m: rng.choice([0, 0, 1, 2, 5, rng.randint(0, 60)]) for m in takers}
    start = rng.randint(0, 100)
    free = sorted(rng.sample(range(start, start + 400), rng.randint(0, 300)))
    assert water_fill(free, takers, load) == _reference_water_fill(free, takers, load)


@pytest.mark.parametrize("seed", SEEDS)
def test_initial_holdings_equal_the_one_step_rule(seed: int) -> None:
    print(f"seed={seed}")
    counts, members = _random_group(random.Random(seed))
    layout = build_layout(counts, members)
    claims = resolve_claims(layout)
    for comp in split_components(layout):
        got = initial_state(layout, claims, comp)
        want = _reference_initial_state(layout, claims, comp)
        assert got.load == want.load
        for m in comp.members:
            # dict order too: the balancing walks these dicts
            assert list(got.kept[m].items()) == list(want.kept[m].items())
            assert list(got.fresh[m].items()) == list(want.fresh[m].items())


@pytest.mark.parametrize("seed", SEEDS)
def test_claim_classes_count_every_claim_of_its_group(seed: int) -> None:
    """The stickiness flow's kind-0 classes: each member's valid claims counted per topic
    group (in C over the flat group table), against a count one claim at a time."""
    print(f"seed={seed}")
    counts, members = _random_group(random.Random(seed))
    layout = build_layout(counts, members)
    claims = resolve_claims(layout)
    for comp in split_components(layout):
        if comp.homogeneous:
            continue
        groups = _topic_groups(layout, comp)
        n_claims = sum(len(claims.owned[m]) for m in comp.members)
        classes = _claim_classes(layout, claims, comp, groups, n_claims, [])
        want: dict[tuple[int, int], int] = {}
        for m in comp.members:
            for q in claims.owned[m]:
                key = (groups.of_topic[layout.topic_of(q)], m)
                want[key] = want.get(key, 0) + 1
        got = zip(classes.group, classes.member, classes.sizes, strict=True)
        assert {(g, m): size for g, m, size in got} == want
        assert list(zip(classes.group, classes.member, strict=True)) == sorted(want)


@pytest.mark.parametrize("seed", SEEDS)
def test_uncontested_claims_are_kept_in_one_pass(seed: int) -> None:
    """Claims that no two members share (a previous plan, plus invalid ones) are all kept,
    with no hint, whatever the generations; one shared partition falls back to the policy
    (that partition goes to the higher generation or is tied)."""
    print(f"seed={seed}")
    rng = random.Random(seed)
    counts = {f"t{i}": rng.randint(1, 9) for i in range(rng.randint(1, 5))}
    pairs = [(t, p) for t, c in counts.items() for p in range(c)]
    rng.shuffle(pairs)
    n = rng.randint(1, 6)
    shares = [sorted(pairs[i::n]) for i in range(n)]
    members = [
        MemberSpec(
            member_id=f"m{i}",
            topics=list(counts),
            owned=[*share, ("gone", 0), ("t0", 99)],
            generation=rng.choice([-1, 1, 2]),
        )
        for i, share in enumerate(shares)
    ]
    layout = build_layout(counts, members)
    claims = resolve_claims(layout)
    want = [-1] * layout.total
    for m, share in enumerate(shares):
        for t, p in share:
            want[layout.offsets[layout.topic_index[t]] + p] = m
    assert claims.owner == want
    assert claims.hints == {}
    assert [len(qs) for qs in claims.owned] == [len(share) for share in shares]
    if shares[0]:
        # one partition claimed twice: the policy, not the one pass
        contested = [
            members[0],
            MemberSpec(member_id="m0b", topics=list(counts), owned=shares[0][:1], generation=5),
        ]
        layout = build_layout(counts, contested)
        claims = resolve_claims(layout)
        t, p = shares[0][0]
        q = layout.offsets[layout.topic_index[t]] + p
        assert claims.owner[q] == 1
        assert claims.hints == {q: 0}
        assert claims.owner.count(-1) == layout.total - len(shares[0])
