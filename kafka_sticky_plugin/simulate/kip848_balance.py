"""The broker's ``uniform`` assignor on a heterogeneous group (members subscribe to different
topics), modelled: keep, hand out, then balance topic by topic.

Steps (as the broker's ``UniformHeterogeneousAssignmentBuilder`` in Apache Kafka 4.4 runs
them, written here in our own terms):

1. keep: every member keeps its current target partitions of the topics it still subscribes
   to (balance is restored later, by moving as few as needed);
2. hand out: topics with unassigned partitions, in topic order (partitions per subscriber
   descending, then fewer subscribers first, then topic), give each partition in turn to the
   least loaded of the topic's subscribers (:class:`_Balancer`);
3. balance: topics with at least two subscribers, in topic order, repeatedly: move partitions
   of the topic from its most loaded subscribers to its least loaded ones until their totals
   differ by at most one, until a whole pass moves nothing (at most :data:`MAX_PASSES`).

Members are dense indices (their position in member id order) and loads a flat list, because
the balancer's two cursors compare loads on every step. Balance is per topic's subscribers,
so overlapping subscriptions can end up to a few partitions apart between members that
share no topic (the broker documents the same).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..core.spec import TopicPartitionTuple

__all__ = ["MAX_PASSES", "uniform_heterogeneous"]

#: Passes over the topics in the balancing step (the broker's MAX_ITERATION_COUNT).
MAX_PASSES = 16


class _Balancer:
    """Two cursors over a topic's subscribers sorted by load (then index): one walking up the
    least loaded ones (to give to), one walking down the most loaded ones (to take from).

    ``loads`` is shared with the builder and changes as partitions move; each cursor keeps a
    range of members whose load was equal when the range was entered, and a level: once every
    member of the least loaded range has received one partition, its level rises by one and
    the range takes in the next members at that level (the most loaded range, mirrored). The
    topic is balanced once the two levels differ by at most one."""

    def __init__(self, loads: list[int]) -> None:
        self.loads = loads
        self.order: list[int] = []
        self.low_end = 0  # [0, low_end): the least loaded range
        self.low_level = -1
        self.low_next = 0
        self.high_start = 0  # [high_start, high_end): the most loaded range
        self.high_end = 0
        self.high_level = 1
        self.high_next = -1

    def start(self, members: Sequence[int]) -> int:
        """Reset for ``members`` (not empty); returns the spread of their loads."""
        loads = self.loads
        self.order = sorted(members, key=lambda m: (loads[m], m))
        first, last = loads[self.order[0]], loads[self.order[-1]]
        self.low_end, self.low_level, self.low_next = 0, first - 1, 0
        size = len(self.order)
        self.high_start, self.high_end, self.high_level, self.high_next = (
            size,
            size,
            last + 1,
            size - 1,
        )
        return last - first

    def least_loaded(self) -> int:
        """The member to give the next partition to (it is counted as having received it)."""
        order, loads = self.order, self.loads
        if self.low_next >= self.low_end:
            self.low_level += 1
            while self.low_end < len(order) and loads[order[self.low_end]] == self.low_level:
                self.low_end += 1
            self.low_next = 0
        member = order[self.low_next]
        self.low_next += 1
        return member

    def most_loaded(self) -> int:
        """The member to take the next partition from, or -1 when none is left."""
        order, loads = self.order, self.loads
        if self.high_next < self.high_start:
            if self.high_end <= self.high_start and self.high_start > 0:
                # Emptied by exclude(): restart the level from the next member down.
                self.high_level = loads[order[self.high_start - 1]]
            else:
                self.high_level -= 1
            while self.high_start > 0 and loads[order[self.high_start - 1]] == self.high_level:
                self.high_start -= 1
            self.high_next = self.high_end - 1
        if self.high_next < 0:
            return -1
        member = order[self.high_next]
        self.high_next -= 1
        return member

    def exclude(self) -> None:
        """Drop the member :meth:`most_loaded` just returned from the most loaded range (it
        has none of this topic's partitions to give)."""
        order, position = self.order, self.high_next + 1
        order[position], order[self.high_end - 1] = order[self.high_end - 1], order[position]
        self.high_end -= 1

    def balanced(self) -> bool:
        return self.high_level - self.low_level <= 1


class _Builder:
    """One heterogeneous assignment: per topic an owner array (member index or -1) and the
    members' loads."""

    def __init__(
        self,
        topics: Mapping[str, int],
        members: Sequence[tuple[str, Sequence[str], frozenset[TopicPartitionTuple]]],
    ) -> None:
        self.topics = topics
        self.member_ids = [m for m, _, _ in members]
        self.subscribers: dict[str, list[int]] = {}
        for index, (_, subscription, _) in enumerate(members):
            for topic in subscription:
                self.subscribers.setdefault(topic, []).append(index)
        self.loads = [0] * len(members)
        self.owners = {t: [-1] * topics[t] for t in self.subscribers}
        for index, (_, subscription, current) in enumerate(members):
            wanted = set(subscription)
            for topic, partition in current:
                if topic in wanted and partition < topics[topic]:
                    self.loads[index] += 1
                    self.owners[topic][partition] = index

    def topic_order(self, names: Sequence[str]) -> list[str]:
        def key(topic: str) -> tuple[float, int, str]:
            subscribers = len(self.subscribers[topic])
            return (-(self.topics[topic] / subscribers), subscribers, topic)

        return sorted(names, key=key)

    def move(self, topic: str, partition: int, member: int) -> None:
        owners = self.owners[topic]
        if owners[partition] != -1:
            self.loads[owners[partition]] -= 1
        owners[partition] = member
        self.loads[member] += 1

    def hand_out(self) -> None:
        unassigned = {
            t: [p for p, owner in enumerate(owners) if owner == -1]
            for t, owners in self.owners.items()
        }
        balancer = _Balancer(self.loads)
        for topic in self.topic_order([t for t, ps in unassigned.items() if ps]):
            balancer.start(self.subscribers[topic])
            for partition in unassigned[topic]:
                self.move(topic, partition, balancer.least_loaded())

    def balance(self) -> None:
        movable = self.topic_order([t for t, s in self.subscribers.items() if len(s) >= 2])
        if not movable:
            return
        balancer = _Balancer(self.loads)
        last_moved = -1
        for _ in range(MAX_PASSES):
            for index, topic in enumerate(movable):
                if index == last_moved:
                    return  # a whole pass since the last move: nothing more to gain
                moved = self.balance_topic(topic, balancer)
                if moved > 0 or last_moved == -1:
                    last_moved = index

    def balance_topic(self, topic: str, balancer: _Balancer) -> int:
        if balancer.start(self.subscribers[topic]) <= 1:
            return 0
        owners = self.owners[topic]
        # The topic's partitions grouped by owner, so "an owner's last partition" is O(1).
        grouped = sorted(range(len(owners)), key=lambda p: (owners[p], p))
        first: dict[int, int] = {}
        end: dict[int, int] = {}
        for position, partition in enumerate(grouped):
            first.setdefault(owners[partition], position)
            end[owners[partition]] = position + 1
        moved = 0
        while not balancer.balanced():
            giver = balancer.most_loaded()
            while giver != -1 and end.get(giver, 0) - first.get(giver, 0) <= 0:
                balancer.exclude()
                giver = balancer.most_loaded()
            if giver == -1:
                break
            end[giver] -= 1
            partition = grouped[end[giver]]
            taker = balancer.least_loaded()
            if balancer.balanced():
                break
            self.move(topic, partition, taker)
            moved += 1
        return moved

    def plan(self) -> dict[str, list[TopicPartitionTuple]]:
        out: dict[str, list[TopicPartitionTuple]] = {m: [] for m in self.member_ids}
        for topic in sorted(self.owners):
            for partition, owner in enumerate(self.owners[topic]):
                if owner != -1:
                    out[self.member_ids[owner]].append((topic, partition))
        return out


def uniform_heterogeneous(
    topics: Mapping[str, int],
    members: Sequence[tuple[str, Sequence[str], frozenset[TopicPartitionTuple]]],
) -> dict[str, list[TopicPartitionTuple]]:
    """The target of a heterogeneous group. ``members`` are ``(member_id, subscription,
    current target)`` in the order that makes their indices (member id order); every
    subscribed topic must be in ``topics``."""
    builder = _Builder(topics, members)
    builder.hand_out()
    builder.balance()
    return builder.plan()
