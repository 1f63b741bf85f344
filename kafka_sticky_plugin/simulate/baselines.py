"""kafka-python 3.0.12's own assignors, driven through their real ``assign(cluster, members)``.

Each member is a real ``JoinGroupResponseMember`` whose metadata is a real
``ConsumerProtocolSubscription``, filled in the way kafka-python's own client fills it:

- range and round-robin: version 0, no user data;
- sticky (eager): version 0, user data = the encoded ``StickyAssignorUserData`` v1 (previous
  assignment and generation) once the member has had an assignment, empty before;
- cooperative-sticky: version 1 with ``owned_partitions`` and no generation (kafka-python's
  cooperative assignor sends version 1, so the leader sees generation -1 for everyone).

The cluster is the minimum these assignors call: ``topics()`` and ``partitions_for_topic``.
kafka-python is imported only here, and only when a baseline is asked for.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from ..core.spec import TopicPartitionTuple
from ..errors import ConfigurationError
from .group import Member

__all__ = ["SimulatedCluster", "kafka_python_assign_fn"]

Plan = dict[str, list[TopicPartitionTuple]]


class SimulatedCluster:
    """The part of kafka-python's ``ClusterMetadata`` its assignors read."""

    def __init__(self, partitions_per_topic: Mapping[str, int]) -> None:
        self._partitions = dict(partitions_per_topic)

    def topics(self, exclude_internal_topics: bool = True) -> set[str]:
        return set(self._partitions)

    def partitions_for_topic(self, topic: str) -> set[int] | None:
        count = self._partitions.get(topic)
        return None if count is None else set(range(count))


def _by_topic(owned: frozenset[TopicPartitionTuple]) -> list[tuple[str, list[int]]]:
    grouped: dict[str, list[int]] = defaultdict(list)
    for topic, partition in owned:
        grouped[topic].append(partition)
    return sorted((t, sorted(ps)) for t, ps in grouped.items())


def _subscription(kind: str, member: Member) -> Any:
    from kafka.coordinator.assignors.sticky.user_data import StickyAssignorUserData
    from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription

    topics = list(member.topics)
    if kind == "cooperative-sticky":
        owned = [
            ConsumerProtocolSubscription.TopicPartition(topic=t, partitions=ps)
            for t, ps in _by_topic(member.owned)
        ]
        return ConsumerProtocolSubscription(
            version=1, topics=sorted(topics), user_data=b"", owned_partitions=owned
        )
    if kind == "sticky" and member.generation >= 0:
        user_data = StickyAssignorUserData(_by_topic(member.owned), member.generation).encode()
        return ConsumerProtocolSubscription(version=0, topics=topics, user_data=user_data)
    return ConsumerProtocolSubscription(version=0, topics=topics, user_data=b"")


def _assignor(kind: str) -> Any:
    from kafka.coordinator.assignors.cooperative_sticky import CooperativeStickyAssignor
    from kafka.coordinator.assignors.range import RangePartitionAssignor
    from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
    from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor

    if kind == "range":
        return RangePartitionAssignor()
    if kind == "roundrobin":
        return RoundRobinPartitionAssignor()
    if kind == "sticky":
        return StickyPartitionAssignor()
    if kind == "cooperative-sticky":
        return CooperativeStickyAssignor()
    raise ConfigurationError(f"unknown kafka-python assignor {kind!r}")


class _KafkaPythonAssign:
    """A callable running one kafka-python assignor (a fresh instance per call: no state)."""

    def __init__(self, kind: str) -> None:
        _assignor(kind)  # fail early on an unknown kind or a missing kafka-python
        self.kind = kind

    def __call__(
        self, partitions_per_topic: Mapping[str, int], members: Sequence[Member]
    ) -> tuple[Plan, float]:
        from kafka.protocol.consumer.group import JoinGroupResponse

        join_member = JoinGroupResponse.JoinGroupResponseMember
        wire_members = [
            join_member(
                member_id=m.member_id, group_instance_id=None, metadata=_subscription(self.kind, m)
            )
            for m in members
        ]
        assignor = _assignor(self.kind)
        cluster = SimulatedCluster(partitions_per_topic)
        start = time.perf_counter()
        result = assignor.assign(cluster, wire_members)
        seconds = time.perf_counter() - start
        plan: Plan = {m.member_id: [] for m in members}
        for member_id, assignment in result.items():
            plan[member_id] = sorted(
                (topic, p) for topic, parts in assignment.assigned_partitions for p in parts
            )
        return plan, seconds


def kafka_python_assign_fn(kind: str) -> _KafkaPythonAssign:
    """The assign function of kafka-python's ``kind`` assignor (range, roundrobin, sticky,
    cooperative-sticky)."""
    return _KafkaPythonAssign(kind)
