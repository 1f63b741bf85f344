"""Typed inputs of the engine.

Invariants of a :class:`MemberSpec` once built:

- ``topics`` is a sorted tuple of distinct topic names;
- ``owned`` is a sorted tuple of distinct plain ``(topic, partition)`` tuples (a
  ``kafka.structs.TopicPartition`` or any 2-sequence is accepted and normalised);
- ``generation`` is an int in ``[-1, 2**31 - 1]``; ``-1`` means "no generation reported".

Ownership claims are *not* validated here (a claim on an unknown topic is legal input and
is ignored by the engine); only the types and ranges that make a spec meaningless are.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any

from ..errors import InvalidSpecError

__all__ = [
    "INT32_MAX",
    "MemberSpec",
    "TopicPartitionTuple",
    "validate_partition_counts",
]

INT32_MAX = 2**31 - 1

TopicPartitionTuple = tuple[str, int]


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
        self._set_fields(member_id, topics, generation, rack, instance_id)
        object.__setattr__(self, "owned", _normalise_owned(member_id, owned))

    def _set_fields(
        self,
        member_id: str,
        topics: Iterable[str],
        generation: int,
        rack: str | None,
        instance_id: str | None,
    ) -> None:
        """Validate and set every field but ``owned``."""
        if not isinstance(member_id, str):
            raise InvalidSpecError(f"member_id must be a str, got {member_id!r}")
        if isinstance(topics, str):
            raise InvalidSpecError(
                f"member {member_id!r}: topics must be an iterable of names, not one string"
            )
        if (
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
