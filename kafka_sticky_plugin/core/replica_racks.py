"""Replica racks as a typed value: the engine's ``partition_racks`` built topic by topic.

:class:`ReplicaRacks` is a read-only mapping ``(topic, partition) -> replica racks``, the
shape every engine entry point takes, so nothing downstream needs to know it. It holds the
racks as they are read from cluster metadata, per topic indexed by partition, and the
engine's rack view reads them so (:meth:`ReplicaRacks.topic_racks`,
:meth:`ReplicaRacks.distinct_racks`: C-level passes over each topic's list), so a leader
never builds a million ``(topic, partition)`` keys; a reader that asks by key (look-ups,
iteration, ``keys()``, ``values()``, ``items()``) gets the dict of those keys, built on its
first such read. It also keeps, per topic, how many of the topic's first partitions have
replica racks (:meth:`ReplicaRacks.listed_prefix`), known when it is built, so a reader can
tell in one look per topic that every partition of a group is listed
(:meth:`ReplicaRacks.lists_every_partition`) instead of verifying a million keys.

Invariants once built: every value is a non-empty tuple of rack names (a partition with no
replica rack known is no key); ``listed_prefix(t) == n`` exactly when ``(t, 0) .. (t, n-1)``
are keys and ``(t, n)`` is not; ``topic_racks(t)[p]`` is the value of key ``(t, p)``, ``()``
when it is no key; nothing changes afterwards (the keyed dict, once built, is the same
mapping).
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

    __slots__ = ("_by_topic", "_keyed", "_len", "_prefix")

    def __init__(self, by_topic: Mapping[str, Sequence[RackNames]]) -> None:
        self._by_topic: dict[str, tuple[RackNames, ...]] = {
            topic: tuple(seq) for topic, seq in by_topic.items()
        }
        self._len = sum(len(seq) - seq.count(()) for seq in self._by_topic.values())
        self._prefix = {topic: _listed_prefix(seq) for topic, seq in self._by_topic.items()}
        self._keyed: dict[tuple[str, int], RackNames] | None = None

    @property
    def _racks(self) -> dict[tuple[str, int], RackNames]:
        """``{(topic, partition): racks}`` for every listed partition, topic by topic in
        partition order; built on the first read by key."""
        if self._keyed is None:
            self._keyed = {
                (topic, p): racks
                for topic, seq in self._by_topic.items()
                for p, racks in enumerate(seq)
                if racks
            }
        return self._keyed

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
        return self._len

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

    def topic_racks(self, topic: str) -> Sequence[RackNames]:
        """``topic``'s replica racks indexed by partition (``()``: none known; partitions past
        the end are none either); empty for a topic it does not list."""
        return self._by_topic.get(topic, ())

    def distinct_racks(self) -> set[RackNames]:
        """The distinct values (never ``()``), in one C-level pass per topic."""
        return set().union(*self._by_topic.values()) - {()}

    def listed_prefix(self, topic: str) -> int:
        """How many of ``topic``'s first partitions (from 0, consecutive) are keys."""
        return self._prefix.get(topic, 0)

    def lists_every_partition(self, counts: Mapping[str, int]) -> bool:
        """Whether partitions ``0 .. n-1`` of every topic in ``counts`` (``{topic: n}``) are
        keys: one look per topic."""
        return all(self._prefix.get(topic, 0) >= n for topic, n in counts.items())


def _listed_prefix(seq: Sequence[RackNames]) -> int:
    """The index of ``seq``'s first ``()`` (no replica rack), its length when it has none."""
    return seq.index(()) if () in seq else len(seq)
