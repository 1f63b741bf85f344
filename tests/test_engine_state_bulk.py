"""The engine's per-run state built in bulk against one-step references, on seeded random
groups (the seed is printed):

- :func:`.balance_builder.topic_subscribers` (one C-level append pass when members do not
  share subscription objects, one extend per class when they do) against a scan of every
  member per topic;
- ``keep_flow._claim_counts`` (each member's per-group counts appended in bulk) against a
  count of every claim's group, member by member;
- ``quota_builder._lowest_counts`` against a ``dict.get`` minimum per topic;
- ``quota_builder._free_partitions`` (``list.index`` over an adjacent block when few are
  free) against a scan of every owner, and ``fresh_quota_ranges``'s early refusal against
  its scan;
- ``balance_builder._free_per_topic`` against a scan, and ``initial_state`` on groups that
  lost a member (a few free partitions: the ``list.index`` path) against the one-step rule
  of ``tests/test_engine_bulk_plans.py``;
- ``quota_builder._spread_moved`` (moved partitions sliced after the kept ones, lowest
  counts recomputed only for topics a swap touched) against the pass that filters every
  partition by owner and recomputes every lowest count per sweep.
"""

from __future__ import annotations

import random
from array import array
from collections import Counter

import pytest
from test_engine_bulk_plans import _reference_initial_state
from test_engine_keep_flow_bulk import random_group
from test_engine_keep_flow_runs import as_runs

from kafka_sticky_plugin.core import MemberSpec, sticky_assign
from kafka_sticky_plugin.core.balance_builder import (
    _free_per_topic,
    initial_state,
    topic_subscribers,
)
from kafka_sticky_plugin.core.claims import TIED, UNOWNED, Claims, Indices, Planned, resolve_claims
from kafka_sticky_plugin.core.components import Component, split_components
from kafka_sticky_plugin.core.keep_flow import _claim_counts, _topic_groups
from kafka_sticky_plugin.core.layout import Layout, build_layout
from kafka_sticky_plugin.core.quota_builder import (
    _few_free_block,
    _find_partner,
    _free_partitions,
    _lowest_counts,
    _spread_moved,
    fresh_quota_ranges,
)

SEEDS = range(300)


def _random_subscriptions(rng: random.Random) -> tuple[list[frozenset[int]], Component]:
    """Members over 1-12 topics; with probability 1/2 every member gets its own frozenset
    object (the append path), else members share a few objects (the per-class path)."""
    n_topics = rng.randint(1, 12)
    n = rng.randint(1, 40)
    if rng.random() < 0.5:
        subs = [frozenset(rng.sample(range(n_topics), rng.randint(1, n_topics))) for _ in range(n)]
    else:
        classes = [
            frozenset(rng.sample(range(n_topics), rng.randint(1, n_topics))) for _ in range(3)
        ]
        subs = [rng.choice(classes) for _ in range(n)]
    members = sorted(rng.sample(range(n), rng.randint(1, n)))
    topics = sorted(set().union(*(subs[m] for m in members)))
    return subs, Component(members=members, topics=topics, homogeneous=False)


@pytest.mark.parametrize("seed", SEEDS)
def test_topic_subscribers_equal_a_scan(seed: int) -> None:
    print(f"seed={seed}")
    subs, comp = _random_subscriptions(random.Random(seed))
    want = {t: [m for m in comp.members if t in subs[m]] for t in comp.topics}
    got = topic_subscribers(subs, comp)
    assert list(got.items()) == list(want.items())


@pytest.mark.parametrize("seed", SEEDS)
def test_claim_counts_equal_a_count_per_claim(seed: int) -> None:
    print(f"seed={seed}")
    rng = random.Random(seed)
    parts, members = random_group(rng)
    if rng.random() < 0.5:  # sized canonical runs (Claims.run_sizes) for every member
        members = [as_runs(spec) for spec in members]
    layout = build_layout(parts, members)
    claims = resolve_claims(layout)
    for comp in split_components(layout):
        groups = _topic_groups(layout, comp)
        want_members: list[list[int]] = [[] for _ in groups.members]
        want_sizes: list[list[int]] = [[] for _ in groups.members]
        for m in comp.members:
            counted = Counter(groups.of_topic[layout.topic_of(q)] for q in claims.owned[m])
            for g in sorted(counted):
                want_members[g].append(m)
                want_sizes[g].append(counted[g])
        got_members, got_sizes = _claim_counts(layout, claims, comp, groups)
        assert got_members == want_members
        assert got_sizes == want_sizes


@pytest.mark.parametrize("seed", SEEDS)
def test_lowest_counts_equal_a_minimum_per_topic(seed: int) -> None:
    print(f"seed={seed}")
    rng = random.Random(seed)
    n_topics = rng.randint(1, 10)
    counts = [
        Counter(
            {t: rng.randint(0, 4) for t in rng.sample(range(n_topics), rng.randint(0, n_topics))}
        )
        for _ in range(rng.randint(1, 8))
    ]
    topics = set(rng.sample(range(n_topics), rng.randint(0, n_topics)))
    want = {t: min(c.get(t, 0) for c in counts) for t in topics}
    assert _lowest_counts(topics, counts) == want


def _random_owners(rng: random.Random) -> tuple[Layout, list[int]]:
    """A layout of 1-8 topics (0-300 partitions each) and owners: mostly members, a few or
    many unowned or tied (sometimes none of one kind)."""
    parts = {f"t{i}": rng.choice([0, 1, 5, 40, 300]) for i in range(rng.randint(1, 8))}
    layout = build_layout(parts, [MemberSpec(member_id="m", topics=list(parts))])
    rate = rng.choice([0.0, 0.001, 0.01, 0.05, 0.5, 1.0])
    tied = rng.choice([0.0, 0.3])
    owner = [
        (TIED if rng.random() < tied else UNOWNED) if rng.random() < rate else rng.randint(0, 9)
        for _ in range(layout.total)
    ]
    return layout, owner


@pytest.mark.parametrize("seed", SEEDS)
def test_free_partitions_equal_a_scan(seed: int) -> None:
    print(f"seed={seed}")
    rng = random.Random(seed)
    layout, owner = _random_owners(rng)
    n = len(layout.topics)
    if rng.random() < 0.5:
        start = rng.randrange(n)
        topics = list(range(start, rng.randint(start, n - 1) + 1))  # adjacent
    else:
        topics = sorted(rng.sample(range(n), rng.randint(1, n)))
    want = [
        q
        for t in topics
        for q in range(layout.offsets[t], layout.offsets[t] + layout.counts[t])
        if owner[q] < 0
    ]
    if want:
        assert sorted(_free_partitions(layout, owner, topics, len(want))) == want


@pytest.mark.parametrize("seed", SEEDS)
def test_fresh_ranges_refuse_a_component_with_claims(seed: int) -> None:
    print(f"seed={seed}")
    rng = random.Random(seed)
    layout, owner = _random_owners(rng)
    if not layout.total:
        return
    owned: list[Indices] = [array("i") for _ in range(10)]
    for q, o in enumerate(owner):
        if o >= 0:
            owned[o].append(q)
    comp = Component(
        members=list(range(10)), topics=list(range(len(layout.topics))), homogeneous=True
    )
    fresh = fresh_quota_ranges(layout, Claims(owner=owner, owned=owned), comp)
    assert (fresh is not None) == (owner.count(UNOWNED) == len(owner))


def _reference_spread_moved(
    layout: Layout, owner: list[int], members: list[int], plan: dict[int, list[int]]
) -> None:
    """The swap pass as it was: moved partitions found by owner, every lowest count fresh
    at every sweep."""
    topic_at = layout.topic_at()
    moved: dict[int, dict[int, list[int]]] = {}
    counts: dict[int, Counter[int]] = {}
    for m in members:
        mine = [q for q in plan[m] if owner[q] != m]
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
    changed = True
    while changed:
        changed = False
        candidates = {t for a in holders for t, qs in moved[a].items() if qs and counts[a][t] >= 2}
        low = {t: min(counts[b].get(t, 0) for b in holders) for t in candidates}
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
                    changed = True


def _spread_case(
    seed: int,
) -> tuple[Layout, list[int], list[Indices], list[int], dict[int, list[int]]]:
    """``(layout, owner, owned, receivers, plan)``: givers keep part of their claims,
    receivers keep all theirs (ascending) and then get the free and given-up partitions,
    dealt in topic blocks so that topics pile up and swaps happen."""
    rng = random.Random(seed)
    parts = {f"t{i}": rng.randint(1, 30) for i in range(rng.randint(2, 8))}
    layout = build_layout(parts, [MemberSpec(member_id="m", topics=list(parts))])
    n = rng.randint(2, 12)
    owner = [rng.randrange(n) if rng.random() < 0.6 else UNOWNED for _ in range(layout.total)]
    owned: list[list[int]] = [[] for _ in range(n)]
    for q, o in enumerate(owner):
        if o >= 0:
            owned[o].append(q)
    givers = set(rng.sample(range(n), rng.randint(0, n - 1)))
    loose = [q for q, o in enumerate(owner) if o < 0]
    plan: dict[int, list[int]] = {}
    for m in range(n):
        plan[m] = [q for q in owned[m] if m not in givers or rng.random() < 0.5]
        loose += sorted(set(owned[m]).difference(plan[m]))
    loose.sort()
    receivers = [m for m in range(n) if m not in givers]
    block = rng.randint(1, 6)
    for i in range(0, len(loose), block):
        plan[rng.choice(receivers)] += loose[i : i + block]
    members = [m for m in receivers if len(plan[m]) > len(owned[m])]
    return layout, owner, [array("i", qs) for qs in owned], members, plan


@pytest.mark.parametrize("seed", SEEDS)
def test_spread_moved_equals_the_full_pass(seed: int) -> None:
    print(f"seed={seed}")
    layout, owner, owned, members, plan = _spread_case(seed)
    want = {m: qs[:] for m, qs in plan.items()}
    _reference_spread_moved(layout, owner, members, want)
    got: dict[int, Planned] = dict(plan)
    _spread_moved(layout, owned, members, got)
    assert got == want


def test_spread_cases_swap() -> None:
    """The seeds above do swap, in many of the cases."""
    swapped = 0
    for seed in SEEDS:
        layout, owner, _, members, plan = _spread_case(seed)
        after = {m: qs[:] for m, qs in plan.items()}
        _reference_spread_moved(layout, owner, members, after)
        swapped += after != plan
    assert swapped > 50


@pytest.mark.parametrize("seed", SEEDS)
def test_free_per_topic_equals_a_scan(seed: int) -> None:
    print(f"seed={seed}")
    rng = random.Random(seed)
    layout, owner = _random_owners(rng)
    n = len(layout.topics)
    start = rng.randrange(n)
    topics = (
        list(range(start, rng.randint(start, n - 1) + 1))
        if rng.random() < 0.5
        else sorted(rng.sample(range(n), rng.randint(1, n)))
    )
    want: dict[int, list[int]] = {}
    for t in topics:
        free = [
            q
            for q in range(layout.offsets[t], layout.offsets[t] + layout.counts[t])
            if owner[q] < 0
        ]
        if free:
            want[t] = free
    n_free = sum(map(len, want.values()))
    if n_free:
        got = _free_per_topic(layout, owner, topics, n_free)
        assert sorted(got.items()) == sorted(want.items())


def _left_group(seed: int) -> tuple[dict[str, int], list[MemberSpec]]:
    """A plan of different subscriptions (claims of a previous plan), one member gone."""
    rng = random.Random(seed)
    parts, members = random_group(rng)
    parts = {t: max(n, 40) for t, n in parts.items()}
    members = [MemberSpec(member_id=s.member_id, topics=s.topics) for s in members]
    plan = sticky_assign(parts, members)
    gone = rng.randrange(len(members))
    return parts, [
        MemberSpec(member_id=s.member_id, topics=s.topics, owned=plan[s.member_id])
        for i, s in enumerate(members)
        if i != gone
    ]


@pytest.mark.parametrize("seed", SEEDS)
def test_initial_state_after_a_leave_equals_the_one_step_rule(seed: int) -> None:
    print(f"seed={seed}")
    parts, members = _left_group(seed)
    layout = build_layout(parts, members)
    claims = resolve_claims(layout)
    for comp in split_components(layout):
        got = initial_state(layout, claims, comp)
        want = _reference_initial_state(layout, claims, comp)
        assert got.load == want.load
        for m in comp.members:
            assert list(got.kept[m].items()) == list(want.kept[m].items())
            assert sorted(got.fresh[m].items()) == sorted(want.fresh[m].items())


def test_leaves_reach_the_few_free_path() -> None:
    met = 0
    for seed in SEEDS:
        parts, members = _left_group(seed)
        layout = build_layout(parts, members)
        claims = resolve_claims(layout)
        for comp in split_components(layout):
            total = sum(layout.counts[t] for t in comp.topics)
            n_free = total - sum(len(claims.owned[m]) for m in comp.members)
            met += n_free > 0 and _few_free_block(layout, comp.topics, n_free) is not None
    assert met > 30
