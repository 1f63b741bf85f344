"""Typed inputs of the engine.

Invariants of a :class:`MemberSpec` once built:

- ``topics`` is a sorted tuple of distinct topic names;
- ``owned`` is a sorted tuple of distinct plain ``(topic, partition)`` tuples (a
  ``kafka.structs.TopicPartition`` or any 2-sequence is accepted and normalised);
- ``generation`` is an int in ``[-1, 2**31 - 1]``; ``-1`` means "no generation reported".

A spec built by :meth:`MemberSpec.from_runs` (the leader's bulk decode) holds its claims as
canonical :data:`OwnedRuns` and builds ``owned`` from them on first access only: the engine
reads the runs (:func:`owned_runs`), so a million claims never become tuples unless a caller
asks for ``owned``.

Ownership claims are *not* validated here (a claim on an unknown topic is legal input and
is ignored by the engine); only the types and ranges that make a spec meaningless are.
"""

from __future__ import annotations

import itertools
import operator
from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate, chain, compress, islice, repeat
from typing import TYPE_CHECKING, Any, cast

import kafka_sticky_plugin.core.implementation as implementation

from ..errors import InvalidSpecError

__all__ = [
    "INT32_MAX",
    "MemberSpec",
    "OwnedRuns",
    "TopicPartitionTuple",
    "canonical_runs",
    "each_canonical_runs",
    "owned_runs",
    "runs_pairs",
    "validate_partition_counts",
]

INT32_MAX = 2**31 - 1

TopicPartitionTuple = tuple[str, int]

#: Claims as runs: ``(topics, lengths, partitions)``, run ``i`` being topic ``topics[i]``
#: with the next ``lengths[i]`` ints of the flat ``partitions`` (``lengths`` is ``None`` when
#: every run holds one partition: ``partitions[i]`` then belongs to ``topics[i]``). The same
#: shape as the codec's ``TopicRuns``. *Canonical* runs: topics strictly increasing, every
#: run non-empty with its partitions strictly increasing; their pairs are then canonical.
OwnedRuns = tuple[tuple[str, ...], Sequence[int] | None, Sequence[int]]


def runs_pairs(runs: OwnedRuns) -> tuple[TopicPartitionTuple, ...]:
    """The ``(topic, partition)`` pairs ``runs`` stand for, in run order (built in C)."""
    topics, lengths, partitions = runs
    if lengths is None:
        return tuple(zip(topics, partitions, strict=True))
    return tuple(zip(chain.from_iterable(map(repeat, topics, lengths)), partitions, strict=True))


def _increasing_within_runs(lengths: Sequence[int], flat: Sequence[int]) -> bool:
    """Whether every run of non-empty ``lengths`` over ``flat`` is strictly increasing: every
    place where a value does not exceed the one before is the start of a run (C-level)."""
    drops = compress(itertools.count(1), map(operator.ge, flat, islice(flat, 1, None)))
    return set(accumulate(lengths)).issuperset(drops)


def canonical_runs(runs: OwnedRuns) -> OwnedRuns:
    """The canonical runs of the same pairs, distinct: ``runs_pairs(canonical_runs(r)) ==
    tuple(sorted(set(runs_pairs(r))))`` for runs of ``str`` topics and ``int`` partitions.

    Canonical runs are returned as they are; one-partition runs of distinct topics in
    another order (a Java member's hash order) are permuted whole; otherwise the runs of one
    topic are joined in run order, topics sorted, and if a run is then empty or not strictly
    increasing every run becomes its distinct partitions ascending and empty runs go. New
    runs hold their partitions in an ``array("i")``, as the wire's reader gives them (the
    leader's runs are int32s).
    """
    topics, lengths, flat = runs
    if lengths is None:
        if _strictly_increasing(topics):
            return runs
        if len(set(topics)) == len(topics):
            order = sorted(range(len(topics)), key=topics.__getitem__)
            return (
                tuple(map(topics.__getitem__, order)),
                None,
                array("i", map(flat.__getitem__, order)),
            )
        lengths = [1] * len(topics)
    elif (
        min(lengths, default=1) >= 1
        and _strictly_increasing(topics)
        and _increasing_within_runs(lengths, flat)
    ):
        return runs
    ends = list(accumulate(lengths))
    groups: list[Sequence[int]] = list(map(flat.__getitem__, map(slice, [0, *ends], ends)))
    if len(set(topics)) == len(topics):
        order = sorted(range(len(topics)), key=topics.__getitem__)
        names = tuple(map(topics.__getitem__, order))
        groups = list(map(groups.__getitem__, order))
    else:
        merged: dict[str, list[int]] = {}
        for topic, group in zip(topics, groups, strict=True):
            merged.setdefault(topic, []).extend(group)
        names = tuple(sorted(merged))
        groups = list(map(merged.__getitem__, names))
    sizes = list(map(len, groups))
    ordered = array("i", chain.from_iterable(groups))
    if min(sizes, default=1) < 1 or not _increasing_within_runs(sizes, ordered):
        groups = [sorted(set(group)) for group in groups]
        kept = list(map(bool, groups))
        names = tuple(compress(names, kept))
        groups = list(compress(groups, kept))
        sizes = list(map(len, groups))
        ordered = array("i", chain.from_iterable(groups))
    if len(ordered) == len(sizes):
        return names, None, ordered
    return names, sizes, ordered


def each_canonical_runs(members: Sequence[OwnedRuns]) -> list[OwnedRuns]:
    """:func:`canonical_runs` of each member's runs, in order: one call for a group, which the
    compiled twin (:mod:`.implementation`), when in use, answers with the same runs (sorting
    each distinct topics tuple once); the reference decides where it does not."""
    twin = implementation.twin
    made = None if twin is None else twin.each_canonical_runs(members)
    if made is None:
        return list(map(canonical_runs, members))
    return [
        canonical_runs(runs) if got is None else got
        for runs, got in zip(members, made, strict=True)
    ]


def _strictly_increasing(items: Sequence[Any]) -> bool:
    return all(map(operator.lt, items, islice(items, 1, None)))


def owned_runs(spec: MemberSpec) -> OwnedRuns | None:
    """The canonical runs ``spec`` was built from (:meth:`MemberSpec.from_runs`), or ``None``
    for a spec that holds its claims as ``owned`` only."""
    runs: OwnedRuns | None = spec.__dict__.get("_runs")
    return runs


def _plain(items: Sequence[Any]) -> bool:
    """True when every item of non-empty ``items`` is a plain ``(str, int)`` tuple; every
    check runs in C (``map``)."""
    if set(map(type, items)) != {tuple} or set(map(len, items)) != {2}:
        return False
    topics, partitions = zip(*items, strict=True)
    return set(map(type, topics)) == {str} and set(map(type, partitions)) == {int}


def _is_canonical(owned: object) -> bool:
    """True when ``owned`` is already a tuple of distinct ``(str, int)`` pairs in increasing
    order (what the codecs produce). Every check runs in C (``map``), so a leader that decodes
    a million claims does not pay a Python-level loop a second time here."""
    if type(owned) is not tuple:
        return False
    if not owned:
        return True
    return _plain(owned) and all(map(operator.lt, owned, owned[1:]))


def _normalise_owned(
    member_id: str, owned: Iterable[tuple[str, int]]
) -> tuple[TopicPartitionTuple, ...]:
    if _is_canonical(owned):
        return owned  # type: ignore[return-value]
    if isinstance(owned, (list, tuple)) and owned and _plain(owned):
        # Plain (str, int) pairs in another order (a Java member's topics come in hash
        # order): sorted in C, where runs of the input make it cheap; duplicates only cost a
        # second sort.
        ordered = sorted(owned)
        if all(map(operator.lt, ordered, islice(ordered, 1, None))):
            return tuple(ordered)
        return tuple(sorted(set(ordered)))
    out: set[TopicPartitionTuple] = set()
    for item in owned:
        try:
            topic, partition = item
        except (TypeError, ValueError):
            raise InvalidSpecError(
                f"member {member_id!r}: owned partition {item!r} is not a (topic, partition) pair"
            ) from None
        if (
            not isinstance(topic, str)
            or isinstance(partition, bool)
            or not isinstance(partition, int)
        ):
            raise InvalidSpecError(
                f"member {member_id!r}: owned partition {item!r} must be (str, int)"
            )
        out.add((topic, int(partition)))
    return tuple(sorted(out))


@dataclass(frozen=True, init=False)
class MemberSpec:
    """One group member as the leader sees it: subscription, claimed ownership, generation."""

    member_id: str
    topics: tuple[str, ...]
    owned: tuple[TopicPartitionTuple, ...]
    generation: int
    rack: str | None
    instance_id: str | None

    def __init__(
        self,
        *,
        member_id: str,
        topics: Iterable[str],
        owned: Iterable[tuple[str, int]] = (),
        generation: int = -1,
        rack: str | None = None,
        instance_id: str | None = None,
    ) -> None:
        self._set_fields(member_id, topics, None, generation, rack, instance_id)
        object.__setattr__(self, "owned", _normalise_owned(member_id, owned))

    @classmethod
    def from_canonical(
        cls,
        *,
        member_id: str,
        topics: Iterable[str],
        owned: tuple[TopicPartitionTuple, ...],
        generation: int = -1,
        rack: str | None = None,
        instance_id: str | None = None,
    ) -> MemberSpec:
        """A spec whose ``owned`` the caller guarantees canonical: a tuple of plain
        ``(str, int)`` tuples in strictly increasing order (what the codecs read from a
        canonical owned-partitions block). ``owned`` is taken as is, unchecked, which saves a
        leader one pass over a million claims; every other field is validated as by the
        constructor. A non-canonical ``owned`` breaks the class invariant: use the
        constructor when in doubt."""
        spec = cls.__new__(cls)
        spec._set_fields(member_id, topics, owned, generation, rack, instance_id)
        return spec

    @classmethod
    def from_runs(
        cls,
        *,
        member_id: str,
        topics: Iterable[str],
        runs: OwnedRuns,
        generation: int = -1,
        rack: str | None = None,
        instance_id: str | None = None,
        topics_sorted: bool = False,
    ) -> MemberSpec:
        """A spec whose claims the caller guarantees to be canonical runs (what the leader's
        bulk decode and :func:`canonical_runs` give), taken unchecked as by
        :meth:`from_canonical`: ``owned`` is ``runs_pairs(runs)``, built on first access
        (and kept); :func:`owned_runs` gives the runs back. ``topics_sorted``: the caller
        also guarantees ``topics`` a tuple of ``str`` in strictly increasing order (checked
        once for members that share it), taken as is."""
        spec = cls.__new__(cls)
        spec._set_fields(member_id, topics, None, generation, rack, instance_id, topics_sorted)
        object.__setattr__(spec, "_runs", runs)
        return spec

    if not TYPE_CHECKING:  # seen by mypy, it would type every unknown attribute

        def __getattr__(self, name: str) -> Any:
            """``owned`` of a spec built by :meth:`from_runs`, built on first access only
            (Python calls this for attributes not set, so other specs never get here)."""
            runs = self.__dict__.get("_runs")
            if name != "owned" or runs is None:
                raise AttributeError(name)
            owned = runs_pairs(runs)
            object.__setattr__(self, "owned", owned)
            return owned

    def _set_fields(
        self,
        member_id: str,
        topics: Iterable[str],
        owned: tuple[TopicPartitionTuple, ...] | None,
        generation: int,
        rack: str | None,
        instance_id: str | None,
        topics_sorted: bool = False,
    ) -> None:
        """Validate and set every field but ``owned``, then ``owned`` as given if not None
        (``topics`` unchecked when ``topics_sorted``)."""
        if not isinstance(member_id, str):
            raise InvalidSpecError(f"member_id must be a str, got {member_id!r}")
        if isinstance(topics, str):
            raise InvalidSpecError(
                f"member {member_id!r}: topics must be an iterable of names, not one string"
            )
        if topics_sorted:
            sorted_topics = cast(tuple[str, ...], topics)  # the caller's guarantee
        elif (
            type(topics) is tuple
            and set(map(type, topics)) <= {str}
            and all(map(operator.lt, topics, topics[1:]))
        ):
            sorted_topics = topics  # already canonical: share it as is
        else:
            topic_set = set(topics)
            for topic in topic_set:
                if not isinstance(topic, str):
                    raise InvalidSpecError(f"member {member_id!r}: topic {topic!r} is not a str")
            sorted_topics = tuple(sorted(topic_set))
        if isinstance(generation, bool) or not isinstance(generation, int):
            raise InvalidSpecError(f"member {member_id!r}: generation {generation!r} is not an int")
        if not -1 <= generation <= INT32_MAX:
            raise InvalidSpecError(
                f"member {member_id!r}: generation {generation} is outside [-1, {INT32_MAX}]"
            )
        if rack is not None and not isinstance(rack, str):
            raise InvalidSpecError(f"member {member_id!r}: rack {rack!r} is not a str or None")
        if instance_id is not None and not isinstance(instance_id, str):
            raise InvalidSpecError(
                f"member {member_id!r}: instance_id {instance_id!r} is not a str or None"
            )
        object.__setattr__(self, "member_id", member_id)
        object.__setattr__(self, "topics", sorted_topics)
        if owned is not None:
            object.__setattr__(self, "owned", owned)
        object.__setattr__(self, "generation", generation)
        object.__setattr__(self, "rack", rack)
        object.__setattr__(self, "instance_id", instance_id)


def validate_partition_counts(partitions_per_topic: Mapping[str, int]) -> dict[str, int]:
    """Return a plain copy of ``partitions_per_topic`` or raise :class:`InvalidSpecError`."""
    out: dict[str, int] = {}
    for topic, count in partitions_per_topic.items():
        if not isinstance(topic, str):
            raise InvalidSpecError(f"topic name {topic!r} is not a str")
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise InvalidSpecError(f"topic {topic!r}: partition count {count!r} is not an int >= 0")
        out[topic] = int(count)
    return out
