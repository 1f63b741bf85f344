"""Dense integer layout of one assignment problem.

Why dense: the engine must handle a million partitions and thousands of members in pure
Python, so hot loops work on ints in flat lists instead of ``(topic, partition)`` tuples and
string-keyed dicts. Conversions happen once, at the boundary.

Invariants:

- topics are the *known* topics (present in ``partitions_per_topic``) that at least one member
  subscribes to, sorted by name; ``topic_index[name]`` is the position in that order;
- the partitions of topic ``t`` are the global indices ``offsets[t] .. offsets[t] + counts[t] - 1``
  (so global order is ``(topic, partition)`` order);
- members are the input members with duplicate ids collapsed, sorted by ``member_id``; member
  ``m`` is ``member_ids[m]``;
- ``subscriptions[m]`` is the frozenset of topic indices member ``m`` subscribes to among the
  known topics; members with identical subscriptions share one frozenset object (a
  "subscription class"), which the builders use to detect homogeneous groups cheaply.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import repeat
from operator import attrgetter

from ..errors import InvalidSpecError
from .spec import MemberSpec, validate_partition_counts

__all__ = ["Layout", "build_layout", "merge_duplicate_members"]

_member_id = attrgetter("member_id")


def merge_duplicate_members(members: Iterable[MemberSpec]) -> list[MemberSpec]:
    """Collapse members that share a ``member_id`` into one, sorted by id.

    The merge is order independent: the union of topics and of owned partitions, the highest
    generation, and the smallest non-null rack and instance id. Distinct ids (every healthy
    group) cost a few C-level passes: the specs sorted by id, each as given.
    """
    specs = list(members)
    if not all(map(isinstance, specs, repeat(MemberSpec))):
        bad = next(spec for spec in specs if not isinstance(spec, MemberSpec))
        raise InvalidSpecError(f"expected MemberSpec, got {type(bad).__name__}")
    ids = list(map(_member_id, specs))
    if len(set(ids)) == len(ids):
        return sorted(specs, key=_member_id)
    return _merged_by_id(specs)


def _merged_by_id(specs: list[MemberSpec]) -> list[MemberSpec]:
    """:func:`merge_duplicate_members` one member at a time (some ids repeat)."""
    by_id: dict[str, list[MemberSpec]] = {}
    for spec in specs:
        by_id.setdefault(spec.member_id, []).append(spec)
    merged: list[MemberSpec] = []
    for member_id in sorted(by_id):
        group = by_id[member_id]
        if len(group) == 1:
            merged.append(group[0])
            continue
        racks = sorted(s.rack for s in group if s.rack is not None)
        instances = sorted(s.instance_id for s in group if s.instance_id is not None)
        merged.append(
            MemberSpec(
                member_id=member_id,
                topics=[t for s in group for t in s.topics],
                owned=[tp for s in group for tp in s.owned],
                generation=max(s.generation for s in group),
                rack=racks[0] if racks else None,
                instance_id=instances[0] if instances else None,
            )
        )
    return merged


@dataclass
class Layout:
    """The dense view of one problem; see the module docstring for the invariants."""

    topics: list[str]
    counts: list[int]
    offsets: list[int]
    total: int
    topic_index: dict[str, int]
    member_ids: list[str]
    specs: list[MemberSpec]
    subscriptions: list[frozenset[int]]
    _tuples: list[tuple[str, int]] | None = field(default=None, repr=False, compare=False)
    _topic_at: list[int] | None = field(default=None, repr=False, compare=False)

    def topic_of(self, partition: int) -> int:
        """Topic index of a global partition index.

        Binary search over ``offsets``: topics with no partitions share an offset with the
        next topic, so the last topic at that offset is the one that holds the partition.
        """
        return bisect_right(self.offsets, partition) - 1

    def topic_at(self) -> list[int]:
        """``topic_at()[q]`` is :meth:`topic_of` ``(q)`` for every global index, as one flat list
        (built once per layout, in C), for loops that look up many partitions: read-only."""
        if self._topic_at is None:
            table: list[int] = []
            for t, n in enumerate(self.counts):
                table.extend(repeat(t, n))
            self._topic_at = table
        return self._topic_at

    def partition_tuples(self) -> list[tuple[str, int]]:
        """Every ``(topic, partition)`` tuple, indexed by global partition index.

        Built once per layout (in C: ``zip`` over ``repeat``), then shared: treat it as
        read-only."""
        if self._tuples is None:
            tuples: list[tuple[str, int]] = []
            for name, n in zip(self.topics, self.counts, strict=True):
                tuples.extend(zip(repeat(name, n), range(n), strict=False))  # repeat is endless
            self._tuples = tuples
        return self._tuples


def build_layout(partitions_per_topic: Mapping[str, int], members: Iterable[MemberSpec]) -> Layout:
    """Validate the inputs and build the dense layout."""
    counts_by_name = validate_partition_counts(partitions_per_topic)
    specs = merge_duplicate_members(members)
    # Members usually subscribe to one of a few topic lists: each distinct one is read once.
    distinct: dict[tuple[str, ...], int] = {}
    list_of_member = [distinct.setdefault(spec.topics, len(distinct)) for spec in specs]
    topics = sorted(set().union(*distinct).intersection(counts_by_name))
    topic_index = {name: i for i, name in enumerate(topics)}
    counts = [counts_by_name[name] for name in topics]
    offsets: list[int] = []
    total = 0
    for n in counts:
        offsets.append(total)
        total += n
    # one frozenset object per subscription class (equal sets of known topics)
    canonical: dict[frozenset[int], frozenset[int]] = {}
    classes = [
        canonical.setdefault(known, known)
        for known in (_known_indices(names, topic_index) for names in distinct)
    ]
    subscriptions = [classes[i] for i in list_of_member]
    return Layout(
        topics=topics,
        counts=counts,
        offsets=offsets,
        total=total,
        topic_index=topic_index,
        member_ids=[s.member_id for s in specs],
        specs=specs,
        subscriptions=subscriptions,
    )


def _known_indices(topics: tuple[str, ...], topic_index: dict[str, int]) -> frozenset[int]:
    """The indices of ``topics`` known to ``topic_index`` (one C-level pass when all are)."""
    try:
        return frozenset(map(topic_index.__getitem__, topics))
    except KeyError:
        return frozenset(topic_index[t] for t in topics if t in topic_index)
