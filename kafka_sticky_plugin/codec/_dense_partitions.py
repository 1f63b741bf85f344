"""The ``[topic [partition]]`` array written from dense global partition indices.

A leader's engine plans on dense indices (one int per partition of the group's topics, in
``(topic, partition)`` order); this writes a member's ascending indices as the canonical array
(topics sorted, each once, its distinct partitions sorted, no empty topic: the invariants of
:mod:`._topic_partitions`) without a ``(topic, partition)`` tuple per partition. The indices
become a column of topic indices and a column of partition numbers in C (``map``); each topic's
run of partitions is written as its cached header, its count and a slice of the member's
partition numbers packed once as big-endian int32 (one ``struct`` call), and a stretch of
one-partition topics (a member of a large group holds one partition of each of many topics)
as a template of headers whose partition words are filled by stepped slice copies. The bytes
are those of :func:`._topic_partitions.encode_topic_partitions` of the same pairs.
"""

from __future__ import annotations

import operator
import struct
from array import array
from collections.abc import Callable, Sequence
from itertools import chain, compress, islice, repeat

from ._topic_partitions import TopicHeaders, _strictly_increasing, seen_before
from ._wire import INT16_MAX, INT32_MAX

__all__ = ["DenseTopics", "encode_canonical_runs", "encode_dense_topic_partitions"]

_COUNT = struct.Struct(">i")
_COUNT_ONE = _COUNT.pack(1)
_ZERO_WORD = bytes(4)
_INT32_ARRAY = array("i").itemsize == 4
#: Partition numbers above this are packed one by one instead of from a shared table.
_WORDS_MAX = 1 << 16
#: Writing stretches of one-partition topics whole (:func:`_long_runs`) pays when a member
#: has at most one repeated topic per this many partitions (one partition of most topics, a
#: few of some); otherwise every run is written on its own (:func:`_sliced_runs`).
_FEW_REPEATS = 32
#: A member whose runs hold at most this many partitions each takes every run's header and
#: count as one cached piece (:meth:`DenseTopics.counted`).
_COUNTED_MAX = 8


class _OneEach:
    """How to write ``(header + count 1, partition)`` for a fixed sequence of topics (one
    partition each), given the partition numbers: headers of one length (names of one
    length, common) are a template whose partition words are copied in by four stepped
    slices; others go through one ``struct`` call."""

    __slots__ = ("_fixed", "_head_size", "_struct", "_template")

    def __init__(self, fixed: tuple[bytes, ...]) -> None:
        self._fixed = fixed
        sizes = set(map(len, fixed))
        self._head_size = sizes.pop() if len(sizes) == 1 and _INT32_ARRAY else 0
        self._template = b"".join(head + b"\x00\x00\x00\x00" for head in fixed)
        self._struct = (
            None
            if self._head_size
            else struct.Struct(">" + "".join(f"{len(head)}si" for head in fixed))
        )

    def pack(self, partitions: Sequence[int]) -> bytes:
        """The groups for ``partitions`` (each in int32, one per topic), without the count."""
        if self._struct is not None:
            return self._struct.pack(
                *chain.from_iterable(zip(self._fixed, partitions, strict=True))
            )
        if len(partitions) != len(self._fixed):
            raise ValueError("one partition per topic")
        return _fill_words(self._template, self._head_size, partitions)


def _fill_words(template: bytes | bytearray, head: int, partitions: Sequence[int]) -> bytes:
    """``template`` (groups of ``head`` header bytes and 4 zero bytes, one per partition;
    not modified) with ``partitions`` (each in int32) as big-endian int32 in the zero bytes:
    one stepped copy of whole words when ``head`` is a multiple of 4 (the groups are then
    words too), else four stepped copies of bytes; in C either way."""
    raw = _int32s(partitions)
    stride = head + 4
    if head % 4 == 0:
        grid = array("i")
        grid.frombytes(template)
        words = array("i")
        words.frombytes(raw)
        grid[head // 4 :: stride // 4] = words
        return grid.tobytes()
    filled = bytearray(template)
    for k in range(4):
        filled[head + k :: stride] = raw[k::4]
    return bytes(filled)


def _header(name: str) -> bytes | None:
    """``int16 length + UTF-8 name``, or ``None`` when ``name`` cannot be written (reported by
    :meth:`TopicHeaders.get` when a member is assigned one of its partitions)."""
    try:
        raw = name.encode("utf-8")
    except UnicodeEncodeError:
        return None
    return struct.pack(">h", len(raw)) + raw if len(raw) <= INT16_MAX else None


class DenseTopics:
    """The topics behind one batch's dense partition indices, with their encoded pieces.

    Invariants (checked at construction): ``names`` are strings, strictly increasing (so
    ascending indices are ``(topic, partition)`` order, the canonical order); topic ``t``
    holds the global indices ``offsets[t] .. offsets[t] + counts[t] - 1`` (``offsets`` the
    running sums of ``counts``, so a topic of no partitions holds none); ``topic_at[q]`` is
    the topic of index ``q`` for ``0 <= q < total``. Create one per batch (it caches the
    encoded headers, partition numbers and repeated layouts of its members, never
    module-wide).
    """

    __slots__ = (
        "_counted",
        "_groups",
        "_heads",
        "_heads_one",
        "_index",
        "_indices",
        "_layouts",
        "_one_size",
        "_words",
        "max_count",
        "names",
        "offsets",
        "topic_at",
        "total",
    )

    #: One-partition-per-topic layouts remembered for a ``struct`` (the oldest is dropped).
    CAPACITY = 64
    #: Layouts with fewer topics are not worth a ``struct``.
    MIN_GROUPS = 16

    def __init__(
        self, names: Sequence[str], counts: Sequence[int], topic_at: Sequence[int] | None = None
    ) -> None:
        if len(names) != len(counts) or not all(type(name) is str for name in names):
            raise ValueError("dense topics: one count per name, names as str")
        if not _strictly_increasing(names):
            raise ValueError("dense topics: names strictly increasing")
        if not all(type(n) is int and 0 <= n <= INT32_MAX + 1 for n in counts):
            raise ValueError("dense topics: partition counts in [0, 2**31]")
        offsets: list[int] = []
        total = 0
        for n in counts:
            offsets.append(total)
            total += n
        if topic_at is None:
            table: list[int] = []
            for t, n in enumerate(counts):
                table.extend(repeat(t, n))
            topic_at = table
        elif len(topic_at) != total:
            raise ValueError(f"dense topics: topic_at holds {len(topic_at)} indices, not {total}")
        self.names: Sequence[str] = names
        self.offsets: list[int] = offsets
        self.topic_at: Sequence[int] = topic_at
        self.total = total
        self.max_count = max(counts, default=0)
        self._heads: list[bytes | None] = [_header(name) for name in names]
        self._heads_one: list[bytes | None] = [
            None if head is None else head + _COUNT_ONE for head in self._heads
        ]
        sizes = {len(head) if head is not None else 0 for head in self._heads_one}
        #: the one length of every ``header + count 1`` (0: several lengths or unwritable)
        self._one_size = sizes.pop() if len(sizes) == 1 and _INT32_ARRAY else 0
        self._words: list[bytes] = []
        self._layouts: dict[tuple[int, ...], _OneEach | None] = {}
        self._index: dict[str, int] = {}
        self._indices: dict[tuple[str, ...], list[int]] = {}
        self._groups = b""
        self._counted: list[list[bytes | None]] = []

    def words(self, highest: int) -> list[bytes]:
        """``words(h)[p]`` is partition ``p`` as big-endian int32 bytes, for ``p <= h``."""
        words = self._words
        if highest >= len(words):
            words.extend(map(_COUNT.pack, range(len(words), highest + 1)))
        return words

    def counted(self, highest: int) -> list[list[bytes | None]]:
        """``counted(h)[n][t]`` is topic ``t``'s header followed by the count ``n`` (``None``
        for a topic whose header is), for ``n <= h``; rows built on first use."""
        rows = self._counted
        heads = self._heads
        while len(rows) <= highest:
            word = _COUNT.pack(len(rows))
            rows.append([None if head is None else head + word for head in heads])
        return rows

    def groups(self) -> bytes:
        """Every topic's ``header + count 1`` followed by a zero word, in topic order, built
        on first use; for batches whose headers are all written (``_one_size`` not 0)."""
        if not self._groups:
            heads = self._heads_one
            self._groups = _ZERO_WORD.join(heads) + _ZERO_WORD  # type: ignore[arg-type]
        return self._groups

    def indices_of(self, names: Sequence[str]) -> list[int]:
        """The topic index of each of ``names`` (a ``KeyError`` for a name outside these
        topics); read-only: the list of a tuple of names is remembered for the batch (members
        with the same topics often share one tuple, or equal ones)."""
        index = self._index
        if not index:
            index.update(zip(self.names, range(len(self.names)), strict=True))
        if type(names) is not tuple:
            return list(map(index.__getitem__, names))
        found = self._indices.get(names)
        if found is None:
            found = self._indices[names] = list(map(index.__getitem__, names))
        return found

    def layout(self, ts: Sequence[int]) -> _OneEach | None:
        """How to write the strictly increasing topics ``ts`` holding one partition each,
        built the second time ``ts`` is seen (``None`` before, and for an unwritable topic).
        When every header has one length, only consecutive topics are remembered: their key
        is short, while the key of others costs as much as joining their headers anew."""
        n = len(ts)
        if n < self.MIN_GROUPS:
            return None
        # Strictly increasing topics spanning n consecutive ones are range(ts[0], ts[0] + n):
        # a short key (never equal to a whole sequence, which has MIN_GROUPS or more items).
        if ts[-1] - ts[0] + 1 == n:
            key: tuple[int, ...] = (ts[0], n)
        elif self._one_size:
            return None
        else:
            key = tuple(ts)
        layouts = self._layouts
        if not seen_before(layouts, key, self.CAPACITY):
            return None
        found = layouts[key]
        if found is None:
            fixed = tuple(map(self._heads_one.__getitem__, ts))
            if None in fixed:
                return None  # an unwritable topic: the caller's join reports it
            found = layouts[key] = _OneEach(tuple(head or b"" for head in fixed))
        return found


def encode_dense_topic_partitions(
    indices: Sequence[int], topics: DenseTopics, what: str, expected: str
) -> bytes:
    """The canonical bytes (count included) of the partitions at ``indices``: strictly
    increasing global indices of ``topics`` (a list, or a ``range``). Same bytes as
    :func:`._topic_partitions.encode_topic_partitions` of their ``(topic, partition)``
    pairs; a ``ValueError`` when ``indices`` break the precondition, a :class:`CodecError`
    (offset 0) when a topic name cannot be written.
    """
    n = len(indices)
    if not n:
        return _COUNT.pack(0)
    if not 0 <= indices[0] <= indices[-1] < topics.total:
        raise ValueError(f"dense indices: strictly increasing in [0, {topics.total})")
    ts = _topics_of(indices, topics)
    offsets = topics.offsets
    # each index's topic offset: a slice for consecutive topics (ts a range of step 1)
    bases = offsets[ts.start : ts.stop] if isinstance(ts, range) else map(offsets.__getitem__, ts)
    partitions = list(map(operator.sub, indices, bases))
    # strictly increasing topics (one partition each) imply strictly increasing indices
    single = isinstance(ts, range) or _strictly_increasing(ts)
    repeats: list[int] = []  # positions whose topic is the previous position's
    if not single:
        if not (isinstance(indices, range) or _strictly_increasing(indices)):
            raise ValueError("dense indices: strictly increasing")
        repeats = list(compress(range(1, n), map(operator.eq, islice(ts, 1, None), ts)))
    try:
        if not repeats:
            return _COUNT.pack(n) + _singles(topics, ts, partitions)
        return _runs(topics, ts, partitions, repeats)
    except TypeError:
        # a topic whose header is None: report it as the tuple path does
        headers = TopicHeaders()
        for t in sorted(set(ts)):
            headers.get(topics.names[t], what, expected)
        raise


def encode_canonical_runs(
    names: Sequence[str], lengths: Sequence[int] | None, flat: Sequence[int], topics: DenseTopics
) -> bytes:
    """The canonical bytes (count included) of canonical runs (topics ``names`` strictly
    increasing, each a topic of ``topics``; run ``i`` the next ``lengths[i]`` partitions of
    ``flat``, strictly increasing and in the topic; ``lengths`` ``None``: one each): the
    bytes of :func:`encode_dense_topic_partitions` of their indices, without finding each
    partition's topic (a ``KeyError`` for a name outside ``topics``, unchecked otherwise)."""
    ts = topics.indices_of(names)
    partitions = flat if isinstance(flat, list) else list(flat)
    if not ts:
        return _COUNT.pack(0)
    count = _COUNT.pack(len(ts))
    if lengths is None:
        return count + _singles(topics, ts, partitions)
    if (len(partitions) - len(ts)) * _FEW_REPEATS <= len(partitions):
        return count + _among_singles(topics, ts, partitions, lengths)
    return count + _sliced(topics, ts, partitions, lengths)


def _topics_of(indices: Sequence[int], topics: DenseTopics) -> list[int] | range:
    """The topic of every index; a ``range`` when ``indices`` are a ``range`` whose step
    leaves at most one index per topic and whose topics are consecutive (a fresh member's
    share), found from its two ends without looking every index up."""
    topic_at = topics.topic_at
    if isinstance(indices, range) and indices.step >= topics.max_count:
        first, last = topic_at[indices[0]], topic_at[indices[-1]]
        if last - first + 1 == len(indices):
            return range(first, last + 1)
    return list(map(topic_at.__getitem__, indices))


def _runs(
    topics: DenseTopics, ts: Sequence[int], partitions: list[int], repeats: list[int]
) -> bytes:
    """The array of partitions whose topics ``ts`` repeat at ``repeats`` (count included),
    by the cheaper of two ways: a few repeats (one partition of most topics: a receiver
    after a rebalance) take a Python step per longer run (:func:`_long_runs`), others one
    per run (:func:`_sliced_runs`; cheaper than a ``join`` of a piece per partition even
    for runs of one or two partitions, measured on CPython 3.11)."""
    n = len(ts)
    if len(repeats) * _FEW_REPEATS <= n:
        return _COUNT.pack(n - len(repeats)) + _long_runs(
            topics, ts, partitions, _longer_runs(repeats)
        )
    starts = [0, *compress(range(1, n), map(operator.ne, islice(ts, 1, None), ts))]
    lengths = list(map(operator.sub, [*islice(starts, 1, None), n], starts))
    return _COUNT.pack(len(starts)) + _sliced_runs(topics, ts, partitions, starts, lengths)


def _longer_runs(repeats: list[int]) -> list[tuple[int, int]]:
    """``(start, length)`` of every run of more than one partition, from the positions
    ``repeats`` (ascending) whose topic is the previous position's."""
    runs: list[tuple[int, int]] = []
    start = end = -1
    for i in repeats:
        if i != end:
            if end > 0:
                runs.append((start, end - start))
            start = i - 1
        end = i + 1
    runs.append((start, end - start))
    return runs


def _word_of(topics: DenseTopics, highest: int) -> Callable[[int], bytes]:
    """Big-endian int32 bytes of a number in ``[0, highest]``: from the batch's shared table
    while it stays small, else packed one by one."""
    return topics.words(highest).__getitem__ if highest <= _WORDS_MAX else _COUNT.pack


def _singles(topics: DenseTopics, ts: Sequence[int], partitions: list[int]) -> bytes:
    """``topic, [partition]`` groups without the count, one partition per topic (``ts``
    strictly increasing): a repeated layout by its :class:`_OneEach`; else headers of one
    length joined around zero words that four stepped copies fill; else one ``join``."""
    layout = topics.layout(ts)
    if layout is not None:
        return layout.pack(partitions)
    heads = topics._heads_one
    if topics._one_size:  # every header of one length
        template = _ZERO_WORD.join(map(heads.__getitem__, ts)) + _ZERO_WORD  # type: ignore[arg-type]
        return _fill_words(template, topics._one_size, partitions)
    words = map(_word_of(topics, max(partitions)), partitions)
    pieces: chain[bytes | None] = chain.from_iterable(
        zip(map(heads.__getitem__, ts), words, strict=True)
    )
    return b"".join(pieces)  # type: ignore[arg-type]  # a None head raises TypeError


def _sliced_runs(
    topics: DenseTopics,
    ts: Sequence[int],
    partitions: list[int],
    starts: list[int],
    lengths: list[int],
) -> bytes:
    """Runs (``starts`` the first position of each topic's run, ``lengths`` its length),
    without the count, in one ``join`` and no Python step per partition: every partition
    number is packed once as big-endian int32 (one ``struct`` call), each run is its
    header, its count and a slice of those bytes."""
    return _sliced(topics, list(map(ts.__getitem__, starts)), partitions, lengths)


def _sliced(
    topics: DenseTopics, run_ts: Sequence[int], partitions: list[int], lengths: Sequence[int]
) -> bytes:
    """:func:`_sliced_runs` given each run's topic (``run_ts``) rather than each partition's
    (run ``i`` the next ``lengths[i]`` of ``partitions``, which the runs cover)."""
    packed = _int32s(partitions)
    highest = max(lengths)
    if highest <= _COUNTED_MAX:
        return _sliced_counted(topics.counted(highest), run_ts, packed, lengths)
    word = _word_of(topics, highest)
    heads = topics._heads
    pieces: list[bytes | None] = []
    append = pieces.append
    # A plain loop: three appends and one slice per run cost less than the same pieces
    # made by ``map``, ``slice`` and ``zip`` (measured on the bench shapes, CPython 3.11).
    end = 0
    for t, n in zip(run_ts, lengths, strict=True):
        begin, end = end, end + 4 * n
        append(heads[t])
        append(word(n))
        append(packed[begin:end])
    return b"".join(pieces)  # type: ignore[arg-type]  # a None head raises TypeError


def _sliced_counted(
    counted: list[list[bytes | None]],
    run_ts: Sequence[int],
    packed: bytes,
    lengths: Sequence[int],
) -> bytes:
    """:func:`_sliced` of short runs, given the batch's :meth:`DenseTopics.counted` pieces
    (for every length in ``lengths``) and the partitions already ``packed``: two pieces per
    run instead of three."""
    pieces: list[bytes | None] = []
    append = pieces.append
    end = 0
    for t, n in zip(run_ts, lengths, strict=True):
        begin, end = end, end + 4 * n
        append(counted[n][t])
        append(packed[begin:end])
    return b"".join(pieces)  # type: ignore[arg-type]  # a None head raises TypeError


def _long_runs(
    topics: DenseTopics,
    ts: Sequence[int],
    partitions: list[int],
    longer: list[tuple[int, int]],
) -> bytes:
    """A few runs of more than one partition (``longer``: start and length of each), without
    the count: the stretches of one-partition runs between them are written whole, each
    longer run on its own (a Python step per longer run; see :func:`_stretches`)."""
    out = _stretches(topics, partitions)
    done = 0
    for start, length in longer:
        if done < start:
            out.singles(ts[done:start], done, start)
        done = start + length
        out.run(ts[start], start, done)
    if done < len(ts):
        out.singles(ts[done:], done, len(ts))
    return out.tobytes()


def _among_singles(
    topics: DenseTopics, run_ts: Sequence[int], partitions: list[int], lengths: Sequence[int]
) -> bytes:
    """Runs of one partition each but a few (run ``i`` of topic ``run_ts[i]`` the next
    ``lengths[i]`` of ``partitions``, which the runs cover), without the count: as
    :func:`_long_runs`, on runs rather than positions."""
    out = _stretches(topics, partitions)
    run = pos = 0  # the next run to write and the position of its first partition
    for i in compress(range(len(lengths)), map(operator.ne, lengths, repeat(1))):
        if run < i:
            end = pos + i - run  # one partition per run in between
            out.singles(run_ts[run:i], pos, end)
            pos = end
        end = pos + lengths[i]
        out.run(run_ts[i], pos, end)
        pos = end
        run = i + 1
    if run < len(run_ts):
        out.singles(run_ts[run:], pos, len(partitions))
    return out.tobytes()


def _stretches(topics: DenseTopics, partitions: list[int]) -> _Chunks | _WordGrid:
    """A writer of ``partitions`` by stretches of one-partition topics and longer runs: one
    grid of words when every ``header + count 1`` of the batch has one length, a multiple
    of 4, else chunks joined at the end."""
    if topics._one_size and topics._one_size % 4 == 0:
        return _WordGrid(topics, partitions)
    return _Chunks(topics, partitions)


class _Chunks:
    """A body written as chunks: a stretch of one-partition topics by :func:`_singles`, a
    longer run as its header, its count and its partition numbers packed in one call; a
    ``TypeError`` from :meth:`tobytes` for an unwritable topic (a ``None`` header)."""

    __slots__ = ("_chunks", "_partitions", "_topics")

    def __init__(self, topics: DenseTopics, partitions: list[int]) -> None:
        self._topics = topics
        self._partitions = partitions
        self._chunks: list[bytes | None] = []

    def singles(self, ts: Sequence[int], begin: int, end: int) -> None:
        """Topics ``ts`` (strictly increasing) holding ``partitions[begin:end]``, one each."""
        self._chunks.append(_singles(self._topics, ts, self._partitions[begin:end]))

    def run(self, t: int, begin: int, end: int) -> None:
        """Topic ``t`` holding ``partitions[begin:end]``."""
        chunks = self._chunks
        chunks.append(self._topics._heads[t])
        chunks.append(_COUNT.pack(end - begin))
        chunks.append(_int32s(self._partitions[begin:end]))

    def tobytes(self) -> bytes:
        return b"".join(self._chunks)  # type: ignore[arg-type]  # a None head: a TypeError


class _WordGrid:
    """A body written as one array of int32 words (every ``header + count 1`` of the batch
    one length, a multiple of 4: ``topics._one_size``), every partition packed once up
    front: a stretch of one-partition topics is its joined headers around zero words that
    one stepped slice copy fills, a longer run its header, its count and a contiguous slice
    of the partitions' words. Same methods and bytes as :class:`_Chunks`."""

    __slots__ = ("_grid", "_heads", "_heads_one", "_stride", "_topics", "_words")

    def __init__(self, topics: DenseTopics, partitions: list[int]) -> None:
        self._topics = topics
        self._heads, self._heads_one = topics._heads, topics._heads_one
        self._stride = topics._one_size // 4 + 1  # words per one-partition group
        self._words = array("i")
        self._words.frombytes(_int32s(partitions))
        self._grid = array("i")

    def singles(self, ts: Sequence[int], begin: int, end: int) -> None:
        """Topics ``ts`` (strictly increasing) holding ``partitions[begin:end]``, one each:
        consecutive topics are one slice of the batch's groups (:meth:`DenseTopics.groups`),
        others their headers joined around zero words."""
        grid, stride = self._grid, self._stride
        first = len(grid) + stride - 1  # a group's partition is its last word
        if ts[-1] - ts[0] + 1 == len(ts):
            size = 4 * stride
            grid.frombytes(self._topics.groups()[size * ts[0] : size * (ts[-1] + 1)])
        else:
            heads = map(self._heads_one.__getitem__, ts)
            grid.frombytes(_ZERO_WORD.join(heads))  # type: ignore[arg-type]  # None: TypeError
            grid.frombytes(_ZERO_WORD)
        grid[first::stride] = self._words[begin:end]

    def run(self, t: int, begin: int, end: int) -> None:
        """Topic ``t`` holding ``partitions[begin:end]``."""
        grid = self._grid
        grid.frombytes(self._heads[t])  # type: ignore[arg-type]  # None: a TypeError
        grid.frombytes(_COUNT.pack(end - begin))
        grid.extend(self._words[begin:end])

    def tobytes(self) -> bytes:
        return self._grid.tobytes()


def _int32s(values: Sequence[int]) -> bytes:
    """``values`` (each in int32) as big-endian int32 bytes: one ``struct`` call (twice as
    fast as an ``array`` and its byte swap)."""
    return struct.pack(f">{len(values)}i", *values)
