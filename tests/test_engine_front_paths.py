"""The engine's front fast paths against the one-step algorithms they replace, on seeded
random input (the seed is printed): the components split by
relabelling (:func:`split_components`) against a union-find reference over random groups;
the layout's subscription classes against a per-topic reference; claims resolved from
canonical runs (short runs bounded by ``min``/``max``, long runs by their ends, topics of
different partition counts, out-of-range and negative partitions) against the same claims
as pairs.
"""

from __future__ import annotations

import random

from kafka_sticky_plugin.core.claims import resolve_claims
from kafka_sticky_plugin.core.components import Component, split_components
from kafka_sticky_plugin.core.layout import Layout, build_layout
from kafka_sticky_plugin.core.spec import MemberSpec, canonical_runs

SEED = random.randrange(2**32)


def _reference_components(layout: Layout) -> list[Component]:
    """The union-find split the relabelling replaced."""
    parent = list(range(len(layout.topics)))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for subs in layout.subscriptions:
        if subs:
            it = iter(subs)
            root = find(next(it))
            for t in it:
                r = find(t)
                if r != root:
                    parent[r] = root
    members_by_root: dict[int, list[int]] = {}
    for m, subs in enumerate(layout.subscriptions):
        if subs:
            members_by_root.setdefault(find(next(iter(subs))), []).append(m)
    topics_by_root: dict[int, list[int]] = {}
    for t in range(len(layout.topics)):
        topics_by_root.setdefault(find(t), []).append(t)
    out = []
    for root in sorted(members_by_root, key=lambda r: members_by_root[r][0]):
        ms = members_by_root[root]
        first = layout.subscriptions[ms[0]]
        homogeneous = all(layout.subscriptions[m] is first for m in ms)
        out.append(Component(members=ms, topics=topics_by_root[root], homogeneous=homogeneous))
    return out


def _random_layout(rng: random.Random) -> Layout:
    n_topics = rng.randint(1, 40)
    counts = {f"t{i:02d}": rng.randint(0, 4) for i in range(n_topics)}
    names = [*counts, "unknown-a", "unknown-b"]
    shapes = [
        tuple(rng.sample(names, rng.randint(0, min(len(names), rng.choice([1, 2, 3, 8])))))
        for _ in range(rng.randint(1, 12))
    ]
    members = [
        MemberSpec(member_id=f"m{i:03d}", topics=rng.choice(shapes))
        for i in range(rng.randint(1, 30))
    ]
    return build_layout(counts, members)


def test_split_components_matches_union_find() -> None:
    print(f"seed {SEED}")
    rng = random.Random(f"{SEED}:components")
    merged = 0
    for _ in range(2000):
        layout = _random_layout(rng)
        for m, spec in enumerate(layout.specs):
            known = frozenset(layout.topic_index[t] for t in spec.topics if t in layout.topic_index)
            assert layout.subscriptions[m] == known
        got = split_components(layout)
        assert got == _reference_components(layout)
        merged += any(len(c.topics) > 1 for c in got)
    assert merged


def _claims_case(rng: random.Random) -> tuple[dict[str, int], list[MemberSpec], list[MemberSpec]]:
    """Counts, and the same members built from canonical runs and from pairs."""
    counts = {f"t{i}": rng.choice([1, 5, 12, 30]) for i in range(rng.randint(1, 8))}
    names = [*counts, "gone"] if rng.random() < 0.3 else [*counts]
    spill = rng.random() < 0.5  # some partitions out of range
    by_runs, by_pairs = [], []
    for i in range(rng.randint(1, 8)):
        topics = rng.sample(names, rng.randint(1, len(names)))
        groups = []
        for t in sorted(rng.sample(names, rng.randint(0, len(names)))):
            n = counts.get(t, 4)
            pool = range(-1, n + 3) if spill else range(n)
            size = rng.choice([1, 1, 2, rng.randint(1, len(pool))])
            groups.append((t, sorted(rng.sample(pool, min(size, len(pool))))))
        runs = canonical_runs(
            (
                tuple(t for t, _ in groups),
                [len(ps) for _, ps in groups],
                [p for _, ps in groups for p in ps],
            )
        )
        pairs = [(t, p) for t, ps in groups for p in ps]
        generation = rng.choice([-1, 1, 2])
        by_runs.append(
            MemberSpec.from_runs(member_id=f"m{i}", topics=topics, runs=runs, generation=generation)
        )
        by_pairs.append(
            MemberSpec(member_id=f"m{i}", topics=topics, owned=pairs, generation=generation)
        )
    return counts, by_runs, by_pairs


def test_claims_of_long_and_short_runs_equal_claims_of_pairs() -> None:
    print(f"seed {SEED}")
    rng = random.Random(f"{SEED}:claims")
    for _ in range(1500):
        counts, by_runs, by_pairs = _claims_case(rng)
        from_runs = resolve_claims(build_layout(counts, by_runs))
        assert from_runs == resolve_claims(build_layout(counts, by_pairs))
