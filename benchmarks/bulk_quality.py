"""The quality figures of :func:`plan_quality.quality`, measured in bulk on a peer's bytes.

``make bench`` judges every plan a peer writes (a million partitions on most shapes). Going
through :func:`plan_quality.plan_of` (a tuple per partition) and :func:`plan_quality.quality`
(a Python step per partition) took about 2.5 CPU seconds a plan; here each member's
assignment bytes are read into integer arrays (topic blocks of one name length and one
partition count in a single array view, names looked up in a sorted table of the topics of
that length), the members' side is made once per phase (:class:`MembersView`), and the checks
run over whole arrays: about 0.4 s. The figures are exactly those of ``quality(partitions,
members, plan_of(assignments, members), racks)`` (``tests/test_bench_budget.py`` compares
both on seeded random plans, bad ones included):

- items are visited in the same order (the members in input order, then any other key in
  the peer's order), so the member that keeps a partition given twice is the same (the first);
- an assignment whose bytes are not the plain layout this reader expects (every version 0-3:
  int16 version, int32 topic count, per topic int16 name length, name, int32 partition
  count, big-endian int32 partitions; then the user data) is read by our codec's
  ``decode_assignment`` instead, which raises on bytes it cannot read;
- the row itself (``optimal`` judged with ``check_balanced`` on the plan as tuples, only when
  the spread is above 1) is :func:`plan_quality.figures`, shared with the reference.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat

import numpy as np
from numpy.typing import NDArray
from plan_quality import figures

from kafka_sticky_plugin.codec import decode_assignment
from kafka_sticky_plugin.core import MemberSpec

#: One assignment: per topic block in order, its topic id (:class:`TopicNames`) and its
#: partition count; all partitions in order.
Items = tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]


@dataclass(frozen=True)
class RackIndex:
    """Replica racks as the bench input stores them: the distinct rack sets, and per
    partition (topics in input order, partitions in order) the index of its set."""

    sets: Sequence[tuple[str, ...]]
    index: NDArray[np.int64]


class TopicNames:
    """Topic ids: topic k of the input is ``k``, any other name ``unknown`` (the topic
    count). Looks names up one by one (:meth:`id_of`) or, as raw bytes of one length, a
    whole array at once (:meth:`ids_of_raw`)."""

    def __init__(self, topics: Sequence[str]) -> None:
        self.topics = list(topics)
        self.unknown = len(self.topics)
        self.ids = {t: k for k, t in enumerate(self.topics)}
        grouped: dict[int, list[tuple[bytes, int]]] = {}
        for k, t in enumerate(self.topics):
            raw = t.encode()
            grouped.setdefault(len(raw), []).append((raw, k))
        self._by_length: dict[int, tuple[NDArray[np.bytes_], NDArray[np.int64]]] = {}
        for length, entries in grouped.items():
            entries.sort()
            names = np.array([raw for raw, _ in entries], dtype=f"S{length}")
            self._by_length[length] = (names, np.array([k for _, k in entries], dtype=np.int64))

    def id_of(self, name: str) -> int:
        return self.ids.get(name, self.unknown)

    def ids_of_raw(self, names: NDArray[np.bytes_], length: int) -> NDArray[np.int64] | None:
        """Ids of names that are all ``length`` bytes long (``S{length}``; a same-length
        comparison, so trailing zero bytes cannot make two names equal); ``None`` if a name
        that is not a topic is not UTF-8 (the codec then reads the bytes and refuses them)."""
        ids = np.full(len(names), self.unknown, dtype=np.int64)
        table = self._by_length.get(length)
        hit = np.zeros(len(names), dtype=bool)
        if table is not None:
            known, known_ids = table
            at = np.minimum(np.searchsorted(known, names), len(known) - 1)
            hit = known[at] == names
            ids[hit] = known_ids[at[hit]]
        for miss in np.unique(names[~hit]).tolist():
            try:
                bytes(miss).decode()
            except UnicodeDecodeError:
                return None
        return ids


def assignment_items(raw: bytes, names: TopicNames) -> Items:
    """One assignment's topic blocks (topic id, partition count) and partitions, in the
    order of its bytes."""
    items = _strided_items(raw, names)
    if items is None:
        items = _plain_items(raw, names)
    if items is not None:
        return items
    topics: list[int] = []
    counts: list[int] = []
    partitions: list[int] = []
    previous: str | None = None
    for topic, p in decode_assignment(raw).partitions:  # raises on unreadable bytes
        if not topics or previous != topic:
            topics.append(names.id_of(topic))
            counts.append(0)
            previous = topic
        counts[-1] += 1
        partitions.append(p)
    return _arrays(topics, counts, partitions)


def _arrays(topics: list[int], counts: list[int], partitions: list[int]) -> Items:
    return (
        np.array(topics, dtype=np.int64),
        np.array(counts, dtype=np.int64),
        np.array(partitions, dtype=np.int64),
    )


def _strided_items(raw: bytes, names: TopicNames) -> Items | None:
    """The plain layout where every topic block has the same name length and partition
    count (a member given k partitions of each topic, as on the equal-subscription shapes):
    read in one array view. ``None`` where the bytes are not exactly that: each block's
    length and count are checked where the previous block says it starts."""
    size = len(raw)
    if size < 12 or _I16.unpack_from(raw, 0)[0] < 0:
        return None
    (count,) = _I32.unpack_from(raw, 2)
    (length,) = _I16.unpack_from(raw, 6)
    if count < 1 or length < 1 or 8 + length + 4 > size:
        return None
    (k,) = _I32.unpack_from(raw, 8 + length)
    stride = 2 + length + 4 + 4 * k
    end = 6 + count * stride
    if k < 1 or end + 4 > size:
        return None
    (user,) = _I32.unpack_from(raw, end)
    if user < -1 or end + 4 + max(user, 0) > size:
        return None
    layout = np.dtype(
        {
            "names": ["length", "name", "count", "partitions"],
            "formats": [">i2", f"S{length}", ">i4", (">i4", (k,))],
            "offsets": [0, 2, 2 + length, 6 + length],
            "itemsize": stride,
        }
    )
    view = np.frombuffer(raw, layout, count, 6)
    if not ((view["length"] == length).all() and (view["count"] == k).all()):
        return None
    ids = names.ids_of_raw(view["name"], length)
    if ids is None:
        return None
    counts = np.full(count, k, dtype=np.int64)
    return ids, counts, view["partitions"].astype(np.int64).reshape(-1)


def _plain_items(raw: bytes, names: TopicNames) -> Items | None:
    """The plain layout read block by block, or ``None`` where it is not that (then the
    codec decides)."""
    size = len(raw)
    if size < 6 or _I16.unpack_from(raw, 0)[0] < 0:
        return None
    (count,) = _I32.unpack_from(raw, 2)
    if count < 0:
        return None
    at = 6
    blocks: list[bytes] = []
    counts: list[int] = []
    partitions: list[int] = []
    i16, i32 = _I16.unpack_from, _I32.unpack_from
    try:
        for _ in range(count):
            (length,) = i16(raw, at)
            at += 2
            blocks.append(raw[at : at + length])
            at += length
            (n,) = i32(raw, at)
            at += 4
            if length < 0 or n < 0:
                return None
            counts.append(n)
            partitions.extend(struct.unpack_from(f">{n}i", raw, at))
            at += 4 * n
        (user,) = i32(raw, at)
        ids = {name: names.id_of(name.decode()) for name in dict.fromkeys(blocks)}
    except (struct.error, UnicodeDecodeError):
        return None
    if user < -1 or at + 4 + max(user, 0) > size:
        return None
    return _arrays([ids[name] for name in blocks], counts, partitions)


_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")


@dataclass(frozen=True)
class MembersView:
    """What every plan of one input is judged against, made once per input
    (:func:`members_view`): topic ids (the topics in input order, ``unknown`` = their count),
    each topic's partition count and first global index, which member subscribes which topic,
    the previously owned partitions as global indices with their claimant, and the owned
    items that do not exist."""

    partitions: Mapping[str, int]
    members: Sequence[MemberSpec]
    names: TopicNames
    counts: NDArray[np.int64]
    starts: NDArray[np.int64]
    subscribed: NDArray[np.bool_]
    owned_at: NDArray[np.int64]
    owned_by: NDArray[np.int64]
    owned_missing: int
    wanted: int


def members_view(partitions: Mapping[str, int], members: Sequence[MemberSpec]) -> MembersView:
    """The :class:`MembersView` of ``members`` on ``partitions``."""
    names = TopicNames(list(partitions))
    topics, unknown, tid = names.topics, names.unknown, names.ids
    counts = np.array([partitions[t] for t in topics] + [0], dtype=np.int64)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
    subscribed = np.zeros((len(members) + 1, unknown + 1), dtype=bool)
    at: list[NDArray[np.int64]] = []
    by: list[NDArray[np.int64]] = []
    missing = 0
    # Members with equal topic tuples share one row of ids (the decoder shares the tuples);
    # the tuples stay alive in ``members``, so their ids stay unique.
    rows: dict[int, list[int]] = {}
    for i, s in enumerate(members):
        row = rows.get(id(s.topics))
        if row is None:
            row = rows[id(s.topics)] = [tid[t] for t in s.topics if t in tid]
        subscribed[i, row] = True
        if not s.owned:
            continue
        # in bulk: the pairs split by C-level zip, topic ids looked up by C-level map
        owned_topics, numbers = zip(*s.owned, strict=True)
        n = len(numbers)
        k = np.fromiter(map(tid.get, owned_topics, repeat(unknown, n)), dtype=np.int64, count=n)
        p = np.array(numbers, dtype=np.int64)
        ok = (p >= 0) & (p < counts[k])
        missing += int(len(p) - ok.sum())
        at.append(starts[k[ok]] + p[ok])
        by.append(np.full(int(ok.sum()), i, dtype=np.int64))
    wanted = {t for s in members for t in s.topics if t in partitions}
    return MembersView(
        partitions=partitions,
        members=members,
        names=names,
        counts=counts,
        starts=starts,
        subscribed=subscribed,
        owned_at=np.concatenate(at) if at else np.zeros(0, dtype=np.int64),
        owned_by=np.concatenate(by) if by else np.zeros(0, dtype=np.int64),
        owned_missing=missing,
        wanted=sum(partitions[t] for t in wanted),
    )


def bulk_quality(
    partitions: Mapping[str, int],
    members: Sequence[MemberSpec],
    assignments: Mapping[str, bytes],
    racks: RackIndex | None = None,
    view: MembersView | None = None,
) -> dict[str, object]:
    """``quality(partitions, members, plan_of(assignments, members), racks)`` (see the module
    docstring); ``racks`` in the input's compact form; ``view``: :func:`members_view` of the
    same partitions and members, made once for several plans."""
    if view is None:
        view = members_view(partitions, members)
    counts, starts = view.counts, view.starts
    index = {s.member_id: i for i, s in enumerate(members)}
    order = [(s.member_id, i) for i, s in enumerate(members)]
    order += [(m, len(members)) for m in assignments if m not in index]  # not a member
    read = {m: assignment_items(raw, view.names) for m, raw in assignments.items()}
    t_chunks: list[NDArray[np.int64]] = []
    p_chunks: list[NDArray[np.int64]] = []
    m_chunks: list[NDArray[np.int64]] = []
    load: dict[str, int] = {}
    for member_id, m in order:
        items = read.get(member_id)
        load[member_id] = 0 if items is None else len(items[2])
        if items is None or not len(items[2]):
            continue
        ids, sizes, parts = items
        t_chunks.append(np.repeat(ids, sizes))
        p_chunks.append(parts)
        m_chunks.append(np.full(len(parts), m, dtype=np.int64))
    empty = np.zeros(0, dtype=np.int64)
    t_arr = np.concatenate(t_chunks) if t_chunks else empty
    p_arr = np.concatenate(p_chunks) if p_chunks else empty
    m_arr = np.concatenate(m_chunks) if m_chunks else empty
    valid = view.subscribed[m_arr, t_arr] & (p_arr >= 0) & (p_arr < counts[t_arr])
    invalid = int(len(valid) - valid.sum())
    given_at = starts[t_arr[valid]] + p_arr[valid]
    unique, first = np.unique(given_at, return_index=True)
    to = m_arr[valid][first]
    twice = len(given_at) - len(unique)
    owner = np.full(int(counts.sum()), -1, dtype=np.int64)
    owner[unique] = to
    unassigned = view.wanted - len(unique)
    loads = [load[s.member_id] for s in members if s.topics]
    spread = max(loads) - min(loads) if loads else 0
    moved = view.owned_missing + int((owner[view.owned_at] != view.owned_by).sum())
    return figures(
        partitions,
        members,
        (twice, invalid, unassigned, spread, moved),
        lambda: {s.member_id: _pairs(read.get(s.member_id), view.names) for s in members},
        _cross_rack(members, racks, unique, to) if racks is not None else None,
    )


def _pairs(items: Items | None, names: TopicNames) -> list[tuple[str, int]]:
    """The plan's tuples (only called when every item is valid, so every id is a topic)."""
    if items is None:
        return []
    ids, sizes, parts = items
    topics = np.repeat(ids, sizes).tolist()
    return [(names.topics[t], p) for t, p in zip(topics, parts.tolist(), strict=True)]


def _cross_rack(
    members: Sequence[MemberSpec],
    racks: RackIndex,
    given: NDArray[np.int64],
    to: NDArray[np.int64],
) -> int:
    """Partitions given to a member with a rack that holds none of their replicas."""
    names = sorted({r for s in racks.sets for r in s} | {s.rack for s in members if s.rack})
    column = {name: k for k, name in enumerate(names)}
    holds = np.zeros((len(racks.sets), len(names)), dtype=bool)
    for k, rack_set in enumerate(racks.sets):
        for r in rack_set:
            holds[k, column[r]] = True
    member_rack = np.array(
        [-1 if s.rack is None else column[s.rack] for s in members], dtype=np.int64
    )
    rack = member_rack[to]
    with_rack = rack >= 0
    sets = racks.index[given[with_rack]]
    return int((~holds[sets, rack[with_rack]]).sum())
