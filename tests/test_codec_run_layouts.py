"""Learned run layouts (``OneEachLayouts.learn_runs``: arrays whose runs hold several
partitions, repeated with other partition numbers) read exactly what the general run reader
reads, on seeded random batches (the seed is printed): the same runs, canonical block,
errors and offset after, with near misses that must fall back (same count, first header and
byte length but one fixed byte elsewhere different: another topic of the same name length,
counts moved between runs), partitions out of order within a run, topics in Java order,
truncated arrays. The shortcut must also be taken (else equality proves nothing)."""

from __future__ import annotations

import random

import pytest
from codec_helpers import owned_array

from kafka_sticky_plugin.codec._topic_partitions import (
    ArrayMemos,
    read_topic_partition_runs,
)
from kafka_sticky_plugin.codec._wire import Reader
from kafka_sticky_plugin.errors import CodecError

SEEDS = range(150)

Groups = list[tuple[str, list[int]]]


def _bucket(rng: random.Random) -> tuple[list[str], list[int]]:
    topics = sorted(rng.sample([f"t{i:03d}" for i in range(60)], rng.randint(15, 24)))
    if rng.random() < 0.3:
        rng.shuffle(topics)  # Java's hash order: never canonical
    lengths = [rng.choice([1, 2, 3, 5]) for _ in topics]
    if max(lengths) == 1:
        lengths[-1] = 2
    return topics, lengths


def _partitions(rng: random.Random, n: int) -> list[int]:
    picked = sorted(rng.sample(range(-1, 40), n))
    if n > 1 and rng.random() < 0.1:
        rng.shuffle(picked)  # not canonical within the run
    return picked


def _near_miss(rng: random.Random, topics: list[str], lengths: list[int]) -> Groups:
    """Same count, first run header and byte length, one fixed byte different elsewhere."""
    topics, lengths = list(topics), list(lengths)
    i = rng.randrange(1, len(topics))
    if rng.random() < 0.5:
        topics[i] = f"u{i:03d}"  # another name of the same length
    else:
        j = rng.choice([k for k in range(1, len(topics)) if k != i])
        if lengths[i] > 1:
            lengths[i] -= 1
            lengths[j] += 1
        else:
            topics[i] = f"v{i:03d}"
    return [(t, _partitions(rng, n)) for t, n in zip(topics, lengths, strict=True)]


def _batch(rng: random.Random) -> list[bytes]:
    buckets = [_bucket(rng) for _ in range(rng.randint(1, 3))]
    out = []
    for _ in range(rng.randint(4, 14)):
        topics, lengths = rng.choice(buckets)
        roll = rng.random()
        if roll < 0.15:
            groups = _near_miss(rng, topics, lengths)
        else:
            groups = [(t, _partitions(rng, n)) for t, n in zip(topics, lengths, strict=True)]
        data = owned_array(groups) + b"\x00\x00\x00\x07"
        if roll > 0.95:
            data = data[: rng.randrange(len(data) - 4)]  # truncated
        out.append(data)
    return out


def _read(data: bytes, memos: ArrayMemos | None) -> object:
    reader = Reader(data, "a")
    try:
        if memos is None:
            runs, block = read_topic_partition_runs(reader, "owned")
        else:
            runs, block = read_topic_partition_runs(
                reader, "owned", memos.names, memos.layouts, memos.structs
            )
    except CodecError as exc:
        return str(exc), exc.offset
    topics, lengths, partitions = runs
    return (
        tuple(topics),
        None if lengths is None else list(lengths),
        list(partitions),
        block,
        reader.offset,
    )


@pytest.mark.parametrize("seed", SEEDS)
def test_run_layouts_read_what_the_general_reader_reads(seed: int) -> None:
    print(f"seed={seed}")
    rng = random.Random(seed)
    memos = ArrayMemos()
    for data in _batch(rng):
        assert _read(data, memos) == _read(data, None)


def test_repeated_run_layouts_are_taken_and_near_misses_fall_back() -> None:
    seed = random.randrange(2**32)
    print(f"seed={seed}")
    rng = random.Random(seed)
    topics, lengths = sorted(f"t{i:03d}" for i in range(20)), [5] * 20
    memos = ArrayMemos()
    for _ in range(6):
        groups = [
            (t, sorted(rng.sample(range(100), n))) for t, n in zip(topics, lengths, strict=True)
        ]
        data = owned_array(groups)
        assert _read(data, memos) == _read(data, None)
    assert memos.layouts._hits == 4  # learned on the second array, taken from the third
    for _ in range(4):
        data = owned_array(_near_miss(rng, topics, lengths))
        assert _read(data, memos) == _read(data, None)
    assert memos.layouts._hits == 4
    assert memos.layouts._misses == 4
