"""The ``[topic [partition]]`` array shared by every message of the consumer protocol.

Wire layout: an int32 count of topics, then per topic an int16-length UTF-8 name, an int32
count of partitions and that many int32 partitions.

Invariants: the writer emits the *canonical* form, topics in sorted order (``str`` order),
each once, with its distinct partitions sorted and no empty topic, so equal sets always
encode to the same bytes (a reordering alone must never look like a change). The reader
returns runs in wire order without de-duplicating, and tells whether the bytes it read were
canonical. A null array (count -1) reads as empty and is never canonical: writers write 0.

One reader (:func:`read_topic_runs`) and one writer (:class:`ArrayWriter`, of canonical runs,
which :func:`write_topic_partitions` makes from pairs and :meth:`DenseTopics.runs` from a
plan's dense global indices).
"""

from __future__ import annotations

import operator
import struct
from array import array
from collections import Counter
from collections.abc import Iterable, Sequence
from itertools import accumulate, chain, islice, repeat
from typing import NoReturn

from ..errors import CodecError
from ._wire import MIN_INT32_SIZE, MIN_STRING_SIZE, Reader, Writer, string_bytes

__all__ = [
    "EMPTY_RUNS",
    "ArrayWriter",
    "CanonicalRuns",
    "DenseTopics",
    "Interned",
    "TopicPartitionPair",
    "TopicRuns",
    "read_topic_runs",
    "runs_pairs",
    "write_topic_partitions",
]

TopicPartitionPair = tuple[str, int]

_INT32 = struct.Struct(">i")


def _increasing(items: Sequence[object]) -> bool:
    """Whether ``items`` are strictly increasing."""
    return all(map(operator.lt, items, islice(items, 1, None)))  # type: ignore[arg-type]


#: One array as runs, in wire order: ``(topics, lengths, partitions)``, run ``i`` being topic
#: ``topics[i]`` with the next ``lengths[i]`` values of the flat ``partitions``, an
#: ``array("i")`` of the int32s as read; ``lengths`` is ``None`` exactly when every run
#: holds one partition (no array: ``((), None, array("i"))``). The engine's ``OwnedRuns``
#: (:mod:`kafka_sticky_plugin.core.spec`): no Python object per partition.
TopicRuns = tuple[tuple[str, ...], list[int] | None, "array[int]"]

#: The runs of an empty array.
EMPTY_RUNS: TopicRuns = ((), None, array("i"))


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
        """``tuple(topics)`` of the shared names, the same object for equal tuples."""
        made = tuple(map(self.names.setdefault, topics, topics))
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
    topics: list[str] = []
    elements: list[array[int]] = []
    flat = array("i")
    for _ in range(count or 0):
        topics.append(string(topic_field))
        elements.append(int32_array(partitions_field))
        flat.extend(elements[-1])
    lengths = list(map(len, elements))
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


#: An array's content in canonical form, as :class:`ArrayWriter` writes it: ``(sizes,
#: partitions)``, ``sizes`` mapping topic ``t`` (an index into the writer's topics) to how
#: many (at least one) of the next values of ``partitions`` are its own, in ascending ``t``;
#: each topic's partitions strictly increasing.
CanonicalRuns = tuple[dict[int, int], tuple[int, ...]]


class ArrayWriter:
    """The one writer of the array: of canonical runs over ``topics``, each topic's name
    encoded once, when first written. A value that cannot be written is a
    :class:`CodecError` (``what``, ``expected``) at ``offset``, where the array starts in its
    message, naming the first one topic by topic (its name, then its partitions)."""

    __slots__ = ("_headers", "expected", "offset", "topics", "what")

    def __init__(self, topics: Sequence[str], what: str, expected: str, offset: int) -> None:
        self.topics = topics
        self.what, self.expected, self.offset = what, expected, offset
        self._headers: list[bytes | None] = [None] * len(topics)

    def _header(self, t: int) -> bytes:
        """Topic ``t``'s name as written, remembered."""
        header = self._headers[t] = string_bytes(
            self.topics[t], self.what, f"{self.expected} topic", self.offset
        )
        return header

    def write(self, runs: CanonicalRuns) -> bytes:
        """The array (count included) of ``runs``: per topic its name, its count and its
        stretch of the partitions, all of which are packed at once."""
        sizes, partitions = runs
        try:
            packed = struct.pack(f">{len(partitions)}i", *partitions)
        except struct.error:  # a partition that is not an int32
            self._raise_first_error(runs)
        headers = self._headers
        chunks = [_INT32.pack(len(sizes))]
        start = 0
        for t, size in sizes.items():
            end = start + 4 * size
            chunks += (headers[t] or self._header(t), _INT32.pack(size), packed[start:end])
            start = end
        return b"".join(chunks)

    def _raise_first_error(self, runs: CanonicalRuns) -> NoReturn:
        """Raise the error of the first value of ``runs`` that cannot be written."""
        sizes, partitions = runs
        start = 0
        for t, size in sizes.items():
            self._header(t)
            for value in partitions[start : start + size]:
                try:
                    _INT32.pack(value)
                except struct.error:
                    field = f"{self.expected} partitions of {self.topics[t]!r}"
                    wanted = f"{field} values that are int32, got {value!r}"
                    raise CodecError(self.what, wanted, self.offset) from None
            start += size
        raise AssertionError("no partition that is not an int32")  # pragma: no cover


def write_topic_partitions(
    writer: Writer, pairs: Iterable[TopicPartitionPair], expected: str
) -> None:
    """Write the array of any ``pairs``: their canonical runs (a :class:`CodecError` where the
    array starts for anything but ``(str, int)`` pairs)."""
    by_topic: dict[str, set[int]] = {}
    try:
        for topic, partition in pairs:
            if type(topic) is not str or type(partition) is not int:
                raise TypeError(f"got ({topic!r}, {partition!r})")
            by_topic.setdefault(topic, set()).add(partition)
    except (TypeError, ValueError) as exc:
        wanted = f"{expected} as (str, int) pairs ({exc})"
        raise CodecError(writer.what, wanted, writer.size) from None
    topics = sorted(by_topic)
    groups = [sorted(by_topic[topic]) for topic in topics]
    runs = dict(enumerate(map(len, groups))), tuple(chain.from_iterable(groups))
    writer.raw(ArrayWriter(topics, writer.what, expected, writer.size).write(runs))


class DenseTopics:
    """The dense space of one plan (:func:`~.seam.write_assignments`): topic ``t``'s partition
    ``p`` is the global index ``offsets[t] + p``; ``topic_of[q]`` is global index ``q``'s topic."""

    __slots__ = ("offsets", "topic_of", "total")

    def __init__(self, topics: Sequence[str], counts: Sequence[int]) -> None:
        self.offsets = list(accumulate(counts, initial=0))
        self.total = self.offsets.pop()
        self.topic_of = list(chain.from_iterable(map(repeat, range(len(topics)), counts)))

    def runs(self, indices: Sequence[int]) -> CanonicalRuns:
        """The canonical runs (over its topics) of the partitions at ``indices``; a
        ``ValueError`` when they are not strictly increasing indices of the space. Ascending
        indices list their topics in ascending order, so each topic's partitions follow one
        another."""
        if indices and (indices[0] < 0 or indices[-1] >= self.total or not _increasing(indices)):
            raise ValueError("plan indices must be strictly increasing indices of the topics")
        topic_of = list(map(self.topic_of.__getitem__, indices))
        partitions = tuple(map(operator.sub, indices, map(self.offsets.__getitem__, topic_of)))
        return Counter(topic_of), partitions
