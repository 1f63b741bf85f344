"""The engine's front fast paths against the one-step algorithms they replace, on seeded
random input (the seed is printed): the components split by relabelling
(:func:`split_components`) against a union-find reference over random groups; the layout's
subscription classes against a per-topic reference.
"""

from __future__ import annotations

import random

from kafka_sticky_plugin.core.components import Component, split_components
from kafka_sticky_plugin.core.layout import Layout, build_layout
from kafka_sticky_plugin.core.spec import MemberSpec

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
