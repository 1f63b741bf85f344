"""The ``[topic [partition]]`` array shared by every message of the consumer protocol.

Invariants: the writers emit topics in sorted order, each once, with its distinct partitions
sorted and no empty topic, so two equal sets always encode to the same bytes (a reordering
alone must never look like a change); this is the *canonical* form. The readers return the
pairs in wire order, flattened, without de-duplicating (that is the reader's policy, not the
wire's), and can tell whether the bytes they read were canonical. The run readers
(:func:`topic_partition_runs`, :func:`read_topic_partition_runs`) return the same pairs as
per-topic runs (:data:`TopicRuns`), with the same checks, errors and verdict: what a leader
reads, a million claims that never become tuples.

Speed: a leader encodes up to a million pairs per rebalance, so the writer works on the sorted
lists the engine returns in one linear pass, caches each topic's encoded header in a
:class:`TopicHeaders` (one per batch, never module-wide) and packs one-partition groups with a
precompiled struct.
"""

from __future__ import annotations

import itertools
import operator
import re
import struct
from collections.abc import Callable, Iterable, Sequence
from itertools import accumulate, chain, compress, islice, repeat
from typing import Any, TypeVar

from ..errors import CodecError
from ._wire import (
    INT16_MAX,
    INT32_MAX,
    INT32_MIN,
    MIN_INT32_SIZE,
    MIN_STRING_SIZE,
    Reader,
    Writer,
)

__all__ = [
    "ArrayMemos",
    "OneEachLayouts",
    "TopicHeaders",
    "TopicPartitionPair",
    "TopicRuns",
    "encode_topic_partitions",
    "read_topic_partition_runs",
    "read_topic_partitions",
    "read_topic_partitions_block",
    "topic_partition_pairs",
    "topic_partition_runs",
    "write_topic_partitions",
]

TopicPartitionPair = tuple[str, int]
_Key = TypeVar("_Key")

#: One ``[topic [partition]]`` array as runs, in wire order: ``(topics, lengths, partitions)``,
#: run ``i`` being topic ``topics[i]`` with the next ``lengths[i]`` values of the flat
#: ``partitions``; ``lengths`` is ``None`` when every run holds exactly one partition (then
#: ``partitions[i]`` belongs to ``topics[i]``).
TopicRuns = tuple[tuple[str, ...], Sequence[int] | None, Sequence[int]]

#: The runs of an empty array.
EMPTY_RUNS: TopicRuns = ((), None, ())
#: The bytes of an empty array (count 0).
_EMPTY_ARRAY = bytes(4)
#: The bytes of a null array (count -1): read as empty, its canonical block is
#: :data:`_EMPTY_ARRAY` (an assignment's partition array is not nullable, so a block handed
#: back to its sender must never be a null array).
_NULL_ARRAY = b"\xff\xff\xff\xff"

_INT16 = struct.Struct(">h")  # a topic name's length
_COUNT = struct.Struct(">i")
_ONE_PARTITION = struct.Struct(">ii")  # a group of one: count 1, then the partition
_FIRST = operator.itemgetter(0)


class _OneEach:
    """The byte layout of a canonical array whose every topic holds exactly one partition:
    ``topics`` in order, each group's ``fixed`` bytes (``int16 length, name, int32 count 1``)
    and a ``struct`` reading or writing ``(fixed bytes, partition)`` per group."""

    __slots__ = ("fixed", "struct", "topics")

    def __init__(self, topics: tuple[str, ...], fixed: tuple[bytes, ...]) -> None:
        self.topics = topics
        self.fixed = fixed
        self.struct = struct.Struct(">" + "".join(f"{len(f)}si" for f in fixed))


class _RunLayout:
    """The byte layout of an array of runs of any lengths, learned from one read the general
    way: ``topics`` and ``lengths`` in wire order, each run's ``fixed`` bytes (``int16
    length, name, int32 count``) and a ``struct`` reading ``(fixed bytes, partitions...)``
    per run; ``fixed_of`` picks the fixed bytes out of its values and ``mask`` marks the
    partitions. ``sorted_topics``: topics strictly increasing (the canonical verdict then
    rests on the partitions of each run alone); ``starts``: the index, in the flat
    partitions, of every run's first partition but the first run's (the only places where a
    partition may be no larger than the one before it in a canonical array)."""

    __slots__ = (
        "fixed",
        "fixed_of",
        "lengths",
        "mask",
        "sorted_topics",
        "starts",
        "struct",
        "topics",
    )

    def __init__(self, topics: tuple[str, ...], lengths: tuple[int, ...], block: bytes) -> None:
        self.topics = topics
        self.lengths = lengths
        fixed: list[bytes] = []
        pos = _COUNT.size
        for n in lengths:
            size = 2 + (block[pos] << 8 | block[pos + 1]) + _COUNT.size
            fixed.append(block[pos : pos + size])
            pos += size + 4 * n
        self.fixed = tuple(fixed)
        self.struct = struct.Struct(
            ">" + "".join(f"{len(f)}s{n}i" for f, n in zip(fixed, lengths, strict=True))
        )
        places = list(accumulate((1 + n for n in lengths[:-1]), initial=0))
        self.fixed_of = operator.itemgetter(*places)
        mask = [True] * (len(lengths) + sum(lengths))
        for place in places:
            mask[place] = False
        self.mask = tuple(mask)
        self.sorted_topics = _strictly_increasing(topics)
        self.starts = frozenset(accumulate(lengths))

    def canonical(self, partitions: Sequence[int]) -> bool:
        """The general reader's verdict on an array of this layout holding ``partitions``
        (every run is non-empty: its count is fixed and at least one)."""
        if not self.sorted_topics:
            return False
        drops = compress(
            itertools.count(1), map(operator.ge, partitions, islice(partitions, 1, None))
        )
        return self.starts.issuperset(drops)


def seen_before(cache: dict[_Key, Any], key: _Key, capacity: int) -> bool:
    """Whether ``key`` is already in ``cache``; if not, it is remembered with the value
    ``None`` (the oldest entries dropped past ``capacity``), so that the caller builds what
    the key stands for only the second time it comes (a one-off costs nothing to remember)."""
    if key in cache:
        return True
    cache[key] = None
    while len(cache) > capacity:
        del cache[next(iter(cache))]
    return False


class TopicHeaders:
    """Per-batch cache of encoded pieces: ``int16 length + UTF-8 name`` per topic,
    ``int32 1, int32 partition`` per partition number (a topic holding one partition), and
    the packing struct of each sequence of one-partition topics seen twice (members of a
    large group are typically given one partition of each of the same topics)."""

    __slots__ = ("_cache", "_ones", "_structs")

    #: Topic sequences remembered for :meth:`singles` (the oldest is dropped first).
    CAPACITY = 64
    #: Sequences with fewer topics are not worth a struct.
    MIN_GROUPS = 16

    def __init__(self) -> None:
        self._cache: dict[str, bytes] = {}
        self._ones: dict[int, bytes] = {}
        self._structs: dict[tuple[str, ...], _OneEach | None] = {}

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
        if len(topics) >= self.MIN_GROUPS:
            layout = self._packer(tuple(topics), what, expected)
            if layout is not None:
                try:
                    return layout.struct.pack(
                        *chain.from_iterable(zip(layout.fixed, partitions, strict=True))
                    )
                except struct.error:
                    pass  # a partition outside int32: the general path below reports it
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

    def one_each(self, topics: tuple[str, ...], what: str, expected: str) -> _OneEach:
        """The layout of ``topics`` holding one partition each (names checked as by
        :meth:`get`)."""
        one = _COUNT.pack(1)
        return _OneEach(topics, tuple(self.get(topic, what, expected) + one for topic in topics))

    def _packer(self, topics: tuple[str, ...], what: str, expected: str) -> _OneEach | None:
        """The layout packing ``topics``, built the second time ``topics`` is seen (``None``
        the first time)."""
        structs = self._structs
        if not seen_before(structs, topics, self.CAPACITY):
            return None
        layout = structs[topics]
        if layout is None:
            layout = structs[topics] = self.one_each(topics, what, expected)
        return layout


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
                return _encode_runs(topics, partitions, what, expected, headers)
        except TypeError:
            pass  # unorderable or unhashable values: the general path reports them
    return _encode_grouped(_group_unsorted(items, what, expected), what, expected, headers)


def _encode_runs(
    topics: Sequence[str],
    partitions: Sequence[int],
    what: str,
    expected: str,
    headers: TopicHeaders,
) -> bytes:
    """Encode strictly increasing pairs given as columns: each topic's partitions are one run.

    Run starts and lengths are found in C (``compress``, ``map``); the stretches of
    one-partition runs between longer runs go through :meth:`TopicHeaders.singles` whole, and
    each longer run is packed at once. A member that holds one partition of most topics and a
    few of some (a receiver after a rebalance) so costs a few steps per *longer* run, not a
    step per topic.
    """
    n = len(topics)
    starts = [0, *compress(range(1, n), map(operator.ne, islice(topics, 1, None), topics))]
    ends = [*islice(starts, 1, None), n]
    longer = compress(
        zip(starts, ends, strict=True), map(operator.gt, map(operator.sub, ends, starts), repeat(1))
    )
    chunks = [_COUNT.pack(len(starts))]
    append = chunks.append
    done = 0
    for start, end in longer:
        if done < start:
            append(headers.singles(topics[done:start], partitions[done:start], what, expected))
        topic = topics[start]
        group = partitions[start:end]
        append(headers.get(topic, what, expected))
        append(_pack_group(group, what, expected, topic))
        done = end
    if done < n:
        append(headers.singles(topics[done:n], partitions[done:n], what, expected))
    return b"".join(chunks)


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


def topic_partition_pairs(
    reader: Reader, expected: str, names: dict[bytes, str] | None = None
) -> tuple[list[TopicPartitionPair], bool]:
    """Read ``[topic string, partitions [int32]]`` at ``reader`` as flat ``(topic, partition)``
    pairs, with the bounds checks of :class:`Reader` (errors name ``expected`` and the offset).

    Also tells whether the array was canonical: topics strictly increasing, partitions
    strictly increasing within each topic, no empty topic. ``names`` interns topic names
    by their raw bytes (pass one dict per batch: members share topic names, and equal
    strings that are the same object hash and compare faster downstream).

    The hot path of a leader (a million pairs per rebalance): one loop over
    :meth:`Reader.window` with the same checks as :meth:`Reader.string` and
    :meth:`Reader.int32_array`, and no tuple per one-partition topic.
    """
    count = reader.array_count(MIN_STRING_SIZE + MIN_INT32_SIZE, expected)
    data, pos = reader.window()
    end = len(data)
    names = {} if names is None else names
    unpack_int16 = _INT16.unpack_from
    unpack_count_first = _ONE_PARTITION.unpack_from
    unpack_from, lt = struct.unpack_from, operator.lt
    out: list[TopicPartitionPair] = []
    append, extend = out.append, out.extend
    canonical = True
    previous: str | None = None
    for _ in range(count):
        # Fast paths: a well-formed topic holding one or more partitions, with every
        # bound checked at once; anything else goes through _read_group's full checks.
        if end - pos >= 2:
            length = unpack_int16(data, pos)[0]
            after = pos + 2 + length
            if length >= 0 and end - after >= 8:
                n, first = unpack_count_first(data, after)
                if n == 1:
                    raw = data[pos + 2 : after]
                    topic = names.get(raw)
                    if topic is None:
                        topic = _intern(reader, raw, names, pos, expected)
                    if previous is not None and topic <= previous:
                        canonical = False
                    previous = topic
                    append((topic, first))
                    pos = after + 8
                    continue
                if n > 1 and end - after - 4 >= 4 * n:
                    raw = data[pos + 2 : after]
                    topic = names.get(raw)
                    if topic is None:
                        topic = _intern(reader, raw, names, pos, expected)
                    partitions = unpack_from(f">{n}i", data, after + 4)
                    extend(zip(repeat(topic), partitions))
                    if canonical and (
                        (previous is not None and topic <= previous)
                        or not all(map(lt, partitions, islice(partitions, 1, None)))
                    ):
                        canonical = False
                    previous = topic
                    pos = after + 4 + 4 * n
                    continue
        pos, topic, group_canonical = _read_group(reader, data, pos, names, expected, out)
        if not group_canonical or (previous is not None and topic <= previous):
            canonical = False
        previous = topic
    reader.seek(pos)
    return out, canonical


def _intern(reader: Reader, raw: bytes, names: dict[bytes, str], start: int, expected: str) -> str:
    """``raw`` decoded and remembered in ``names``; a :class:`CodecError` at ``start`` if it is
    not UTF-8."""
    try:
        topic = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise reader.fail_at(start, f"{expected} topic in UTF-8") from None
    names[raw] = topic
    return topic


def _read_group(
    reader: Reader,
    data: bytes,
    pos: int,
    names: dict[bytes, str],
    expected: str,
    out: list[TopicPartitionPair],
) -> tuple[int, str, bool]:
    """One ``topic, [partitions]`` element at ``pos`` of ``data`` (the reader's window) with
    every check; appends its pairs to ``out`` and returns ``(next offset, topic, partitions
    strictly increasing)``."""
    pos, topic, partitions = _read_group_values(reader, data, pos, names, expected)
    out.extend(zip(repeat(topic), partitions))
    return pos, topic, bool(partitions) and _strictly_increasing(partitions)


def _read_group_values(
    reader: Reader, data: bytes, pos: int, names: dict[bytes, str], expected: str
) -> tuple[int, str, tuple[int, ...]]:
    """One ``topic, [partitions]`` element at ``pos`` of ``data`` (the reader's window) with
    every check: ``(next offset, topic, its partitions in wire order)`` (a null array, count
    -1, reads as empty)."""
    end, start = len(data), pos
    if end - pos < 2:
        raise reader.fail_at(pos, f"{expected} topic length (2 bytes)")
    length = _INT16.unpack_from(data, pos)[0]
    pos += 2
    if length < 0 or end - pos < length:
        raise reader.fail_at(start, f"{expected} topic of {length} bytes ({end - pos} left)")
    raw = data[pos : pos + length]
    topic = names.get(raw)
    if topic is None:
        topic = _intern(reader, raw, names, start, expected)
    pos += length
    if end - pos < 4:
        raise reader.fail_at(pos, f"{expected} count (4 bytes)")
    n = _COUNT.unpack_from(data, pos)[0]
    if n == -1:
        n = 0
    if n < 0 or end - pos - 4 < 4 * n:
        raise reader.fail_at(pos, f"{expected} of {n} int32 values ({end - pos - 4} bytes left)")
    partitions: tuple[int, ...] = struct.unpack_from(f">{n}i", data, pos + 4)
    return pos + 4 + 4 * n, topic, partitions


class RunStructs:
    """Per-batch memo of the compiled structs :func:`topic_partition_runs` reads with: one
    per topic name length (``name, count, first partition``), one per partition count
    above one, and one :class:`_Segment` per ``(name length, partition count)`` met twice in
    a row, with how many segments this batch read and the runs they held (segments pay only
    where stretches are long: :meth:`segments_pay`). Create one per batch (never
    module-wide); each table keeps at most :attr:`CAPACITY` entries."""

    __slots__ = ("headers", "segment_runs", "segments", "segments_read", "strings", "values")

    CAPACITY = 256
    #: Segments read before their mean length decides whether arrays are still segmented.
    TRIAL_SEGMENTS = 32
    #: The mean runs per segment below which a batch stops reading segments.
    MIN_MEAN_SEGMENT = 12

    def __init__(self) -> None:
        self.headers: dict[int, Callable[[bytes, int], tuple[Any, ...]]] = {}
        self.values: dict[int, Callable[[bytes, int], tuple[Any, ...]]] = {}
        self.segments: dict[tuple[int, int], _Segment] = {}
        self.segments_read = 0
        self.segment_runs = 0
        #: the ``uniform`` table of :meth:`.Reader.string_array` (subscribed topic arrays)
        self.strings: dict[tuple[int, int], struct.Struct] = {}

    def header(self, length: int) -> Callable[[bytes, int], tuple[Any, ...]]:
        """``unpack_from`` of ``length`` name bytes, then the int32 count and the first
        int32 partition."""
        return self._cached(self.headers, length, f">{length}sii")

    def ints(self, n: int) -> Callable[[bytes, int], tuple[Any, ...]]:
        """``unpack_from`` of ``n`` int32 values."""
        return self._cached(self.values, n, f">{n}i")

    def segment(self, length: int, n: int) -> _Segment:
        """The :class:`_Segment` of runs with a ``length``-byte name and ``n`` partitions."""
        key = (length, n)
        found = self.segments.get(key)
        if found is None:
            found = _Segment(length, n)
            if len(self.segments) < self.CAPACITY:
                self.segments[key] = found
        return found

    def segments_pay(self) -> bool:
        """Whether to keep reading arrays by segments: until :attr:`TRIAL_SEGMENTS` have
        been read, then while they average :attr:`MIN_MEAN_SEGMENT` runs or more."""
        read = self.segments_read
        return read < self.TRIAL_SEGMENTS or self.segment_runs >= self.MIN_MEAN_SEGMENT * read

    def _cached(
        self, table: dict[int, Callable[[bytes, int], tuple[Any, ...]]], key: int, fmt: str
    ) -> Callable[[bytes, int], tuple[Any, ...]]:
        unpack = table.get(key)
        if unpack is None:
            unpack = struct.Struct(fmt).unpack_from
            if len(table) < self.CAPACITY:
                table[key] = unpack
        return unpack


class _Segment:
    """Consecutive runs of one shape, a ``length``-byte name and ``n`` partitions, read in C.

    ``match(data, pos)`` spans the longest stretch of such runs from ``pos`` (a regular
    expression whose fixed bytes are the int16 name length and the int32 count, every other
    byte free): each record it spans is a well-formed run of that shape, at the offset the
    run-by-run reader would reach, because a run's first six bytes fix its size.
    :meth:`values` unpacks records flat, ``stride`` values each (name, count, then the ``n``
    partitions); ``size`` is a record's byte size, ``n`` its partition count.
    """

    __slots__ = ("_chunks", "_record", "match", "n", "size", "stride")

    #: The largest struct unpacks ``2 ** CHUNK_BITS`` records at once.
    CHUNK_BITS = 8

    def __init__(self, length: int, n: int) -> None:
        fixed_name = re.escape(struct.pack(">h", length))
        fixed_count = re.escape(_COUNT.pack(n))
        record = b"%s.{%d}%s.{%d}" % (fixed_name, length, fixed_count, 4 * n)
        self.match = re.compile(b"(?:%s)*" % record, re.DOTALL).match
        self._record = f"2x{length}si{n}i"
        self.size = struct.calcsize(">" + self._record)
        self.stride = n + 2
        self.n = n
        #: entry ``j`` unpacks ``2 ** j`` records (built when first needed)
        self._chunks: list[Callable[[bytes, int], tuple[Any, ...]]] = []

    def values(self, data: bytes, pos: int, k: int) -> list[Any]:
        """The ``k`` records at ``pos`` of ``data`` (spanned by :attr:`match`), flattened:
        one struct call per power of two in ``k`` (and per further ``2 ** CHUNK_BITS``)."""
        out: list[Any] = []
        j = self.CHUNK_BITS
        while k:
            if k >> j:
                out.extend(self._chunk(j)(data, pos))
                pos += self.size << j
                k -= 1 << j
            else:
                j -= 1
        return out

    def _chunk(self, j: int) -> Callable[[bytes, int], tuple[Any, ...]]:
        chunks = self._chunks
        while len(chunks) <= j:
            chunks.append(struct.Struct(">" + self._record * (1 << len(chunks))).unpack_from)
        return chunks[j]


def _read_segment(
    reader: Reader,
    pos: int,
    limit: int,
    segment: _Segment,
    names: dict[bytes, str],
    expected: str,
    out: tuple[list[str], list[int], list[int]],
) -> tuple[int, int]:
    """Read up to ``limit`` consecutive runs of ``segment``'s shape at ``pos`` of the
    reader's window (at least the one there when the caller has found it well formed) into
    ``out`` (topics, lengths, flat partitions); return ``(runs read, next offset)``."""
    data, _ = reader.window()
    spanned = segment.match(data, pos)  # never None: the pattern matches the empty string
    k = min((spanned.end() - pos if spanned else 0) // segment.size, limit)
    if not k:
        return 0, pos
    stop = pos + k * segment.size
    values = segment.values(data, pos, k)
    stride = segment.stride
    raws = values[0::stride]
    found = list(map(names.get, raws))
    if None in found:
        for i, raw in enumerate(raws):
            if found[i] is None:
                found[i] = names.get(raw) or _intern(
                    reader, raw, names, pos + i * segment.size, expected
                )
    topics, lengths, flat = out
    topics.extend(found)  # type: ignore[arg-type]  # every None was replaced above
    n = segment.n
    lengths.extend(repeat(n, k))
    if n == 1:
        flat.extend(values[2::3])
    else:  # the partitions of each record: all but its first two values
        flat.extend(compress(values, itertools.cycle((False, False) + (True,) * n)))
    return k, stop


def topic_partition_runs(
    reader: Reader,
    expected: str,
    names: dict[bytes, str] | None = None,
    structs: RunStructs | None = None,
) -> tuple[TopicRuns, bool]:
    """:func:`topic_partition_pairs` as runs (:data:`TopicRuns`, wire order): the same
    checks, errors and canonical verdict, but no tuple per partition. Per topic, one struct
    call reads its name, count and first partition, a second its other partitions (the
    structs are ``structs``', one per batch); an array that opens with a long stretch of runs
    of one shape is read by :func:`_read_by_segments` instead. The canonical verdict is a
    few C-level passes over the flat partitions (:func:`_runs_canonical`)."""
    count = reader.array_count(MIN_STRING_SIZE + MIN_INT32_SIZE, expected)
    data, pos = reader.window()
    end = len(data)
    names = {} if names is None else names
    structs = RunStructs() if structs is None else structs
    topics: list[str] = []
    lengths: list[int] = []
    flat: list[int] = []
    if (
        count >= _SEGMENTED_ARRAYS
        and structs.segments_pay()
        and _opens_with_stretch(data, pos, structs)
    ):
        pos = _read_by_segments(reader, count, names, structs, expected, (topics, lengths, flat))
        return _finish_runs(reader, pos, topics, lengths, flat)
    headers, values = structs.headers, structs.values
    add_topic, add_length, add_one, add_many = (
        topics.append,
        lengths.append,
        flat.append,
        flat.extend,
    )
    # the header struct of the last name length read (topic names often share one length)
    last_length, header = 0, structs.header(0)
    for _ in range(count):
        # Fast path: a well-formed topic holding one or more partitions, every bound checked
        # at once; anything else goes through _read_group_values' full checks.
        if end - pos >= 2:
            length = data[pos] << 8 | data[pos + 1]  # int16, negative when >= 2**15
            after = pos + 2 + length
            if length < 0x8000 and end - after >= 8:
                if length != last_length:
                    last_length, header = length, headers.get(length) or structs.header(length)
                raw, n, first = header(data, pos + 2)
                if n == 1 or (n > 1 and end - after - 4 >= 4 * n):
                    topic = names.get(raw)
                    if topic is None:
                        topic = _intern(reader, raw, names, pos, expected)
                    add_topic(topic)
                    add_length(n)
                    if n == 1:
                        add_one(first)
                    else:
                        add_many((values.get(n) or structs.ints(n))(data, after + 4))
                    pos = after + 4 + 4 * n
                    continue
        pos, topic, partitions = _read_group_values(reader, data, pos, names, expected)
        add_topic(topic)
        add_length(len(partitions))
        add_many(partitions)
    return _finish_runs(reader, pos, topics, lengths, flat)


def _finish_runs(
    reader: Reader, pos: int, topics: list[str], lengths: list[int], flat: list[int]
) -> tuple[TopicRuns, bool]:
    """Leave ``reader`` at ``pos``, after the runs read; return them as :data:`TopicRuns`
    with their canonical verdict."""
    reader.seek(pos)
    canonical = _runs_canonical(topics, lengths, flat)
    one_each = len(flat) == len(lengths) and (not lengths or min(lengths) == 1)
    return (tuple(topics), None if one_each else lengths, flat), canonical


#: Arrays with fewer runs are always read one by one.
_SEGMENTED_ARRAYS = 32
#: The runs of one shape an array must open with to be read by segments: a segment's fixed
#: cost is that of several runs read one by one, so arrays whose shapes change every few
#: runs (partition counts that vary, as a receiver's after a rebalance) are not.
_OPENING_STRETCH = 8
#: Runs of one shape read one by one before the rest of their stretch is read as a segment.
_SEGMENT_AFTER = 2


def _opens_with_stretch(data: bytes, pos: int, structs: RunStructs) -> bool:
    """Whether the array body at ``pos`` opens with :data:`_OPENING_STRETCH` well-formed
    runs of one shape (that of its first run)."""
    if len(data) - pos < 6:
        return False
    length = data[pos] << 8 | data[pos + 1]
    n = int.from_bytes(data[pos + 2 + length : pos + 6 + length], "big", signed=True)
    if length >= 0x8000 or n < 1:
        return False
    segment = structs.segment(length, n)
    spanned = segment.match(data, pos)
    return spanned is not None and spanned.end() - pos >= _OPENING_STRETCH * segment.size


def _read_by_segments(
    reader: Reader,
    count: int,
    names: dict[bytes, str],
    structs: RunStructs,
    expected: str,
    out: tuple[list[str], list[int], list[int]],
) -> int:
    """Read ``count`` runs at the reader's offset into ``out`` (topics, lengths, flat
    partitions) and return the offset after them: as :func:`topic_partition_runs` does, except
    that the third run in a row of one shape starts a segment, the rest of its stretch read
    in C (:func:`_read_segment`)."""
    data, pos = reader.window()
    end = len(data)
    headers, values = structs.headers, structs.values
    topics, lengths, flat = out
    add_topic, add_length, add_one, add_many = (
        topics.append,
        lengths.append,
        flat.append,
        flat.extend,
    )
    last_length, header = 0, structs.header(0)
    # the shape of the last runs read on the fast path (-1: none) and how many runs in a
    # row before this one had it
    shape_length = shape_n = -1
    streak = 0
    done = segments = segment_runs = 0
    while done < count:
        if end - pos >= 2:
            length = data[pos] << 8 | data[pos + 1]
            after = pos + 2 + length
            if length < 0x8000 and end - after >= 8:
                if length != last_length:
                    last_length, header = length, headers.get(length) or structs.header(length)
                raw, n, first = header(data, pos + 2)
                if n == 1 or (n > 1 and end - after - 4 >= 4 * n):
                    if n != shape_n or length != shape_length:
                        shape_length, shape_n, streak = length, n, 0
                    else:
                        streak += 1
                        if streak >= _SEGMENT_AFTER:
                            segment = structs.segment(length, n)
                            k, pos = _read_segment(
                                reader, pos, count - done, segment, names, expected, out
                            )
                            if k:
                                done += k
                                segments += 1
                                segment_runs += k
                                continue
                    topic = names.get(raw)
                    if topic is None:
                        topic = _intern(reader, raw, names, pos, expected)
                    add_topic(topic)
                    add_length(n)
                    if n == 1:
                        add_one(first)
                    else:
                        add_many((values.get(n) or structs.ints(n))(data, after + 4))
                    pos = after + 4 + 4 * n
                    done += 1
                    continue
        shape_length = shape_n = -1
        pos, topic, partitions = _read_group_values(reader, data, pos, names, expected)
        add_topic(topic)
        add_length(len(partitions))
        add_many(partitions)
        done += 1
    structs.segments_read += segments
    structs.segment_runs += segment_runs
    return pos


def _runs_canonical(topics: Sequence[str], lengths: Sequence[int], flat: Sequence[int]) -> bool:
    """Whether runs read in wire order are canonical: topics strictly increasing, no empty
    run, partitions strictly increasing within each run. The last is checked on the flat
    partitions at once: every place where a value does not exceed the one before must be
    the start of a run."""
    if not lengths:
        return True
    if min(lengths) < 1 or not _strictly_increasing(topics):
        return False
    if len(flat) == len(lengths):
        return True  # one partition per run
    drops = compress(itertools.count(1), map(operator.ge, flat, islice(flat, 1, None)))
    return set(accumulate(lengths)).issuperset(drops)


def read_topic_partitions(reader: Reader, expected: str) -> list[TopicPartitionPair]:
    """Read a ``[topic [partition]]`` array as flat ``(topic, partition)`` pairs."""
    return topic_partition_pairs(reader, expected)[0]


class OneEachLayouts:
    """Per-batch memo that reads a ``[topic [partition]]`` array in one ``struct`` call when
    its layout repeats an earlier one.

    In a large group each member typically owns one partition of each of many topics (more
    members than partitions per topic), and members with the same subscription send arrays
    that differ only in the partition numbers. After an array of that form has been read the
    slow way, :meth:`learn` keeps its layout (by group count) and whether it was canonical;
    :meth:`read` then unpacks a later array with one precompiled struct and accepts it only
    if every fixed byte (topic lengths, names, counts) is equal to the learned layout's: the
    bytes then differ from the learned array's only in partition numbers, so the pairs (wire
    order) and the canonical verdict equal what the general reader returns. Non-canonical
    layouts matter too: a Java member writes its topics in hash order (sticky user data,
    owned partitions), the same order for every member with the same topics. Anything else
    returns ``None`` and the caller reads the general way. Create one per batch (never
    module-wide); it keeps at most :attr:`CAPACITY` layouts.

    Arrays whose runs hold several partitions (each member of a bucket owning a few
    partitions of each of the bucket's topics) are learned as :class:`_RunLayout` s by
    :meth:`learn_runs` and read by :meth:`read_runs` with the same byte-for-byte rule, found
    by the array's count and first run header; learning and reading them stop early in a
    batch where layouts do not repeat.
    """

    __slots__ = (
        "_built",
        "_by_count",
        "_by_head",
        "_headers",
        "_hits",
        "_misses",
        "_seen",
        "_tried",
    )

    #: Layouts kept (by group count); the oldest is dropped first.
    CAPACITY = 8
    #: Arrays with fewer groups are not worth a layout.
    MIN_GROUPS = 16
    #: Run layouts built a batch (by head, see :meth:`learn_runs`); later ones are not.
    RUN_LAYOUTS = 64
    #: Arrays offered to :meth:`learn_runs` before it may stop for want of hits.
    TRIAL_ARRAYS = 64
    #: Layouts built beyond the hits of all layouts before a batch stops building them.
    UNPAID_LAYOUTS = 8
    #: Array signatures remembered while waiting for one to repeat.
    SIGNATURES = 256
    #: Run layout misses after which a batch stops trying them, unless they hit as often.
    MAX_MISSES = 32

    def __init__(self) -> None:
        self._by_count: dict[int, tuple[_OneEach, bool]] = {}
        self._headers = TopicHeaders()
        self._by_head: dict[bytes, _RunLayout] = {}
        #: the topics and run lengths of the last array read with each signature
        self._seen: dict[tuple[bytes, int], tuple[tuple[str, ...], Sequence[int]]] = {}
        self._hits = self._misses = self._built = self._tried = 0

    def read(self, reader: Reader) -> tuple[list[TopicPartitionPair], bytes | None] | None:
        """The pairs (wire order) of the array at ``reader``'s offset (consumed) and its bytes
        when the learned layout was canonical (``None`` when not), or ``None`` (nothing
        consumed) when no learned layout matches it byte for byte."""
        hit = self.read_runs(reader)
        if hit is None:
            return None
        (topics, _, partitions), block = hit
        return list(zip(topics, partitions, strict=True)), block

    def read_runs(self, reader: Reader) -> tuple[TopicRuns, bytes | None] | None:
        """:meth:`read` as runs: ``((learned topics, None, partitions), block or None)``;
        members matching one layout share its topics tuple."""
        count = reader.peek_int32()
        learned = self._by_count.get(count) if count is not None else None
        if learned is None:
            return self._read_repeated_runs(reader) if self._by_head else None
        layout, canonical = learned
        values = reader.unpack_ahead(layout.struct, _COUNT.size)
        if values is None or values[0::2] != layout.fixed:
            return self._read_repeated_runs(reader) if self._by_head else None
        start = reader.offset
        reader.advance(_COUNT.size + layout.struct.size)
        runs: TopicRuns = (layout.topics, None, values[1::2])
        return runs, reader.bytes_since(start) if canonical else None

    def _read_repeated_runs(self, reader: Reader) -> tuple[TopicRuns, bytes | None] | None:
        """:meth:`read_runs` by a learned :class:`_RunLayout` (:meth:`learn_runs`): the one
        whose array opens with the same count and first run header (:func:`_head`), taken
        when every fixed byte equals the layout's. The runs are ``(layout topics, layout
        lengths, partitions)``, shared by every member that matches it."""
        if self._misses > self.MAX_MISSES and self._misses > self._hits:
            return None
        data, pos = reader.window()
        layout = self._by_head.get(_head(data, pos))
        if layout is None:
            return None
        values = reader.unpack_ahead(layout.struct, _COUNT.size)
        if values is None or layout.fixed_of(values) != layout.fixed:
            self._misses += 1
            return None
        self._hits += 1
        partitions = list(compress(values, layout.mask))
        reader.advance(_COUNT.size + layout.struct.size)
        block = reader.bytes_since(pos) if layout.canonical(partitions) else None
        return (layout.topics, layout.lengths, partitions), block

    def learn_runs(self, runs: TopicRuns, block: bytes) -> None:
        """Learn the :class:`_RunLayout` of ``block``, the bytes ``runs`` were read from
        the general way (some run holding several partitions), when the last array read so
        with the same signature (:func:`_head`, byte length) had the same topics and run
        lengths: a signature seen once costs a dict entry, a false repeat two C-level
        compares, never a struct. At most :attr:`RUN_LAYOUTS` layouts are built a batch, and
        no more than :attr:`UNPAID_LAYOUTS` beyond the arrays they have read; after
        :attr:`TRIAL_ARRAYS` arrays read the general way, learning goes on only while layouts
        have read more arrays than that (layouts that repeat do so from the first members)."""
        self._tried += 1
        if self._tried > self.TRIAL_ARRAYS and self._hits < self._tried:
            return
        topics, lengths, _ = runs
        if (
            lengths is None
            or len(topics) < self.MIN_GROUPS
            or self._built >= min(self.RUN_LAYOUTS, self._hits + self.UNPAID_LAYOUTS)
        ):
            return
        head = _head(block, 0)
        if not head:
            return
        signature = (head, len(block))
        seen = self._seen.get(signature)
        if seen is None or seen[0] != topics or seen[1] != lengths:
            if seen is not None or len(self._seen) < self.SIGNATURES:
                self._seen[signature] = (topics, lengths)
            return
        self._built += 1
        self._by_head[head] = _RunLayout(topics, tuple(lengths), block)

    def learn(
        self, pairs: Sequence[TopicPartitionPair], block: bytes, canonical: bool = True
    ) -> None:
        """Remember the layout of ``block``, the bytes that ``pairs`` were read from (wire
        order; ``canonical`` as the general reader judged them), when every topic in it holds
        one partition (its group count equals the number of pairs)."""
        count = len(pairs)
        if count < self.MIN_GROUPS or _COUNT.unpack_from(block)[0] != count:
            return
        self.learn_topics(tuple(map(_FIRST, pairs)), block, canonical)

    def learn_topics(self, topics: tuple[str, ...], block: bytes, canonical: bool) -> None:
        """:meth:`learn` for an array read as runs of one partition each, ``topics`` in wire
        order (kept as is: later members matching it share this tuple)."""
        count = len(topics)
        if count < self.MIN_GROUPS or _COUNT.unpack_from(block)[0] != count:
            return
        self._by_count.pop(count, None)
        layout = self._headers.one_each(topics, "owned array", "topic")
        self._by_count[count] = (layout, canonical)
        while len(self._by_count) > self.CAPACITY:
            del self._by_count[next(iter(self._by_count))]


def _head(data: bytes, pos: int) -> bytes:
    """The count and first run header (``int16 length, name, int32 count``) of the array at
    ``pos`` of ``data``; empty when they do not fit or the name length is negative."""
    if len(data) - pos < 6:
        return b""
    end = pos + 10 + (data[pos + 4] << 8 | data[pos + 5])
    if data[pos + 4] >= 0x80 or end > len(data):
        return b""
    return data[pos:end]


class ArrayMemos:
    """The per-batch memos every ``[topic [partition]]`` array of one group shares: interned
    topic names (see :func:`topic_partition_pairs`) and repeated layouts
    (:class:`OneEachLayouts`). A :class:`~.consumer_protocol.SubscriptionDecoder` owns one and
    hands it to the sticky user data reader, so a Java member's user data (its previous
    assignment, topics in hash order) is read like its peers' owned arrays."""

    __slots__ = ("layouts", "names", "structs")

    def __init__(self) -> None:
        self.names: dict[bytes, str] = {}
        self.layouts = OneEachLayouts()
        self.structs = RunStructs()


def read_topic_partitions_block(
    reader: Reader,
    expected: str,
    names: dict[bytes, str] | None = None,
    layouts: OneEachLayouts | None = None,
) -> tuple[list[TopicPartitionPair], bytes | None]:
    """Like :func:`read_topic_partitions`, plus the raw bytes read when they are canonical.

    The block is ``None`` when the writer did not use the canonical form (unsorted topics or
    partitions, a topic twice, an empty topic); equal canonical blocks mean equal pair lists.
    A null array (count -1) reads as empty with the empty array's bytes (count 0) as its
    block: the block is what the leader hands back to a member planned its claims.
    ``names`` interns topic names (see :func:`topic_partition_pairs`); ``layouts``
    (one per batch) reads repeated one-partition-per-topic layouts in one call, with the same
    result.
    """
    if reader.take_prefix(_NULL_ARRAY):
        return [], _EMPTY_ARRAY
    if layouts is not None:
        hit = layouts.read(reader)
        if hit is not None:
            return hit
    start = reader.offset
    pairs, canonical = topic_partition_pairs(reader, expected, names)
    if layouts is None:
        return pairs, reader.bytes_since(start) if canonical else None
    block = reader.bytes_since(start)
    layouts.learn(pairs, block, canonical)
    return pairs, block if canonical else None


def read_topic_partition_runs(
    reader: Reader,
    expected: str,
    names: dict[bytes, str] | None = None,
    layouts: OneEachLayouts | None = None,
    structs: RunStructs | None = None,
) -> tuple[TopicRuns, bytes | None]:
    """:func:`read_topic_partitions_block` as runs (:data:`TopicRuns`, wire order): the same
    block, checks and errors, no tuple per partition (``structs``: see
    :func:`topic_partition_runs`). An empty array (count 0, a Java member's owned
    partitions) is taken whole by one compare."""
    if reader.take_prefix(_EMPTY_ARRAY):
        return ((), None, []), _EMPTY_ARRAY
    if reader.take_prefix(_NULL_ARRAY):
        return ((), None, []), _EMPTY_ARRAY
    if layouts is not None:
        hit = layouts.read_runs(reader)
        if hit is not None:
            return hit
    start = reader.offset
    runs, canonical = topic_partition_runs(reader, expected, names, structs)
    block = reader.bytes_since(start)
    if layouts is not None:
        if runs[1] is None:
            layouts.learn_topics(runs[0], block, canonical)
        else:
            layouts.learn_runs(runs, block)
    return runs, block if canonical else None
