"""User data of the ``sticky`` and ``cooperative-sticky`` assignors.

Sticky user data (Java's ``StickyAssignor``, librdkafka's sticky and cooperative-sticky),
with *no* version header::

    v0  previous_assignment [topic string, partitions [int32]]          (KIP-54, Kafka 0.11)
    v1  previous_assignment [topic string, partitions [int32]], generation int32
                                                                         (KIP-341, Kafka 2.3)

A v0 reader that meets v1 bytes ignores the trailing generation (KIP-341's forward
compatibility); a v1 reader tells them apart by length, as the readers here do: the array is
read once, then it is v1 when exactly 4 bytes follow, v0 when none do, else an error (an
error inside the array is the v0 reading's). Null or empty user data (Java: "no history")
reads as no partitions and no generation.

Cooperative user data (Java's ``CooperativeStickyAssignor``, for leaders that only read
subscription v1 and so cannot see the v2 generation field)::

    v0  generation int32                                                 (KIP-429, Kafka 2.4)

Trailing bytes after the generation are ignored (Java's reader takes the first int32 only).

A generation of -1 means "none" on the wire; any other negative generation is read as
``None`` too (a generation is never negative); ``None`` on encode writes -1, in sticky user
data as in cooperative user data. Sticky user data is always written as v1, as Java's
``StickyAssignor`` and librdkafka write it: a v1-only reader (aiokafka's own
``StickyPartitionAssignor``) drops v0 bytes as unreadable, and every v0 reader reads v1.
Writing v0 is kept for tests of old members (``version=0``).
"""

from __future__ import annotations

from collections.abc import Iterable

from ..errors import CodecError
from ._wire import INT32_MAX, Reader, Writer
from .topic_partitions import (
    EMPTY_RUNS,
    Interned,
    TopicPartitionPair,
    TopicRuns,
    read_topic_runs,
    runs_pairs,
    write_topic_partitions,
)

__all__ = [
    "UserDataClaim",
    "decode_cooperative_user_data",
    "decode_sticky_user_data",
    "encode_cooperative_user_data",
    "encode_sticky_user_data",
    "read_user_data_claim",
    "read_user_data_runs",
]

#: What a member's user data claims, as the leader reads it: ``(previous partitions as runs
#: in wire order, generation or -1, sorted)``; ``sorted``: the runs are canonical runs (the
#: array's bytes were canonical, or it held no topic), so the leader skips ``canonical_runs``.
UserDataClaim = tuple[TopicRuns, int, bool]

_STICKY = "sticky assignor user data"
_COOPERATIVE = "cooperative-sticky assignor user data"


def _check_generation(generation: int | None, what: str) -> None:
    if generation is None:
        return
    if isinstance(generation, bool) or not isinstance(generation, int):
        raise CodecError(what, f"generation as int or None, got {generation!r}", 0)
    if not -1 <= generation <= INT32_MAX:
        raise CodecError(what, f"generation in [-1, {INT32_MAX}], got {generation}", 0)


def encode_sticky_user_data(
    partitions: Iterable[TopicPartitionPair], generation: int | None, *, version: int = 1
) -> bytes:
    """Java's sticky user data: v1 with ``generation``, or v0 (no generation field: what
    Kafka 0.11-2.2 members wrote) when ``version=0``."""
    _check_generation(generation, _STICKY)
    if version not in (0, 1):
        raise CodecError(_STICKY, f"version 0 or 1, got {version!r}", 0)
    if version == 0 and generation is not None and generation >= 0:
        raise CodecError(_STICKY, f"no generation in v0, got {generation}", 0)
    writer = Writer(_STICKY)
    write_topic_partitions(writer, partitions, "previous assignment")
    if version == 1:
        writer.int32(-1 if generation is None else generation, "generation")
    return writer.getvalue()


def encode_cooperative_user_data(generation: int | None) -> bytes:
    """Java's cooperative-sticky user data: the int32 generation, -1 for ``None``."""
    _check_generation(generation, _COOPERATIVE)
    writer = Writer(_COOPERATIVE)
    writer.int32(-1 if generation is None else generation, "generation")
    return writer.getvalue()


def decode_cooperative_user_data(data: bytes | bytearray | memoryview) -> int | None:
    """Decode cooperative-sticky user data: the leading int32 generation (negative: ``None``;
    later bytes ignored). Fewer than 4 bytes is a :class:`CodecError` (Java reads that as
    "no generation"; the leader treats a decode error the same way)."""
    generation = Reader(data, _COOPERATIVE).int32("generation")
    return generation if generation >= 0 else None


def read_user_data_runs(
    user_data: bytes | None,
    *,
    cooperative: bool,
    shared: Interned | None = None,
    owned: tuple[TopicRuns, bytes | None, bytes] | None = None,
) -> UserDataClaim:
    """The :data:`UserDataClaim` of a member's user data: under ``cooperative`` exactly 4
    bytes are cooperative user data, anything else is sticky user data (see the module
    docstring). ``shared``: see :class:`~.topic_partitions.Interned`. ``owned``: the
    subscription's owned array as read, ``(runs, canonical bytes or None, bytes)``: sticky
    user data that starts with those bytes claims those very runs (equal bytes read as equal
    values) without reading them again (the seam's Sharing).
    """
    if not user_data:
        return EMPTY_RUNS, -1, True
    if cooperative and len(user_data) == 4:
        generation = decode_cooperative_user_data(user_data)
        return EMPTY_RUNS, -1 if generation is None else generation, True
    reader = Reader(user_data, _STICKY + " v0")
    if owned is not None and reader.data.startswith(owned[2]):
        runs, canonical_array = owned[0], owned[1]
        reader.pos = len(owned[2])
    else:
        runs, canonical_array = read_topic_runs(reader, "previous assignment", shared)
    sorted_runs = canonical_array is not None or not runs[0]
    left = len(reader.data) - reader.pos
    if left == 4:
        return runs, max(reader.int32("generation"), -1), sorted_runs
    if left:
        raise CodecError(reader.what, f"end of data ({left} bytes left)", reader.pos)
    return runs, -1, sorted_runs


def decode_sticky_user_data(
    data: bytes | bytearray | memoryview,
) -> tuple[list[TopicPartitionPair], int | None]:
    """Decode sticky user data: ``(previous assignment in wire order, generation or None)``
    (:func:`read_user_data_runs` with the runs as pairs)."""
    runs, generation, _ = read_user_data_runs(bytes(data), cooperative=False)
    return list(runs_pairs(runs)), None if generation == -1 else generation


def read_user_data_claim(
    user_data: bytes | None, *, cooperative: bool
) -> tuple[tuple[TopicPartitionPair, ...], int]:
    """:func:`read_user_data_runs` with the claim as flat ``(topic, partition)`` pairs."""
    runs, generation, _ = read_user_data_runs(user_data, cooperative=cooperative)
    return runs_pairs(runs), generation
