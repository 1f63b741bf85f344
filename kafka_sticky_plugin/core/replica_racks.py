"""Replica racks as a typed value: the engine's ``partition_racks`` built topic by topic.

:class:`ReplicaRacks` is a read-only mapping ``(topic, partition) -> replica racks``, the
shape every engine entry point takes, so nothing downstream needs to know it; its bulk reads
(iteration, ``keys()``, ``values()``, ``items()``) are the wrapped dict's, at C speed, as the
engine's rack view reads them. It also keeps, per topic, how many of the topic's first
partitions have replica racks (:meth:`ReplicaRacks.listed_prefix`), known when it is built,
so a reader can tell in one look per topic that every partition of a group is listed
(:meth:`ReplicaRacks.lists_every_partition`) instead of verifying a million keys.

Invariants once built: every value is a non-empty tuple of rack names (a partition with no
replica rack known is no key); ``listed_prefix(t) == n`` exactly when ``(t, 0) .. (t, n-1)``
are keys and ``(t, n)`` is not; nothing changes afterwards.
"""

from __future__ import annotations

from collections.abc import (
    ItemsView,
    Iterable,
    Iterator,
    KeysView,
    Mapping,
    Sequence,
    ValuesView,
)
from itertools import repeat

__all__ = ["RackNames", "ReplicaRacks"]

RackNames = tuple[str, ...]


class ReplicaRacks(Mapping[tuple[str, int], RackNames]):
    """``{(topic, partition): replica racks}`` from ``by_topic[topic][partition]`` (``()``:
    no replica rack known for that partition, which is then no key). See the module
    docstring for the invariants."""

    __slots__ = ("_prefix", "_racks")

    def __init__(self, by_topic: Mapping[str, Sequence[RackNames]]) -> None:
        self._racks: dict[tuple[str, int], RackNames] = {
            (topic, p): racks
            for topic, seq in by_topic.items()
            for p, racks in enumerate(seq)
            if racks
        }
        self._prefix = {topic: _listed_prefix(seq) for topic, seq in by_topic.items()}

    @classmethod
    def from_pairs(cls, pairs: Mapping[tuple[str, int], Iterable[str]]) -> ReplicaRacks:
        """The same racks as ``pairs`` (``{(topic, partition): racks}``, partitions ints from
        0; an empty racks list is no key), their racks as tuples in the order given (for
        callers holding them keyed by partition, such as the benchmarks' inputs)."""
        by_topic: dict[str, list[RackNames]] = {}
        for (topic, partition), racks in pairs.items():
            if type(partition) is not int or partition < 0:
                raise ValueError(f"replica racks key {(topic, partition)!r}: not a partition")
            seq = by_topic.setdefault(topic, [])
            seq.extend(repeat((), partition + 1 - len(seq)))
            seq[partition] = tuple(racks)
        return cls(by_topic)

    def __getitem__(self, key: tuple[str, int]) -> RackNames:
        return self._racks[key]

    def __iter__(self) -> Iterator[tuple[str, int]]:
        return iter(self._racks)

    def __len__(self) -> int:
        return len(self._racks)

    def __contains__(self, key: object) -> bool:
        return key in self._racks

    def keys(self) -> KeysView[tuple[str, int]]:
        return self._racks.keys()

    def values(self) -> ValuesView[RackNames]:
        return self._racks.values()

    def items(self) -> ItemsView[tuple[str, int], RackNames]:
        return self._racks.items()

    def __repr__(self) -> str:
        return f"ReplicaRacks({self._racks!r})"

    def listed_prefix(self, topic: str) -> int:
        """How many of ``topic``'s first partitions (from 0, consecutive) are keys."""
        return self._prefix.get(topic, 0)

    def lists_every_partition(self, counts: Mapping[str, int]) -> bool:
        """Whether partitions ``0 .. n-1`` of every topic in ``counts`` (``{topic: n}``) are
        keys: one look per topic."""
        return all(self._prefix.get(topic, 0) >= n for topic, n in counts.items())


def _listed_prefix(seq: Sequence[RackNames]) -> int:
    """The index of ``seq``'s first ``()`` (no replica rack), its length when it has none."""
    for p, racks in enumerate(seq):
        if not racks:
            return p
    return len(seq)
