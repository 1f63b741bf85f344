"""The quality figures of :func:`plan_quality.quality`, measured in bulk on a peer's bytes.

``make bench`` judges every plan a peer writes (a million partitions on most shapes). Going
through :func:`plan_quality.plan_of` (a tuple per partition) and :func:`plan_quality.quality`
(a Python step per partition) took about 3.5 s a plan; here each member's assignment bytes
are read topic by topic into integer arrays and the checks run over whole arrays. The figures
are exactly those of ``quality(partitions, members, plan_of(assignments, members), racks)``
(``tests/test_bench_quality.py`` compares both on seeded random plans, bad ones included):

- items are visited in the same order (the members in input order, then any other key in
  the peer's order), so the member that keeps a partition given twice is the same (the first);
- an assignment whose bytes are not the plain layout this reader expects (every version 0-3:
  int16 version, int32 topic count, per topic int16 name length, name, int32 partition
  count, big-endian int32 partitions; then the user data) is read by our codec's
  ``decode_assignment`` instead, which raises on bytes it cannot read;
- load-optimality (only judged when the spread is above 1) is
  :func:`kafka_sticky_plugin.invariants.check_balanced` on the plan as tuples.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from kafka_sticky_plugin.codec import decode_assignment
from kafka_sticky_plugin.core import MemberSpec
from kafka_sticky_plugin.errors import InvariantViolation
from kafka_sticky_plugin.invariants import check_balanced

Items = tuple[list[str], list[int], list[int]]  # topics in order, count per topic, partitions


@dataclass(frozen=True)
class RackIndex:
    """Replica racks as the bench input stores them: the distinct rack sets, and per
    partition (topics in input order, partitions in order) the index of its set."""

    sets: Sequence[tuple[str, ...]]
    index: NDArray[np.int64]


def assignment_items(raw: bytes) -> Items:
    """One assignment's topics (one entry per topic block, in the order of its bytes), the
    number of partitions in each block, and all partitions in order."""
    items = _plain_items(raw)
    if items is not None:
        return items
    topics: list[str] = []
    counts: list[int] = []
    partitions: list[int] = []
    for topic, p in decode_assignment(raw).partitions:  # raises on unreadable bytes
        if not topics or topics[-1] != topic:
            topics.append(topic)
            counts.append(0)
        counts[-1] += 1
        partitions.append(p)
    return topics, counts, partitions


def _plain_items(raw: bytes) -> Items | None:
    """The plain layout read directly, or ``None`` where it is not that (then the codec
    decides)."""
    size = len(raw)
    if size < 6 or _I16.unpack_from(raw, 0)[0] < 0:
        return None
    (count,) = _I32.unpack_from(raw, 2)
    if count < 0:
        return None
    at = 6
    names: list[bytes] = []
    counts: list[int] = []
    partitions: list[int] = []
    i16, i32 = _I16.unpack_from, _I32.unpack_from
    add_name, add_count, add_one, add_many = (
        names.append,
        counts.append,
        partitions.append,
        partitions.extend,
    )
    try:
        for _ in range(count):
            (length,) = i16(raw, at)
            at += 2
            add_name(raw[at : at + length])
            at += length
            (n,) = i32(raw, at)
            at += 4
            if length < 0 or n < 0:
                return None
            add_count(n)
            if n == 1:
                add_one(i32(raw, at)[0])
            else:
                add_many(struct.unpack_from(f">{n}i", raw, at))
            at += 4 * n
        (user,) = i32(raw, at)
        topics = [name.decode() for name in _distinct(names)]
    except (struct.error, UnicodeDecodeError):
        return None
    if user < -1 or at + 4 + max(user, 0) > size:
        return None
    decoded = dict(zip(_distinct(names), topics, strict=True))
    return [decoded[name] for name in names], counts, partitions


def _distinct(names: list[bytes]) -> list[bytes]:
    return list(dict.fromkeys(names))


_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")


def bulk_quality(
    partitions: Mapping[str, int],
    members: Sequence[MemberSpec],
    assignments: Mapping[str, bytes],
    racks: RackIndex | None = None,
) -> dict[str, object]:
    """``quality(partitions, members, plan_of(assignments, members), racks)`` (see the module
    docstring); ``racks`` in the input's compact form."""
    topics = list(partitions)
    unknown = len(topics)  # the topic id of a name that is not a topic
    tid = {t: k for k, t in enumerate(topics)}
    counts = np.array([partitions[t] for t in topics] + [0], dtype=np.int64)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    total = int(counts.sum())
    index = {s.member_id: i for i, s in enumerate(members)}
    order = [(s.member_id, i) for i, s in enumerate(members)]
    order += [(m, len(members)) for m in assignments if m not in index]  # not a member
    subscribed = np.zeros((len(members) + 1, unknown + 1), dtype=bool)
    for i, s in enumerate(members):
        subscribed[i, [tid[t] for t in s.topics if t in tid]] = True
    read = {m: assignment_items(raw) for m, raw in assignments.items()}
    who: list[int] = []
    topic_ids: list[int] = []
    flat: list[int] = []
    load: dict[str, int] = {}
    for member_id, m in order:
        names, sizes, parts = read.get(member_id, ([], [], []))
        load[member_id] = len(parts)
        for name, n in zip(names, sizes, strict=True):
            topic_ids += [tid.get(name, unknown)] * n
        flat += parts
        who += [m] * len(parts)
    t_arr = np.array(topic_ids, dtype=np.int64)
    p_arr = np.array(flat, dtype=np.int64)
    m_arr = np.array(who, dtype=np.int64)
    valid = subscribed[m_arr, t_arr] & (p_arr >= 0) & (p_arr < counts[t_arr])
    invalid = int(len(valid) - valid.sum())
    given_at = starts[t_arr[valid]] + p_arr[valid]
    unique, first = np.unique(given_at, return_index=True)
    to = m_arr[valid][first]
    twice = len(given_at) - len(unique)
    owner = np.full(total, -1, dtype=np.int64)
    owner[unique] = to
    wanted = {t for s in members for t in s.topics if t in partitions}
    unassigned = sum(partitions[t] for t in wanted) - len(unique)
    loads = [load[s.member_id] for s in members if s.topics]
    spread = max(loads) - min(loads) if loads else 0
    moved = 0
    for m, s in enumerate(members):
        if not s.owned:
            continue
        k = np.array([tid.get(t, unknown) for t, _ in s.owned], dtype=np.int64)
        p = np.array([p for _, p in s.owned], dtype=np.int64)
        ok = (p >= 0) & (p < counts[k])
        moved += int(len(p) - ok.sum()) + int((owner[starts[k[ok]] + p[ok]] != m).sum())
    optimal: bool | None = None
    if not twice and not invalid:
        optimal = True
        if spread > 1:  # within 1 is optimal whatever the subscriptions
            plan = {s.member_id: _pairs(read.get(s.member_id)) for s in members}
            try:
                check_balanced(partitions, members, plan)
            except InvariantViolation:
                optimal = False
    out: dict[str, object] = {
        "twice": twice,
        "invalid": invalid,
        "unassigned": unassigned,
        "spread": spread,
        "moved": moved,
        "optimal": optimal,
    }
    if racks is not None:
        out["cross_rack"] = _cross_rack(members, racks, unique, to)
    return out


def _pairs(items: Items | None) -> list[tuple[str, int]]:
    if items is None:
        return []
    names, sizes, parts = items
    topics = [name for name, n in zip(names, sizes, strict=True) for _ in range(n)]
    return list(zip(topics, parts, strict=True))


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
