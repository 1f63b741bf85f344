"""The state of one consumer group as the simulator sees it.

Two views are kept apart on purpose, because real clients keep them apart:

- ``consuming``: the ground truth, which member is fetching which partition right now;
- each :class:`Member`'s ``owned`` and ``generation``: what that member *reports* in its next
  JoinGroup (its previous assignment in sticky user data for eager members, its owned
  partitions and generation for cooperative ones). They differ for a member that stalled past
  the session timeout and came back: it still claims its old partitions with a stale
  generation (KIP-341), while someone else consumes them.

Invariants: every key of ``consuming`` is a member of the group; a partition is consumed by at
most one member; ``owned`` of an in-group member never names a deleted topic.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..core.spec import TopicPartitionTuple
from ..errors import InvalidSpecError
from .model import SHAPES

__all__ = ["GroupState", "Member", "initial_topics_for"]


@dataclass
class Member:
    """One consumer: its subscription and what it will report at the next join."""

    member_id: str
    topics: tuple[str, ...]
    owned: frozenset[TopicPartitionTuple] = frozenset()
    generation: int = -1


@dataclass
class GroupState:
    """Members, topics, the group generation and who consumes what."""

    topics: dict[str, int]
    members: dict[str, Member]
    shape: str
    generation: int = 0
    next_member: int = 0
    next_topic: int = 0
    consuming: dict[str, set[TopicPartitionTuple]] = field(default_factory=dict)

    def new_member_id(self) -> str:
        member_id = f"m{self.next_member:05d}"
        self.next_member += 1
        return member_id

    def new_topic_name(self) -> str:
        name = f"t{self.next_topic:04d}"
        self.next_topic += 1
        return name

    def assignable(self) -> set[TopicPartitionTuple]:
        """Every partition of a topic that at least one member subscribes to."""
        subscribed = {t for m in self.members.values() for t in m.topics if t in self.topics}
        return {(t, p) for t in subscribed for p in range(self.topics[t])}

    def apply_plan(self, plan: Mapping[str, Sequence[TopicPartitionTuple]]) -> None:
        """A new generation in which every member owns, reports and consumes its part of
        ``plan`` (nothing when the plan leaves it out)."""
        self.generation += 1
        for member_id, member in self.members.items():
            assigned = plan.get(member_id, [])
            member.owned = frozenset(assigned)
            member.generation = self.generation
            self.consuming[member_id] = set(assigned)

    def owner_map(self) -> dict[TopicPartitionTuple, str]:
        return {tp: m for m, tps in self.consuming.items() for tp in tps}

    def remove_member(self, member_id: str) -> set[TopicPartitionTuple]:
        """Take a member out of the group; returns the partitions it was consuming."""
        self.members.pop(member_id, None)
        return self.consuming.pop(member_id, set())

    def drop_unsubscribed(self, member: Member) -> int:
        """What a real client does before rejoining after its subscription changed: revoke the
        partitions of topics it no longer subscribes to. Returns how many it revoked."""
        keep = frozenset(tp for tp in member.owned if tp[0] in member.topics)
        dropped = len(member.owned) - len(keep)
        member.owned = keep
        consuming = self.consuming.get(member.member_id)
        if consuming is not None:
            consuming.intersection_update(keep)
        return dropped

    def delete_topic(self, topic: str, rng: random.Random) -> None:
        """Delete a topic; members lose it from subscriptions, claims and consumption.

        A member left with no topic subscribes to one remaining topic (a consumer with an
        empty subscription would leave the group in a real client).
        """
        del self.topics[topic]
        remaining = sorted(self.topics)
        for member in self.members.values():
            topics = tuple(t for t in member.topics if t != topic)
            if not topics and remaining:
                topics = (rng.choice(remaining),)
            member.topics = topics
            member.owned = frozenset(tp for tp in member.owned if tp[0] != topic)
        for tps in self.consuming.values():
            tps.difference_update({tp for tp in tps if tp[0] == topic})


def initial_topics_for(
    shape: str, index: int, count: int, topics: list[str], rng: random.Random
) -> tuple[str, ...]:
    """The subscription of the ``index``-th of ``count`` members under a shape.

    - homogeneous: every topic;
    - disjoint: topics and members are cut into the same number of buckets (at most 4), and
      a member subscribes to its bucket's topics only;
    - nested: member ``i`` subscribes to the first ``1 + i % len(topics)`` topics;
    - random: each topic with probability 1/2 (at least one).
    """
    if not topics:
        return ()
    if shape == "homogeneous":
        return tuple(topics)
    if shape == "disjoint":
        buckets = max(1, min(4, len(topics), count))
        bucket = index % buckets
        return tuple(t for i, t in enumerate(topics) if i % buckets == bucket)
    if shape == "nested":
        return tuple(topics[: 1 + index % len(topics)])
    if shape == "random":
        chosen = tuple(t for t in topics if rng.random() < 0.5)
        return chosen or (rng.choice(topics),)
    raise InvalidSpecError(f"unknown subscription shape {shape!r}; expected one of {SHAPES}")
