"""The leader's front fast paths against the one-step readers and algorithms they replace,
on seeded random input (the seed is printed): a subscription's topic array read in one
``struct`` call when its names share one byte length (:meth:`Reader.string_array` with a
``uniform`` table) against the per-string loop, on uniform, mixed, non-UTF-8, truncated and
hostile arrays: same strings, offset, errors and error offsets; the components split by
relabelling (:func:`split_components`) against a union-find reference over random groups;
the layout's subscription classes against a per-topic reference; claims resolved from
canonical runs (short runs bounded by ``min``/``max``, long runs by their ends, topics of
different partition counts, out-of-range and negative partitions) against the same claims
as pairs.
"""

from __future__ import annotations

import random
import struct

import pytest

from kafka_sticky_plugin.codec._wire import Reader
from kafka_sticky_plugin.core.claims import resolve_claims
from kafka_sticky_plugin.core.components import Component, split_components
from kafka_sticky_plugin.core.layout import Layout, build_layout
from kafka_sticky_plugin.core.spec import MemberSpec, canonical_runs
from kafka_sticky_plugin.errors import CodecError

SEED = random.randrange(2**32)


def _name(rng: random.Random, length: int) -> bytes:
    roll = rng.random()
    if roll < 0.05 and length:
        return b"\xff" * length  # not UTF-8
    if roll < 0.1 and length >= 2:
        return "é".encode() * (length // 2) + b"x" * (length % 2)
    return bytes(rng.choice(b"abcdefgh-.0123") for _ in range(length))


def _array(rng: random.Random) -> bytes:
    count = rng.choice([0, 1, 2, 3, 5, 25, 40])
    base = rng.choice([0, 1, 5, 14])
    pool = [_name(rng, base) for _ in range(rng.randint(1, 8))]
    out = [struct.pack(">i", count if rng.random() > 0.05 else rng.choice([-1, -3, 10**6]))]
    for _ in range(count):
        raw = rng.choice(pool) if rng.random() < 0.95 else _name(rng, rng.randint(0, 20))
        length = len(raw) if rng.random() > 0.02 else rng.choice([-1, -32768, len(raw) + 3])
        out.append(struct.pack(">h", length) + raw)
    data = b"".join(out) + bytes(rng.randint(0, 3))
    if rng.random() < 0.1:
        data = data[: rng.randint(0, len(data))]
    return data


def _read(data: bytes, uniform: dict[tuple[int, int], struct.Struct] | None) -> object:
    reader = Reader(data, "test")
    names: dict[bytes, str] = {}
    try:
        return reader.string_array("topics", names, uniform), reader.offset, names
    except CodecError as exc:
        return "error", str(exc), reader.offset


@pytest.mark.parametrize("round_", range(4))
def test_uniform_string_array_reads_what_the_loop_reads(round_: int) -> None:
    print(f"seed {SEED}")
    rng = random.Random(f"{SEED}:{round_}")
    uniform: dict[tuple[int, int], struct.Struct] = {}
    uniform_hits = 0
    for _ in range(1500):
        data = _array(rng)
        before = len(uniform)
        assert _read(data, uniform) == _read(data, None), data
        uniform_hits += len(uniform) > before
    assert uniform_hits  # the fast path was taken


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
