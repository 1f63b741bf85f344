"""The dense writer (``AssignmentEncoder.encode_dense``: a member's ascending global partition
indices to assignment bytes, no tuple per partition) against today's tuple path kept as the
reference (``AssignmentEncoder.encode`` of the same ``(topic, partition)`` pairs), byte for
byte, on seeded random batches (the seed is printed): layouts with topics of zero partitions
and of one, names of varied lengths and scripts, and plans that are empty, lists of any
density, one partition of each of many topics (repeated, so the per-batch ``struct`` layouts
are built and reused), contiguous blocks, and ranges of every step.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from kafka_sticky_plugin.codec import Assignment, AssignmentEncoder, DenseTopics, encode_assignment
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


def _reference(
    encoder: AssignmentEncoder, version: int, names: list[str], counts: list[int], qs: Sequence[int]
) -> bytes:
    pairs = [(name, p) for name, n in zip(names, counts, strict=True) for p in range(n)]
    return encoder.encode(Assignment(version, tuple(pairs[q] for q in qs)))


@pytest.mark.parametrize("seed", SEEDS)
def test_dense_bytes_equal_the_tuple_path(seed: int) -> None:
    print(f"seed={seed}")
    rng = random.Random(seed)
    names, counts = _layout(rng)
    topics = DenseTopics(names, counts)
    offsets, total = topics.offsets, topics.total
    version = rng.randint(0, 3)
    dense, reference = AssignmentEncoder(), AssignmentEncoder()
    plans = [_plan(rng, offsets, counts, total) for _ in range(rng.randint(1, 30))]
    plans += plans[: rng.randint(0, len(plans))]  # repeated layouts: the struct path
    for qs in plans:
        expected = _reference(reference, version, names, counts, qs)
        assert dense.encode_dense(version, qs, topics) == expected, qs
        assert expected == encode_assignment(
            Assignment(
                version,
                tuple((names[topics.topic_at[q]], q - offsets[topics.topic_at[q]]) for q in qs),
            )
        )


@pytest.mark.parametrize("seed", range(20))
def test_one_each_layouts_of_one_start_and_other_lengths_differ(seed: int) -> None:
    """Consecutive topics from one start but of different lengths are different layouts."""
    print(f"seed={seed}")
    rng = random.Random(seed)
    names = [f"t{i:03d}" for i in range(60)]
    counts = [rng.randint(1, 9) for _ in names]
    topics = DenseTopics(names, counts)
    dense, reference = AssignmentEncoder(), AssignmentEncoder()
    for _ in range(40):
        lo = rng.randrange(4)
        hi = rng.randint(lo + 16, len(names))
        qs = [topics.offsets[t] + rng.randrange(counts[t]) for t in range(lo, hi)]
        assert dense.encode_dense(3, qs, topics) == _reference(reference, 3, names, counts, qs)


def test_indices_that_are_not_strictly_increasing_or_out_of_range_are_refused() -> None:
    topics = DenseTopics(["a", "b"], [3, 2])
    encoder = AssignmentEncoder()
    for bad in ([1, 1], [2, 1], [0, 5], [-1, 0], [3, 2], range(4, 0, -1), [0, 2, 2], [0, 3, 1, 4]):
        with pytest.raises(ValueError):
            encoder.encode_dense(0, bad, topics)


def test_topics_must_be_sorted_strings_with_counts() -> None:
    for names, counts in (
        (["b", "a"], [1, 1]),
        (["a", "a"], [1, 1]),
        (["a"], [1, 2]),
        (["a"], [-1]),
    ):
        with pytest.raises(ValueError):
            DenseTopics(names, counts)
    with pytest.raises(ValueError):
        DenseTopics(["a"], [2], topic_at=[0])


def test_an_unwritable_topic_fails_as_on_the_tuple_path() -> None:
    long = "x" * 40000
    names, counts = ["a", long], [2, 20]
    topics = DenseTopics(names, counts)
    assert AssignmentEncoder().encode_dense(1, [0, 1], topics) == _reference(
        AssignmentEncoder(), 1, names, counts, [0, 1]
    )
    for qs in ([0, 2], [2, 3], list(range(2, 22)), range(1, 22, 2)):
        with pytest.raises(CodecError) as dense_error:
            AssignmentEncoder().encode_dense(1, qs, topics)
        with pytest.raises(CodecError) as tuple_error:
            _reference(AssignmentEncoder(), 1, names, counts, qs)
        assert str(dense_error.value) == str(tuple_error.value)


@pytest.mark.parametrize("seed", range(20))
def test_fresh_shares_dealt_round_robin(seed: int) -> None:
    """A fresh component's shares: ``range(lo + j, hi, members)``, one index per topic when
    the step is at least every count (topics of zero partitions in between, sometimes)."""
    print(f"seed={seed}")
    rng = random.Random(seed)
    names = [f"topic-{i:03d}" for i in range(rng.randint(16, 50))]
    step = rng.randint(1, 9)
    counts = [rng.choice([step, step, rng.randint(0, step)]) for _ in names]
    topics = DenseTopics(names, counts)
    dense, reference = AssignmentEncoder(), AssignmentEncoder()
    for members in (step, step + 1, rng.randint(1, 2 * step)):
        for j in [*range(members), *range(members)]:  # twice: the struct layouts too
            qs = range(j, topics.total, members)
            assert dense.encode_dense(2, qs, topics) == _reference(reference, 2, names, counts, qs)


def _long_runs_plan(rng: random.Random, offsets: list[int], counts: list[int]) -> list[int]:
    """Runs of several partitions of many topics (a Java member's or a keeper's share of a
    group with fewer members than partitions per topic), a few one-partition runs between."""
    qs: list[int] = []
    for t, n in enumerate(counts):
        if not n or rng.random() < 0.3:
            continue
        k = n if rng.random() < 0.3 else rng.randint(1, n)
        qs.extend(offsets[t] + p for p in sorted(rng.sample(range(n), k)))
    return qs


@pytest.mark.parametrize("seed", range(200))
def test_runs_sliced_from_one_packing_equal_runs_written_one_by_one(seed: int) -> None:
    """The bulk writer of long runs (:func:`_sliced_runs`: no Python step per run) against
    the per-run writer it replaced (:func:`_long_runs`) and the tuple path."""
    from kafka_sticky_plugin.codec import _dense_partitions as dp

    print(f"seed={seed}")
    rng = random.Random(seed)
    names, _ = _layout(rng)
    counts = [rng.choice([0, 1, 8, 20, 64, 300]) for _ in names]
    topics = DenseTopics(names, counts)
    offsets = topics.offsets
    version = rng.randint(0, 3)
    dense, reference = AssignmentEncoder(), AssignmentEncoder()
    for _ in range(rng.randint(1, 10)):
        qs = _long_runs_plan(rng, offsets, counts)
        if not qs:
            continue
        expected = _reference(reference, version, names, counts, qs)
        assert dense.encode_dense(version, qs, topics) == expected, qs
        ts = [topics.topic_at[q] for q in qs]
        partitions = [q - offsets[t] for q, t in zip(qs, ts, strict=True)]
        starts = [i for i in range(len(ts)) if i == 0 or ts[i] != ts[i - 1]]
        lengths = [b - a for a, b in zip(starts, [*starts[1:], len(ts)], strict=True)]
        longer = [(s, n) for s, n in zip(starts, lengths, strict=True) if n > 1]
        assert dp._sliced_runs(topics, ts, partitions, starts, lengths) == dp._long_runs(
            topics, ts, partitions, longer
        )


@pytest.mark.parametrize("seed", range(200))
def test_canonical_runs_written_directly_equal_their_dense_indices(seed: int) -> None:
    """``encode_canonical_runs`` (a member's claims as canonical runs, no topic lookup per
    partition) against ``encode_dense`` of the same partitions' indices, both for runs of
    one partition each (``lengths`` ``None``) and for runs of any length."""
    print(f"seed={seed}")
    rng = random.Random(seed)
    names, _ = _layout(rng)
    counts = [rng.choice([0, 1, 2, 8, 20, 64, 300]) for _ in names]
    topics = DenseTopics(names, counts)
    offsets = topics.offsets
    version = rng.randint(0, 3)
    encoder = AssignmentEncoder()
    for _ in range(rng.randint(1, 10)):
        qs = (
            _ones(rng, offsets, counts)
            if rng.random() < 0.4
            else _long_runs_plan(rng, offsets, counts)
        )
        if rng.random() < 0.3:
            qs = sorted(q for q in range(topics.total) if rng.random() < 0.3)
        ts = [topics.topic_at[q] for q in qs]
        run_ts = sorted(set(ts))
        run_names: Sequence[str] = [names[t] for t in run_ts]
        if rng.random() < 0.5:
            run_names = tuple(run_names)  # topic indices remembered by value
        lengths = [ts.count(t) for t in run_ts]
        flat = [q - offsets[t] for q, t in zip(qs, ts, strict=True)]
        one_each = len(flat) == len(run_names)
        expected = encoder.encode_dense(version, qs, topics)
        got = encoder.encode_canonical_runs(
            version, run_names, None if one_each and rng.random() < 0.7 else lengths, flat, topics
        )
        assert got == expected, (run_names, lengths, flat)


def _ones_among_runs(rng: random.Random, offsets: list[int], counts: list[int]) -> list[int]:
    """One partition of most topics, several of a few (a Java member's claims in a group with
    about as many members as partitions per topic), some topics skipped."""
    qs: list[int] = []
    for t, n in enumerate(counts):
        if not n or rng.random() < 0.1:
            continue
        k = rng.randint(2, min(n, 4)) if n > 1 and rng.random() < 0.05 else 1
        qs.extend(offsets[t] + p for p in sorted(rng.sample(range(n), k)))
    return qs


@pytest.mark.parametrize("seed", range(200))
def test_one_partition_runs_among_a_few_longer_equal_the_tuple_path(seed: int) -> None:
    """Runs of one partition each but a few, written by stretches (``encode_canonical_runs``
    from runs, ``encode_dense`` from indices; in one grid of words when every header has one
    length that is a multiple of 4) against the tuple path; names of one length (a multiple
    of 4 with the header or not) or of mixed lengths, as a list and as tuples (their topic
    indices remembered for the batch); the grids are counted so that they are known to be
    taken."""
    from kafka_sticky_plugin.codec import _dense_partitions as dp

    print(f"seed={seed}")
    rng = random.Random(seed)
    width = rng.choice([6, 7, 10, 14, 0])  # 0: names of mixed lengths
    names = sorted(
        {
            f"{rng.randrange(10**width):0{width}d}" if width else "x" * rng.randint(1, 9)
            for _ in range(rng.choice([20, 60, 200]))
        }
    )
    counts = [rng.choice([0, 1, 2, 3, 8, 40]) for _ in names]
    topics = DenseTopics(names, counts)
    offsets = topics.offsets
    version = rng.randint(0, 3)
    encoder, reference = AssignmentEncoder(), AssignmentEncoder()
    stretches = dp._stretches
    aligned = bool(width) and (width + 6) % 4 == 0  # header: 2 + width, count: 4
    grids = should = 0

    def counted(topics: DenseTopics, partitions: list[int]) -> object:
        nonlocal grids
        out = stretches(topics, partitions)
        grids += isinstance(out, dp._WordGrid)
        return out

    dp._stretches = counted  # type: ignore[assignment]
    try:
        for _ in range(rng.randint(1, 8)):
            qs = _ones_among_runs(rng, offsets, counts)
            ts = [topics.topic_at[q] for q in qs]
            run_ts = sorted(set(ts))
            lengths = [ts.count(t) for t in run_ts]
            flat = [q - offsets[t] for q, t in zip(qs, ts, strict=True)]
            expected = _reference(reference, version, names, counts, qs)
            run_names = [names[t] for t in run_ts]
            for given in (run_names, tuple(run_names), tuple(run_names)):
                # a tuple's topic indices are remembered by value: the second one hits
                got = encoder.encode_canonical_runs(version, given, lengths, flat, topics)
                assert got == expected, (run_ts, lengths, flat)
            assert encoder.encode_dense(version, qs, topics) == expected
            repeats = len(flat) - len(run_ts)
            few = bool(flat) and repeats * dp._FEW_REPEATS <= len(flat)
            # once per way of giving the names, once from indices when a topic repeats
            should += aligned * few * (3 + (repeats > 0))
    finally:
        dp._stretches = stretches  # type: ignore[assignment]
    assert grids == should
