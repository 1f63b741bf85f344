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
) -> None:
    """Write one peer input: partition counts, every member's metadata, replica racks."""
    parts = [MAGIC, struct.pack(">i", len(partitions))]
    for topic, count in partitions.items():
        parts += [_str(topic), struct.pack(">i", count)]
    parts.append(struct.pack(">i", len(metadata)))
    for member_id, raw in metadata.items():
        parts += [_str(member_id), struct.pack(">i", len(raw)), raw]
    if not partition_racks:
        parts.append(struct.pack(">i", 0))
    else:
        sets: dict[tuple[str, ...], int] = {}
        index = array("h")
        for topic, count in partitions.items():
            for p in range(count):
                index.append(sets.setdefault(tuple(partition_racks.get((topic, p), ())), len(sets)))
        parts.append(struct.pack(">i", len(sets)))
        for racks in sets:
            parts.append(struct.pack(">h", len(racks)))
            parts += [_str(r) for r in racks]
        index.byteswap()
        parts.append(index.tobytes())
    path.write_bytes(b"".join(parts))


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
    racks: dict[tuple[str, int], tuple[str, ...]] = {}
    at = 0
    for topic, count in partitions.items():
        for p in range(count):
            racks[(topic, p)] = sets[index[at]]
            at += 1
    return partitions, metadata, racks


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
