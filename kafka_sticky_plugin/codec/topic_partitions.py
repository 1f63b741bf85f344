"""The ``[topic [partition]]`` array shared by every message of the consumer protocol.

Wire layout: an int32 count of topics, then per topic an int16-length UTF-8 name, an int32
count of partitions and that many int32 partitions.

Invariants: the writers emit the *canonical* form, topics in sorted order (``str`` order),
each once, with its distinct partitions sorted and no empty topic, so equal sets always
encode to the same bytes (a reordering alone must never look like a change). The reader
returns runs in wire order without de-duplicating, and tells whether the bytes it read were
canonical. A null array (count -1) reads as empty and is never canonical: writers write 0.

One reader (:func:`read_topic_runs`) and two writers of the same bytes: from pairs
(:func:`encode_topic_partitions`) and from a plan's dense global indices
(:meth:`DenseTopics.write`).
"""

from __future__ import annotations

import operator
import struct
from collections import Counter
from collections.abc import Iterable, Sequence
from itertools import accumulate, chain, islice, repeat

from ..errors import CodecError
from ._wire import MIN_INT32_SIZE, MIN_STRING_SIZE, Reader, Writer, int32s_bytes, string_bytes

__all__ = [
    "EMPTY_RUNS",
    "DenseTopics",
    "Interned",
    "TopicPartitionPair",
    "TopicRuns",
    "encode_topic_partitions",
    "read_topic_runs",
    "runs_pairs",
    "write_topic_partitions",
]

TopicPartitionPair = tuple[str, int]

_COUNT = struct.Struct(">i")
_ASSIGNMENT = "consumer protocol assignment"


def _increasing(items: Sequence[object]) -> bool:
    """Whether ``items`` are strictly increasing."""
    return all(map(operator.lt, items, islice(items, 1, None)))  # type: ignore[arg-type]


#: One array as runs, in wire order: ``(topics, lengths, partitions)``, run ``i`` being topic
#: ``topics[i]`` with the next ``lengths[i]`` values of the flat ``partitions``; ``lengths`` is
#: ``None`` exactly when every run holds one partition (no array: ``((), None, [])``). The
#: engine's ``OwnedRuns`` (:mod:`kafka_sticky_plugin.core.spec`): no tuple per partition.
TopicRuns = tuple[tuple[str, ...], list[int] | None, list[int]]

#: The runs of an empty array.
EMPTY_RUNS: TopicRuns = ((), None, [])


def runs_pairs(runs: TopicRuns) -> tuple[TopicPartitionPair, ...]:
    """The flat ``(topic, partition)`` pairs ``runs`` stand for, in run order."""
    topics, lengths, partitions = runs
    if lengths is None:
        return tuple(zip(topics, partitions, strict=True))
    return tuple(zip(chain.from_iterable(map(repeat, topics, lengths)), partitions, strict=True))


class Interned:
    """What the reads of one batch share so that equal topic names (``names``) and equal
    tuples of them (``tuples``) are one object (the seam's Sharing); values never change."""

    __slots__ = ("names", "tuples")

    def __init__(self) -> None:
        self.names: dict[str, str] = {}
        self.tuples: dict[tuple[str, ...], tuple[str, ...]] = {}

    def topics(self, topics: list[str]) -> tuple[str, ...]:
        """``tuple(topics)``, the same object for equal tuples (names already shared)."""
        made = tuple(topics)
        return self.tuples.setdefault(made, made)


def read_topic_runs(
    reader: Reader, expected: str, shared: Interned | None = None
) -> tuple[TopicRuns, bytes | None]:
    """Read an array at ``reader``: its runs (one per topic element) and its bytes (count
    included) when they are canonical, else ``None``; errors name ``expected``."""
    start = reader.pos
    count = reader.nullable_count(MIN_STRING_SIZE + MIN_INT32_SIZE, expected)
    string, int32_array = reader.string, reader.int32_array
    topic_field, partitions_field = f"{expected} topic", f"{expected} partitions"
    names: dict[str, str] = {} if shared is None else shared.names
    topics: list[str] = []
    elements: list[tuple[int, ...]] = []
    for _ in range(count or 0):
        topics.append(string(topic_field))
        elements.append(int32_array(partitions_field))
    topics = list(map(names.setdefault, topics, topics))
    lengths = list(map(len, elements))
    flat = list(chain.from_iterable(elements))
    singles = len(flat) == len(topics) and all(lengths)
    canonical = (
        count is not None
        and all(lengths)
        and _increasing(topics)
        and (singles or all(map(_increasing, elements)))
    )
    runs: TopicRuns = (
        tuple(topics) if shared is None else shared.topics(topics),
        None if singles else lengths,
        flat,
    )
    return runs, reader.data[start : reader.pos] if canonical else None


def _grouped(
    pairs: Iterable[TopicPartitionPair], what: str, expected: str
) -> list[tuple[str, list[int]]]:
    """The canonical grouping of any pairs: topics sorted, each with its distinct
    partitions sorted; a :class:`CodecError` (offset 0) for anything but ``(str, int)``."""
    by_topic: dict[str, set[int]] = {}
    try:
        for topic, partition in pairs:
            if type(topic) is not str or type(partition) is not int:
                raise TypeError(f"got ({topic!r}, {partition!r})")
            by_topic.setdefault(topic, set()).add(partition)
    except (TypeError, ValueError) as exc:
        raise CodecError(what, f"{expected} as (str, int) pairs ({exc})", 0) from None
    return [(topic, sorted(by_topic[topic])) for topic in sorted(by_topic)]


def _group_bytes(topic: str, partitions: Sequence[int], what: str, expected: str) -> bytes:
    """One ``topic, [partitions]`` element (errors at offset 0)."""
    return (
        string_bytes(topic, what, f"{expected} topic", 0)
        + _COUNT.pack(len(partitions))
        + int32s_bytes(partitions, what, f"{expected} partitions of {topic!r}", 0)
    )


def encode_topic_partitions(pairs: Iterable[TopicPartitionPair], what: str, expected: str) -> bytes:
    """The canonical bytes of ``pairs`` (count included). Errors report offset 0 (the start
    of these bytes)."""
    grouped = _grouped(pairs, what, expected)
    chunks = [_COUNT.pack(len(grouped))]
    chunks.extend(_group_bytes(topic, partitions, what, expected) for topic, partitions in grouped)
    return b"".join(chunks)


def write_topic_partitions(
    writer: Writer, pairs: Iterable[TopicPartitionPair], expected: str
) -> None:
    """Write ``pairs`` in the canonical form; an unencodable value raises
    :class:`CodecError` at the offset where the array starts."""
    try:
        chunk = encode_topic_partitions(pairs, writer.what, expected)
    except CodecError as exc:
        raise CodecError(exc.what, exc.expected, writer.size) from None
    writer.raw(chunk)


class DenseTopics:
    """The dense space of one plan: ``topics`` (strictly increasing names) and ``counts``
    (their partition counts) number every partition, topic ``t``'s partition ``p`` being the
    global index ``offsets[t] + p``; ``topic_of[q]`` is global index ``q``'s topic.
    :meth:`write` gives the canonical array of a set of global indices; each topic's name is
    encoded once, when first written."""

    __slots__ = ("_headers", "offsets", "topic_of", "topics", "total")

    def __init__(self, topics: Sequence[str], counts: Sequence[int]) -> None:
        self.topics = topics
        self.offsets = list(accumulate(counts, initial=0))
        self.total = self.offsets.pop()
        self.topic_of = list(chain.from_iterable(map(repeat, range(len(topics)), counts)))
        self._headers: list[bytes | None] = [None] * len(topics)

    def _header(self, t: int) -> bytes:
        """Topic ``t``'s name as written, remembered (a :class:`CodecError` at offset 0 if it
        cannot be written)."""
        header = self._headers[t] = string_bytes(
            self.topics[t], _ASSIGNMENT, "assigned partitions topic", 0
        )
        return header

    def write(self, indices: Sequence[int]) -> bytes:
        """The canonical array (count included) of the partitions at ``indices`` (strictly
        increasing global indices): the bytes of :func:`encode_topic_partitions` of their
        ``(topic, partition)`` pairs. A :class:`CodecError` (offset 0) for a topic name that
        cannot be written; a ``ValueError`` when ``indices`` are not strictly increasing
        indices of the space.

        Ascending indices list their topics in ascending order, so the topics' partitions
        follow one another: all the partitions are packed at once, and each topic's element
        is its name, its count and its stretch of those bytes."""
        if indices and (indices[0] < 0 or indices[-1] >= self.total or not _increasing(indices)):
            raise ValueError("plan indices must be strictly increasing indices of the topics")
        topics = list(map(self.topic_of.__getitem__, indices))
        partitions = map(operator.sub, indices, map(self.offsets.__getitem__, topics))
        packed = struct.pack(f">{len(topics)}i", *partitions)
        sizes = Counter(topics)  # each topic's number of partitions, in ascending topic order
        headers = self._headers
        chunks = [_COUNT.pack(len(sizes))]
        start = 0
        for t, size in sizes.items():
            end = start + 4 * size
            chunks += (headers[t] or self._header(t), _COUNT.pack(size), packed[start:end])
            start = end
        return b"".join(chunks)
