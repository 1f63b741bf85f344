"""The ``[topic [partition]]`` array shared by every message of the consumer protocol.

Invariants: the writers emit topics in sorted order, each once, with its distinct partitions
sorted and no empty topic, so two equal sets always encode to the same bytes (a reordering
alone must never look like a change); this is the *canonical* form. The readers return the
pairs in wire order, flattened, without de-duplicating (that is the reader's policy, not the
wire's), and can tell whether the bytes they read were canonical.

Speed: a leader encodes up to a million pairs per rebalance, so the writer works on the sorted
lists the engine returns in one linear pass, caches each topic's encoded header in a
:class:`TopicHeaders` (one per batch, never module-wide) and packs one-partition groups with a
precompiled struct.
"""

from __future__ import annotations

import operator
import struct
from collections.abc import Iterable, Sequence
from itertools import chain, groupby, islice
from typing import Any

from ..errors import CodecError
from ._wire import INT16_MAX, INT32_MAX, INT32_MIN, Reader, Writer

__all__ = [
    "TopicHeaders",
    "TopicPartitionPair",
    "encode_topic_partitions",
    "read_topic_partitions",
    "read_topic_partitions_block",
    "write_topic_partitions",
]

TopicPartitionPair = tuple[str, int]

_COUNT = struct.Struct(">i")
_ONE_PARTITION = struct.Struct(">ii")  # a group of one: count 1, then the partition
_FIRST = operator.itemgetter(0)
_SECOND = operator.itemgetter(1)


class TopicHeaders:
    """Per-batch cache of encoded pieces: ``int16 length + UTF-8 name`` per topic and
    ``int32 1, int32 partition`` per partition number (a topic holding one partition)."""

    __slots__ = ("_cache", "_ones")

    def __init__(self) -> None:
        self._cache: dict[str, bytes] = {}
        self._ones: dict[int, bytes] = {}

    def get(self, topic: str, what: str, expected: str) -> bytes:
        """The encoded header of ``topic``; a :class:`CodecError` if it cannot be written."""
        header = self._cache.get(topic)
        if header is None:
            if not isinstance(topic, str):
                raise CodecError(what, f"{expected} topic as a str, got {topic!r}", 0)
            raw = topic.encode("utf-8")
            if len(raw) > INT16_MAX:
                raise CodecError(
                    what, f"{expected} topic of at most {INT16_MAX} bytes, got {len(raw)}", 0
                )
            header = struct.pack(">h", len(raw)) + raw
            self._cache[topic] = header
        return header

    def singles(
        self, topics: Sequence[str], partitions: Sequence[int], what: str, expected: str
    ) -> bytes:
        """``topic, [partition]`` groups for parallel sequences, without the count.

        Every lookup and concatenation runs in C (``map``), which is what makes a leader's
        encode of a million one-partition groups cheap.
        """
        cache, ones = self._cache, self._ones
        if not set(map(type, partitions)) <= {int}:
            bad = next(p for p in partitions if type(p) is not int)
            raise CodecError(what, f"{expected} partition as int32, got {bad!r}", 0)
        for topic in set(topics).difference(cache):
            self.get(topic, what, expected)
        for partition in set(partitions).difference(ones):
            try:
                ones[partition] = _ONE_PARTITION.pack(1, partition)
            except struct.error:
                raise CodecError(
                    what, f"{expected} partition as int32, got {partition!r}", 0
                ) from None
        return b"".join(
            chain.from_iterable(
                zip(map(cache.__getitem__, topics), map(ones.__getitem__, partitions), strict=True)
            )
        )


def _group_unsorted(
    pairs: Iterable[TopicPartitionPair], what: str = "pairs", expected: str = "pairs"
) -> list[tuple[str, list[int]]]:
    """The canonical grouping of any pairs (the slow path: types checked one by one)."""
    by_topic: dict[str, set[int]] = {}
    try:
        for topic, partition in pairs:
            if type(topic) is not str or type(partition) is not int:
                raise TypeError(f"got ({topic!r}, {partition!r})")
            by_topic.setdefault(topic, set()).add(partition)
        return [(topic, sorted(by_topic[topic])) for topic in sorted(by_topic)]
    except (TypeError, ValueError) as exc:
        raise CodecError(what, f"{expected} as (str, int) pairs ({exc})", 0) from None


def _pack_group(partitions: Sequence[int], what: str, expected: str, topic: str) -> bytes:
    try:
        if not set(map(type, partitions)) <= {int}:
            raise struct.error("not an int")
        if len(partitions) == 1:
            return _ONE_PARTITION.pack(1, partitions[0])
        return struct.pack(f">i{len(partitions)}i", len(partitions), *partitions)
    except struct.error:
        bad = next(
            (p for p in partitions if type(p) is not int or not INT32_MIN <= p <= INT32_MAX),
            partitions,
        )
        raise CodecError(
            what, f"{expected} partitions of {topic!r} as int32, got {bad!r}", 0
        ) from None


def _strictly_increasing(items: Sequence[Any]) -> bool:
    return all(map(operator.lt, items, islice(items, 1, None)))


def encode_topic_partitions(
    pairs: Iterable[TopicPartitionPair],
    what: str,
    expected: str,
    headers: TopicHeaders | None = None,
) -> bytes:
    """The canonical bytes of ``pairs`` (count included). Errors report offset 0 (the start
    of these bytes).

    Fast paths for a strictly increasing list (the engine's plans): one partition per topic
    is encoded by :meth:`TopicHeaders.singles`; otherwise :func:`itertools.groupby`. Anything
    else is set-sorted first.
    """
    headers = headers if headers is not None else TopicHeaders()
    items = pairs if isinstance(pairs, (list, tuple)) else list(pairs)
    if not items:
        return _COUNT.pack(0)
    try:
        columns = list(zip(*items, strict=True))
    except (TypeError, ValueError):
        columns = []
    if len(columns) == 2:
        topics, partitions = columns
        try:
            if _strictly_increasing(topics):
                # Strictly increasing topics: one partition per topic, already in order.
                body = headers.singles(topics, partitions, what, expected)
                return _COUNT.pack(len(topics)) + body
            if _strictly_increasing(items):
                grouped = [
                    (topic, list(map(_SECOND, group)))
                    for topic, group in groupby(items, key=_FIRST)
                ]
                return _encode_grouped(grouped, what, expected, headers)
        except TypeError:
            pass  # unorderable or unhashable values: the general path reports them
    return _encode_grouped(_group_unsorted(items, what, expected), what, expected, headers)


def _encode_grouped(
    grouped: Sequence[tuple[str, Sequence[int]]], what: str, expected: str, headers: TopicHeaders
) -> bytes:
    chunks = [_COUNT.pack(len(grouped))]
    append = chunks.append
    for topic, partitions in grouped:
        append(headers.get(topic, what, expected))
        append(_pack_group(partitions, what, expected, topic))
    return b"".join(chunks)


def write_topic_partitions(
    writer: Writer,
    pairs: Iterable[TopicPartitionPair],
    expected: str,
    headers: TopicHeaders | None = None,
) -> None:
    """Write ``pairs`` in the canonical form (see the module invariants).

    An unencodable value raises :class:`CodecError` at the offset where the array starts.
    """
    try:
        chunk = encode_topic_partitions(pairs, writer.what, expected, headers)
    except CodecError as exc:
        raise CodecError(exc.what, exc.expected, writer.size) from None
    writer.raw(chunk)


def read_topic_partitions(reader: Reader, expected: str) -> list[TopicPartitionPair]:
    """Read a ``[topic [partition]]`` array as flat ``(topic, partition)`` pairs."""
    return reader.topic_partition_pairs(expected)[0]


def read_topic_partitions_block(
    reader: Reader, expected: str, names: dict[bytes, str] | None = None
) -> tuple[list[TopicPartitionPair], bytes | None]:
    """Like :func:`read_topic_partitions`, plus the raw bytes read when they are canonical.

    The block is ``None`` when the writer did not use the canonical form (unsorted topics or
    partitions, a topic twice, an empty topic); equal canonical blocks mean equal pair lists.
    ``names`` interns topic names (see :meth:`Reader.topic_partition_pairs`).
    """
    start = reader.offset
    pairs, canonical = reader.topic_partition_pairs(expected, names)
    return pairs, reader.bytes_since(start) if canonical else None
