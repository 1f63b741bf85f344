"""User data of the ``sticky`` and ``cooperative-sticky`` assignors.

Sticky user data (Java's ``StickyAssignor``, librdkafka's sticky and cooperative-sticky),
with *no* version header::

    v0  previous_assignment [topic string, partitions [int32]]          (KIP-54, Kafka 0.11)
    v1  previous_assignment [topic string, partitions [int32]], generation int32
                                                                         (KIP-341, Kafka 2.3)

A v0 reader that meets v1 bytes reads the assignment and ignores the trailing generation
(the forward-compatibility path of KIP-341); a v1 reader tells them apart by length, which
is what :func:`decode_sticky_user_data` does: it reads the array once, then it is v1 when
exactly 4 bytes (the generation) follow, v0 when none do. Empty user data (``b""``, which
Java reads as "no history") decodes as no partitions and no generation.

Cooperative user data (Java's ``CooperativeStickyAssignor``, for leaders that only read
subscription v1 and so cannot see the v2 generation field)::

    v0  generation int32                                                 (KIP-429, Kafka 2.4)

Trailing bytes after the generation are ignored (Java's reader takes the first int32 only).

A generation of -1 means "none" on the wire; any other negative generation is read as
``None`` too (a generation is never negative); ``None`` on encode writes -1 in cooperative
user data and selects sticky v0 (no generation field) in sticky user data.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..errors import CodecError
from ._wire import INT32_MAX, Reader, Writer
from .topic_partitions import TopicPartitionPair, read_topic_partitions, write_topic_partitions

__all__ = [
    "decode_cooperative_user_data",
    "decode_sticky_user_data",
    "encode_cooperative_user_data",
    "encode_sticky_user_data",
    "read_user_data_claim",
]

_STICKY = "sticky assignor user data"
_COOPERATIVE = "cooperative-sticky assignor user data"


def _generation_or_none(value: int) -> int | None:
    return value if value >= 0 else None


def _check_generation(generation: int | None, what: str) -> None:
    if generation is None:
        return
    if isinstance(generation, bool) or not isinstance(generation, int):
        raise CodecError(what, f"generation as int or None, got {generation!r}", 0)
    if not -1 <= generation <= INT32_MAX:
        raise CodecError(what, f"generation in [-1, {INT32_MAX}], got {generation}", 0)


def encode_sticky_user_data(
    partitions: Iterable[TopicPartitionPair], generation: int | None
) -> bytes:
    """Java's sticky user data: v1 with ``generation``, v0 when it is ``None`` (or -1).

    Topics are written sorted, each with its distinct partitions sorted.
    """
    _check_generation(generation, _STICKY)
    writer = Writer(_STICKY)
    write_topic_partitions(writer, partitions, "previous assignment")
    if generation is not None and generation >= 0:
        writer.int32(generation, "generation")
    return writer.getvalue()


def decode_sticky_user_data(
    data: bytes | bytearray | memoryview,
) -> tuple[list[TopicPartitionPair], int | None]:
    """Decode sticky user data: ``(previous assignment in wire order, generation or None)``.

    One read of the array serves both versions (see the module docstring): v1 when exactly
    4 bytes follow it, v0 when none do; anything else is a
    :class:`~kafka_sticky_plugin.errors.CodecError` (an error inside the array is reported
    as the v0 reading's, at its offset).
    """
    if not data:
        return [], None
    reader = Reader(data, _STICKY + " v0")
    partitions, _ = read_topic_partitions(reader, "previous assignment")
    left = reader.remaining
    if left == 4:
        return partitions, _generation_or_none(reader.int32("generation"))
    if left:
        raise CodecError(reader.what, f"end of data ({left} bytes left)", reader.offset)
    return partitions, None


def encode_cooperative_user_data(generation: int | None) -> bytes:
    """Java's cooperative-sticky user data: the int32 generation, -1 for ``None``."""
    _check_generation(generation, _COOPERATIVE)
    writer = Writer(_COOPERATIVE)
    writer.int32(-1 if generation is None else generation, "generation")
    return writer.getvalue()


def decode_cooperative_user_data(data: bytes | bytearray | memoryview) -> int | None:
    """Decode cooperative-sticky user data: the leading int32 generation (negative: ``None``).

    Bytes after it are ignored, as Java's ``CooperativeStickyAssignor`` does (it reads one
    int and stops: a later version may append fields). Fewer than 4 bytes is a
    :class:`~kafka_sticky_plugin.errors.CodecError` (Java reads that as "no generation"; the
    leader treats a decode error the same way).
    """
    reader = Reader(data, _COOPERATIVE)
    return _generation_or_none(reader.int32("generation"))


def read_user_data_claim(
    user_data: bytes | None, *, cooperative: bool
) -> tuple[tuple[TopicPartitionPair, ...], int]:
    """``(previous partitions in wire order, generation or -1)`` claimed by a member's
    subscription user data.

    ``cooperative``: 4 bytes are cooperative user data (Java's int32 generation); anything
    else, and any user data under ``sticky``, is read as sticky user data (v1, then v0; what
    librdkafka's cooperative-sticky sends too). Null or empty user data claims nothing (-1).
    Raises :class:`CodecError` when the user data cannot be read (the caller treats that as
    "no history").
    """
    if not user_data:
        return (), -1
    if cooperative and len(user_data) == 4:
        generation = decode_cooperative_user_data(user_data)
        return (), -1 if generation is None else generation
    partitions, decoded = decode_sticky_user_data(user_data)
    return tuple(partitions), -1 if decoded is None else decoded
