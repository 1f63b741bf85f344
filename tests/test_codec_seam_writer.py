"""The seam's writer (``write_assignments``: each member's ascending global partition
indices to assignment bytes) against ``encode_assignment`` of the same ``(topic, partition)``
pairs, byte for byte, on seeded random batches (the seed is printed): layouts with topics of
zero partitions and of one, names of varied lengths and scripts, and plans that are empty,
lists of any density, one partition of each of many topics, contiguous blocks, and ranges of
every step; and the errors of both.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from kafka_sticky_plugin.codec import Assignment, encode_assignment
from kafka_sticky_plugin.codec.seam import write_assignments
from kafka_sticky_plugin.errors import CodecError

SEEDS = range(300)


def _layout(rng: random.Random) -> tuple[list[str], list[int]]:
    """Sorted distinct names and their partition counts (zeros and ones included)."""
    size = rng.choice([1, 2, 5, 20, 40, 70])
    names: set[str] = set()
    while len(names) < size:
        stem = rng.choice(["t", "topic-", "ü-", "队列", "x" * rng.randint(1, 30)])
        names.add(f"{stem}{rng.randint(0, 999)}")
    counts = [rng.choice([0, 0, 1, 1, 2, 3, 7, 20, 64]) for _ in names]
    return sorted(names), counts


def _ones(rng: random.Random, offsets: list[int], counts: list[int]) -> list[int]:
    """One partition of each of a stretch of topics (some skipped)."""
    lo = rng.randrange(len(counts))
    hi = rng.randint(lo + 1, len(counts))
    skip = rng.random() < 0.5
    return [
        offsets[t] + rng.randrange(counts[t])
        for t in range(lo, hi)
        if counts[t] and not (skip and rng.random() < 0.2)
    ]


def _plan(rng: random.Random, offsets: list[int], counts: list[int], total: int) -> Sequence[int]:
    """One member's strictly increasing indices, a list or a range."""
    if not total:
        return rng.choice([[], range(0)])
    kind = rng.choice(
        [
            "empty",
            "subset",
            "subset",
            "ones",
            "ones",
            "ones_and_more",
            "ones_and_more",
            "block",
            "range",
        ]
    )
    if kind == "empty":
        return []
    if kind == "subset":
        density = rng.choice([0.02, 0.2, 0.6, 1.0])
        return [q for q in range(total) if rng.random() < density]
    if kind == "ones":
        return _ones(rng, offsets, counts)
    if kind == "ones_and_more":  # a receiver: a few topics hold more than one partition
        extra = {rng.randrange(total) for _ in range(rng.randint(1, 3))}
        return sorted({*_ones(rng, offsets, counts), *extra})
    lo = rng.randrange(total)
    hi = rng.randint(lo + 1, total)
    if kind == "block":
        return list(range(lo, hi))
    return range(lo, hi, rng.choice([1, 2, 3, max(counts), max(counts) + 1, total]))


def _offsets(counts: list[int]) -> list[int]:
    return [sum(counts[:t]) for t in range(len(counts))]


def _reference(version: int, names: list[str], counts: list[int], qs: Sequence[int]) -> bytes:
    pairs = [(name, p) for name, n in zip(names, counts, strict=True) for p in range(n)]
    return encode_assignment(Assignment(version, tuple(pairs[q] for q in qs)))


@pytest.mark.parametrize("seed", SEEDS)
def test_dense_bytes_equal_the_tuple_path(seed: int) -> None:
    print(f"seed={seed}")
    rng = random.Random(seed)
    names, counts = _layout(rng)
    offsets, total = _offsets(counts), sum(counts)
    version = rng.randint(0, 3)
    plans = [_plan(rng, offsets, counts, total) for _ in range(rng.randint(1, 30))]
    written = write_assignments(version, names, counts, plans)
    assert len(written) == len(plans)
    for qs, got in zip(plans, written, strict=True):
        assert got == _reference(version, names, counts, qs), qs


def test_indices_that_are_not_strictly_increasing_or_out_of_range_are_refused() -> None:
    for bad in ([1, 1], [2, 1], [0, 5], [-1, 0], [3, 2], range(4, 0, -1), [0, 2, 2], [0, 3, 1, 4]):
        with pytest.raises(ValueError):
            write_assignments(0, ["a", "b"], [3, 2], [bad])


def test_a_version_outside_int16_is_refused_at_offset_0() -> None:
    for version in (-1, 32768, True):
        with pytest.raises(CodecError) as info:
            write_assignments(version, ["a"], [1], [[0]])
        assert info.value.offset == 0


def test_an_unwritable_topic_fails_as_on_the_tuple_path() -> None:
    long = "x" * 40000
    names, counts = ["a", long], [2, 20]
    assert write_assignments(1, names, counts, [[0, 1]]) == [_reference(1, names, counts, [0, 1])]
    for qs in ([0, 2], [2, 3], list(range(2, 22)), range(1, 22, 2)):
        with pytest.raises(CodecError) as dense_error:
            write_assignments(1, names, counts, [qs])
        with pytest.raises(CodecError) as tuple_error:
            _reference(1, names, counts, qs)
        assert str(dense_error.value) == str(tuple_error.value)
