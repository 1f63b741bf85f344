"""Models of the broker's KIP-848 server-side assignors, ``uniform`` and ``range``.

Apache Kafka 4.x computes a consumer group's *target assignment* on the broker
(``org.apache.kafka.coordinator.group.assignor``): ``UniformAssignor`` (the default,
``group.consumer.assignors``) with one builder for a homogeneous group (every member
subscribes to the same topics) and one for a heterogeneous group, and ``RangeAssignor``.
These are our own implementations of the same algorithms, written from the 4.4 behaviour,
so the simulator can put the broker's assignors next to ours; they are checked plan for plan
against the broker's own classes by ``tests/test_kip848_assignors_crosscheck.py``.

Input (:class:`BrokerGroup`): the topics' partition counts, and each member's id,
subscription and *current target assignment* (what the broker assigned it at the previous
target epoch, not what it owns now: the broker assigns from its own records). Output: the
new target, every member present (possibly empty).

Order, which the broker leaves to hash maps and random topic ids: members are taken in
ascending member id order, topics in ascending name order, partitions in ascending order. The
broker iterates its member map in hash order and orders topics by their (random) ids, so on
a real broker ties fall differently from cluster to cluster; the cross-check hands the Java
classes the same orders, which is what makes plan-for-plan equality testable.

Invariants of a plan (checked by ``tests/test_kip848_assignors.py``): every partition of a
subscribed topic is assigned exactly once, only to a subscriber; ``uniform`` on a
homogeneous group differs by at most one partition between any two members; ``range`` gives
each subscriber of a topic a contiguous range, sizes differing by at most one per topic.
Rack-aware placement is not modelled: the broker's assignors dropped it in 3.8 (KAFKA-16694).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..core.spec import TopicPartitionTuple
from ..errors import InvalidSpecError
from .kip848_balance import uniform_heterogeneous

__all__ = [
    "KIP848_ASSIGNORS",
    "BrokerGroup",
    "BrokerMember",
    "Target",
    "broker_assign",
    "is_homogeneous",
    "range_assign",
    "uniform_assign",
]

#: member id -> the partitions of its target assignment, sorted
Target = dict[str, list[TopicPartitionTuple]]


@dataclass(frozen=True)
class BrokerMember:
    """One member as the broker's assignor sees it: subscription and current target."""

    member_id: str
    topics: tuple[str, ...]
    current: frozenset[TopicPartitionTuple] = frozenset()


@dataclass(frozen=True)
class BrokerGroup:
    """The group handed to an assignor: topic partition counts and the members."""

    topics: Mapping[str, int]
    members: tuple[BrokerMember, ...]

    def sorted_members(self) -> list[BrokerMember]:
        return sorted(self.members, key=lambda m: m.member_id)

    def subscription(self, member: BrokerMember) -> list[str]:
        """The member's subscribed topics that exist, in name order (the broker resolves
        names to ids and drops unknown topics before assigning)."""
        return sorted(t for t in set(member.topics) if t in self.topics)


def is_homogeneous(group: BrokerGroup) -> bool:
    """Whether every member subscribes to the same (existing) topics: the broker's
    ``SubscriptionType.HOMOGENEOUS``, which picks the builder."""
    subscriptions = {tuple(group.subscription(m)) for m in group.members}
    return len(subscriptions) <= 1


def _empty_target(group: BrokerGroup) -> Target:
    return {m.member_id: [] for m in group.members}


def _uniform_homogeneous(group: BrokerGroup) -> Target:
    """Every member subscribes to the same topics: quotas of ``total // members``, and
    ``total % members`` of them one more. Members in order each keep their current partitions
    up to their quota (topics and partitions in order); a member takes one of the extras while
    any is left, and gives it back when it does not fill it and enough members remain to take
    every extra. The partitions beyond quotas, and every partition nobody holds, are then
    handed out in order to members still under quota."""
    members = group.sorted_members()
    subscribed = group.subscription(members[0])
    target = _empty_target(group)
    if not subscribed:
        return target
    held = {tp for m in members for tp in m.current}
    unassigned = [(t, p) for t in subscribed for p in range(group.topics[t]) if (t, p) not in held]
    total = sum(group.topics[t] for t in subscribed)
    min_quota, extra = divmod(total, len(members))
    wanted = set(subscribed)
    unfilled: list[tuple[str, int]] = []
    for index, member in enumerate(members):
        has_extra = extra > 0
        quota = min_quota + (1 if has_extra else 0)
        kept: list[TopicPartitionTuple] = []
        by_topic: dict[str, list[int]] = {}
        for topic, partition in sorted(member.current):
            by_topic.setdefault(topic, []).append(partition)
        for topic, partitions in by_topic.items():
            if topic not in wanted:
                continue  # no longer subscribed: dropped, not handed out again
            keep = partitions if len(partitions) <= quota else partitions[:quota]
            kept += [(topic, p) for p in keep]
            unassigned += [(topic, p) for p in partitions[len(keep) :]]
            quota -= len(keep)
        target[member.member_id] = kept
        if quota > 0 and has_extra and len(members) - index > extra:
            # Room left under the extra: hand the extra back for a later member that may
            # already hold quota + 1, as long as enough members remain to take every extra.
            quota -= 1
            has_extra = False
        extra -= 1 if has_extra else 0
        if quota > 0:
            unfilled.append((member.member_id, quota))
    cursor = 0
    for member_id, quota in unfilled:
        take = unassigned[cursor : cursor + quota]
        cursor += len(take)
        target[member_id] += take
    if cursor < len(unassigned):
        raise InvalidSpecError("uniform assignor: partitions were left unassigned")
    return {m: sorted(tps) for m, tps in target.items()}


def uniform_assign(group: BrokerGroup) -> Target:
    """The broker's ``uniform`` assignor: balance first, then stickiness to the current
    target; the homogeneous builder when every subscription is the same, else the
    heterogeneous one (:func:`~.kip848_balance.uniform_heterogeneous`)."""
    if not group.members:
        return {}
    if is_homogeneous(group):
        return _uniform_homogeneous(group)
    members = group.sorted_members()
    return uniform_heterogeneous(
        group.topics,
        [(m.member_id, group.subscription(m), m.current) for m in members],
    )


def range_assign(group: BrokerGroup) -> Target:
    """The broker's ``range`` assignor: for each topic, its subscribers (in member id order;
    the broker puts members with an instance id first, by instance id: the simulator has no
    static members) get contiguous ranges of ``partitions // subscribers``, the first
    ``partitions % subscribers`` one more. Not sticky: the current target is not read."""
    members = group.sorted_members()
    subscribers: dict[str, int] = {}
    for member in members:
        for topic in group.subscription(member):
            subscribers[topic] = subscribers.get(topic, 0) + 1
    next_start = dict.fromkeys(subscribers, 0)
    extra = {t: group.topics[t] % n for t, n in subscribers.items()}
    target = _empty_target(group)
    for member in members:
        for topic in group.subscription(member):
            count = group.topics[topic]
            start = next_start[topic]
            if start >= count:
                continue
            end = min(start + count // subscribers[topic], count)
            if extra[topic] > 0:
                end += 1
                extra[topic] -= 1
            next_start[topic] = end
            target[member.member_id] += [(topic, p) for p in range(start, end)]
    return {m: sorted(tps) for m, tps in target.items()}


#: The broker's assignor names (``group.consumer.assignors``) and their models.
KIP848_ASSIGNORS = {"uniform": uniform_assign, "range": range_assign}


def broker_assign(name: str, group: BrokerGroup) -> Target:
    """Run the model of the broker's assignor ``name`` (``uniform`` or ``range``)."""
    try:
        assign = KIP848_ASSIGNORS[name]
    except KeyError:
        raise InvalidSpecError(
            f"unknown broker assignor {name!r}; expected one of {sorted(KIP848_ASSIGNORS)}"
        ) from None
    return assign(group)


def group_of(
    topics: Mapping[str, int],
    members: Sequence[tuple[str, Sequence[str], frozenset[TopicPartitionTuple]]],
) -> BrokerGroup:
    """A :class:`BrokerGroup` from plain tuples ``(member_id, topics, current)``."""
    return BrokerGroup(
        dict(topics), tuple(BrokerMember(m, tuple(ts), frozenset(cur)) for m, ts, cur in members)
    )
