"""The engine's per-run state built in bulk against one-step references, on seeded random
groups (the seed is printed):

- :func:`.balance_builder.topic_subscribers` (one C-level append pass when members do not
  share subscription objects, one extend per class when they do) against a scan of every
  member per topic;
- ``keep_flow._claim_counts`` (each member's per-group counts appended in bulk) against a
  count of every claim's group, member by member;
- ``quota_builder._lowest_counts`` against a ``dict.get`` minimum per topic.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest
from test_engine_keep_flow_bulk import random_group
from test_engine_keep_flow_runs import as_runs

from kafka_sticky_plugin.core.balance_builder import topic_subscribers
from kafka_sticky_plugin.core.claims import resolve_claims
from kafka_sticky_plugin.core.components import Component, split_components
from kafka_sticky_plugin.core.keep_flow import _claim_counts, _topic_groups
from kafka_sticky_plugin.core.layout import build_layout
from kafka_sticky_plugin.core.quota_builder import _lowest_counts

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
