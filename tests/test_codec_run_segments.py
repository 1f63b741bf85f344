"""The run reader's segments (stretches of runs with one name length and one partition count,
read in C by ``_read_segment``) against the pair reader, on seeded random arrays (the seed is
printed) built of such stretches: several name lengths, counts 1 to 3, partitions out of
order inside a run, a name that is not UTF-8, a null group, bytes after the array that look
like more runs of the same shape, and damaged copies. Same pairs, canonical verdict, end
offset, errors and error offsets; and the segment path is taken.
"""

from __future__ import annotations

import random
import struct

import pytest

from kafka_sticky_plugin.codec._topic_partitions import (
    RunStructs,
    topic_partition_pairs,
    topic_partition_runs,
)
from kafka_sticky_plugin.codec._wire import Reader
from kafka_sticky_plugin.core.spec import runs_pairs
from kafka_sticky_plugin.errors import CodecError

SEEDS = range(200)

Run = tuple[bytes, list[int] | None]


def _names(rng: random.Random) -> list[bytes]:
    """Names of two or three lengths, sorted; now and then one that is not UTF-8."""
    names = {
        f"{prefix}{i:0{width}d}".encode()
        for prefix, width in (("t", 3), ("topic-", 5), ("x", 1))
        for i in rng.sample(range(10**width), min(10**width, rng.randint(2, 40)))
    }
    if rng.random() < 0.1:
        names.add(b"t\xff\xfe")
    return sorted(names)


def _stretches(rng: random.Random, names: list[bytes]) -> list[Run]:
    """Runs in stretches of one shape: names of one length, one partition count."""
    by_length: dict[int, list[bytes]] = {}
    for name in names:
        by_length.setdefault(len(name), []).append(name)
    runs: list[Run] = []
    for _ in range(rng.randint(1, 8)):
        group = by_length[rng.choice(sorted(by_length))]
        n = rng.choice([1, 1, 1, 2, 3])
        for name in rng.sample(group, rng.randint(1, len(group))):
            parts = sorted(rng.sample(range(-1 if rng.random() < 0.05 else 0, 30), n))
            if rng.random() < 0.05:
                parts.reverse()  # not canonical (when n > 1)
            runs.append((name, None if rng.random() < 0.01 else parts))
    if rng.random() < 0.5:
        runs.sort(key=lambda run: run[0])
    return runs


def _run_bytes(name: bytes, parts: list[int] | None) -> bytes:
    head = struct.pack(">h", len(name)) + name
    if parts is None:
        return head + struct.pack(">i", -1)
    return head + struct.pack(f">i{len(parts)}i", len(parts), *parts)


def _array_bytes(rng: random.Random, runs: list[Run]) -> bytes:
    body = b"".join(_run_bytes(name, parts) for name, parts in runs)
    # bytes after the array: a copy of its last runs (the reader must stop at the count)
    tail = b"".join(_run_bytes(name, parts) for name, parts in runs[-rng.randint(0, 3) :])
    return struct.pack(">i", len(runs)) + body + (tail if rng.random() < 0.5 else b"")


def _damaged(rng: random.Random, data: bytes) -> bytes:
    roll = rng.random()
    if roll < 0.7:
        return data
    if roll < 0.85:
        return data[: rng.randrange(len(data))]
    at = rng.randrange(len(data))
    return data[:at] + bytes([rng.choice([0x00, 0x01, 0x7F, 0x80, 0xFF])]) + data[at + 1 :]


def _outcome_pairs(data: bytes) -> tuple[object, ...]:
    reader = Reader(data, "array")
    try:
        pairs, canonical = topic_partition_pairs(reader, "owned partitions")
    except CodecError as exc:
        return ("error", str(exc), exc.offset)
    return (pairs, canonical, reader.offset)


def _outcome_runs(data: bytes, names: dict[bytes, str], structs: RunStructs) -> tuple[object, ...]:
    reader = Reader(data, "array")
    try:
        runs, canonical = topic_partition_runs(reader, "owned partitions", names, structs)
    except CodecError as exc:
        return ("error", str(exc), exc.offset)
    return (list(runs_pairs(runs)), canonical, reader.offset)


@pytest.mark.parametrize("seed", SEEDS)
def test_segments_read_the_pairs_verdict_and_errors_of_the_pair_reader(seed: int) -> None:
    print(f"seed={seed}")
    rng = random.Random(seed)
    names = _names(rng)
    interned: dict[bytes, str] = {}
    structs = RunStructs()
    for _ in range(6):
        data = _damaged(rng, _array_bytes(rng, _stretches(rng, names)))
        assert _outcome_runs(data, interned, structs) == _outcome_pairs(data)


def test_segments_are_taken() -> None:
    """Stretches of one shape go through the segment reader (one pattern per shape), longer
    ones than its largest struct too."""
    rng = random.Random(7)
    structs = RunStructs()
    runs: list[Run] = [(f"t{i:04d}".encode(), [i % 5]) for i in range(600)]
    runs += [(f"t{i:04d}".encode(), [1, 2 + i % 3]) for i in range(600, 900)]
    data = _array_bytes(rng, runs)
    assert _outcome_runs(data, {}, structs) == _outcome_pairs(data)
    assert set(structs.segments) == {(5, 1), (5, 2)}
