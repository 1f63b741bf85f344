"""The files ``make bench`` hands every peer and reads back (framing: docs/benchmarks.md).

Input (``KSB1``), big-endian, Kafka-style lengths::

    "KSB1"
    int32 topic count, then per topic: int16 name length, name, int32 partition count
    int32 member count, then per member: int16 id length, id, int32 metadata length,
          metadata (the member's JoinGroup protocol metadata, exactly as our leader gets it)
    int32 replica rack set count S (0: no replica racks), then per set: int16 rack count,
          per rack: int16 length, name; then, if S > 0, per topic in the order above, per
          partition: int16 index of its replica rack set

Output: int32 member count, then per member: int16 id length, id, int32 length, the member's
SyncGroup assignment bytes as the peer's own client would send them.
"""

from __future__ import annotations

import struct
from array import array
from collections.abc import Mapping
from pathlib import Path

MAGIC = b"KSB1"

PartitionRacks = Mapping[tuple[str, int], tuple[str, ...]]


def _str(value: str) -> bytes:
    raw = value.encode()
    return struct.pack(">h", len(raw)) + raw


def write_input(
    path: Path,
    partitions: Mapping[str, int],
    metadata: Mapping[str, bytes],
    partition_racks: PartitionRacks | None = None,
    rack_bytes: bytes | None = None,
) -> None:
    """Write one peer input: partition counts, every member's metadata, replica racks
    (``rack_bytes``: :func:`rack_section` made once for several inputs of one shape)."""
    parts = [MAGIC, struct.pack(">i", len(partitions))]
    for topic, count in partitions.items():
        parts += [_str(topic), struct.pack(">i", count)]
    parts.append(struct.pack(">i", len(metadata)))
    for member_id, raw in metadata.items():
        parts += [_str(member_id), struct.pack(">i", len(raw)), raw]
    if rack_bytes is None:
        rack_bytes = rack_section(partitions, partition_racks)
    parts.append(rack_bytes)
    path.write_bytes(b"".join(parts))


def rack_section(partitions: Mapping[str, int], partition_racks: PartitionRacks | None) -> bytes:
    """The replica rack part of an input (``int32 0`` without racks)."""
    if not partition_racks:
        return struct.pack(">i", 0)
    sets: dict[tuple[str, ...], int] = {}
    index = array("h")
    for topic, count in partitions.items():
        for p in range(count):
            index.append(sets.setdefault(tuple(partition_racks.get((topic, p), ())), len(sets)))
    parts = [struct.pack(">i", len(sets))]
    for racks in sets:
        parts.append(struct.pack(">h", len(racks)))
        parts += [_str(r) for r in racks]
    index.byteswap()
    parts.append(index.tobytes())
    return b"".join(parts)


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = memoryview(data)
        self.at = 0

    def take(self, n: int) -> bytes:
        if n < 0 or self.at + n > len(self.data):
            raise ValueError(f"truncated at byte {self.at} (wanted {n})")
        out = bytes(self.data[self.at : self.at + n])
        self.at += n
        return out

    def i16(self) -> int:
        value: int = struct.unpack(">h", self.take(2))[0]
        return value

    def i32(self) -> int:
        value: int = struct.unpack(">i", self.take(4))[0]
        return value

    def str(self) -> str:
        return self.take(self.i16()).decode()


def read_input(
    path: Path,
) -> tuple[dict[str, int], dict[str, bytes], dict[tuple[str, int], tuple[str, ...]] | None]:
    """The inverse of :func:`write_input` (used by the Python peers and the tests)."""
    partitions, metadata, compact = read_input_compact(path)
    if compact is None:
        return partitions, metadata, None
    sets, index = compact
    keys = [(topic, p) for topic, count in partitions.items() for p in range(count)]
    return partitions, metadata, dict(zip(keys, map(sets.__getitem__, index), strict=True))


def read_input_compact(
    path: Path,
) -> tuple[dict[str, int], dict[str, bytes], tuple[list[tuple[str, ...]], array[int]] | None]:
    """Like :func:`read_input`, with the replica racks as the file stores them: the rack
    sets and, per partition in topic order, the index of its set."""
    r = _Reader(path.read_bytes())
    if r.take(4) != MAGIC:
        raise ValueError(f"{path}: not a bench input")
    partitions = {r.str(): r.i32() for _ in range(r.i32())}
    metadata = {r.str(): r.take(r.i32()) for _ in range(r.i32())}
    n_sets = r.i32()
    if n_sets == 0:
        return partitions, metadata, None
    sets = [tuple(r.str() for _ in range(r.i16())) for _ in range(n_sets)]
    index = array("h", r.take(2 * sum(partitions.values())))
    index.byteswap()
    return partitions, metadata, (sets, index)


def write_output(path: Path, assignments: Mapping[str, bytes]) -> None:
    """Write every member's assignment bytes."""
    parts = [struct.pack(">i", len(assignments))]
    for member_id, raw in assignments.items():
        parts += [_str(member_id), struct.pack(">i", len(raw)), raw]
    path.write_bytes(b"".join(parts))


def read_output(path: Path) -> dict[str, bytes]:
    """Every member's assignment bytes, as a peer wrote them."""
    r = _Reader(path.read_bytes())
    out = {r.str(): r.take(r.i32()) for _ in range(r.i32())}
    if r.at != len(r.data):
        raise ValueError(f"{path}: {len(r.data) - r.at} bytes after the last member")
    return out
