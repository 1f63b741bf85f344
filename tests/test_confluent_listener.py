"""Listener translation on real (unconnected) confluent-kafka consumers.

A consumer that has not joined a group has no rebalance protocol yet, so librdkafka accepts
both kinds of assignment call; these tests drive the bridge's callbacks directly and read the
consumer's real assignment back. The protocol the broker-joined consumer enforces is checked
in ``integration_tests/test_confluent_interop.py``.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import confluent_kafka
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_sticky_plugin.confluent import (
    RebalanceBridge,
    RebalanceProtocol,
    TopicPartition,
    commit_positions,
)

COOPERATIVE = RebalanceProtocol.COOPERATIVE
EAGER = RebalanceProtocol.EAGER


class RecordingListener:
    """Records each listener call as (method, sorted partitions, assignment at call time)."""

    def __init__(self, consumer: confluent_kafka.Consumer) -> None:
        self.consumer = consumer
        self.calls: list[tuple[str, list[TopicPartition], set[TopicPartition]]] = []

    def _record(self, method: str, partitions: set[TopicPartition]) -> None:
        now = {TopicPartition(tp.topic, tp.partition) for tp in self.consumer.assignment()}
        self.calls.append((method, sorted(partitions), now))

    def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        self._record("revoked", revoked)

    def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        self._record("assigned", assigned)

    def on_partitions_lost(self, lost: set[TopicPartition]) -> None:
        self._record("lost", lost)


class RevokeOnlyListener:
    """A listener without ``on_partitions_lost`` (allowed: lost falls back to revoked)."""

    def __init__(self) -> None:
        self.revoked: list[set[TopicPartition]] = []

    def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        self.revoked.append(revoked)

    def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        """Not needed by these tests."""


class FailingListener(RecordingListener):
    """Raises from every callback after recording it."""

    def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        super().on_partitions_revoked(revoked)
        raise RuntimeError("listener failed on revoke")

    def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        super().on_partitions_assigned(assigned)
        raise RuntimeError("listener failed on assign")


@pytest.fixture
def consumer() -> Iterator[confluent_kafka.Consumer]:
    """A real librdkafka consumer with no broker configured (no network activity)."""
    made = confluent_kafka.Consumer({"group.id": "unit", "log_level": 0})
    try:
        yield made
    finally:
        made.close()


def parts(*numbers: int, topic: str = "t") -> list[confluent_kafka.TopicPartition]:
    return [confluent_kafka.TopicPartition(topic, n) for n in numbers]


def owned(consumer: confluent_kafka.Consumer) -> set[TopicPartition]:
    return {TopicPartition(tp.topic, tp.partition) for tp in consumer.assignment()}


def tps(*numbers: int, topic: str = "t") -> set[TopicPartition]:
    return {TopicPartition(topic, n) for n in numbers}


def test_topic_partition_equals_kafka_pythons() -> None:
    """Listener values compare and hash equal to kafka-python's TopicPartition."""
    from kafka import TopicPartition as KafkaPythonTopicPartition

    ours = TopicPartition("t", 3)
    theirs = KafkaPythonTopicPartition("t", 3)
    assert ours == theirs
    assert hash(ours) == hash(theirs)
    assert (ours.topic, ours.partition) == ("t", 3)


def test_cooperative_assign_is_incremental_and_precedes_the_listener(
    consumer: confluent_kafka.Consumer,
) -> None:
    """COOPERATIVE on_assign adds to the assignment, then the listener sees only the additions."""
    listener = RecordingListener(consumer)
    bridge = RebalanceBridge(listener, COOPERATIVE, commit_on_revoke=False)
    bridge.on_assign(consumer, parts(0, 1))
    bridge.on_assign(consumer, parts(2))
    assert owned(consumer) == tps(0, 1, 2)
    assert listener.calls == [
        ("assigned", sorted(tps(0, 1)), tps(0, 1)),
        ("assigned", sorted(tps(2)), tps(0, 1, 2)),
    ]


def test_cooperative_revoke_removes_only_the_revoked(consumer: confluent_kafka.Consumer) -> None:
    """COOPERATIVE on_revoke: the listener runs while the member still owns them; others stay."""
    listener = RecordingListener(consumer)
    bridge = RebalanceBridge(listener, COOPERATIVE, commit_on_revoke=False)
    bridge.on_assign(consumer, parts(0, 1, 2))
    bridge.on_revoke(consumer, parts(1))
    assert owned(consumer) == tps(0, 2)
    assert listener.calls[-1] == ("revoked", sorted(tps(1)), tps(0, 1, 2))


def test_cooperative_empty_revoke_is_not_reported(consumer: confluent_kafka.Consumer) -> None:
    """COOPERATIVE: an empty revocation is not passed to the listener (Java's behaviour)."""
    listener = RecordingListener(consumer)
    bridge = RebalanceBridge(listener, COOPERATIVE, commit_on_revoke=True)
    bridge.on_assign(consumer, parts(0))
    bridge.on_revoke(consumer, [])
    bridge.on_lost(consumer, [])
    assert [call[0] for call in listener.calls] == ["assigned"]
    assert owned(consumer) == tps(0)


def test_empty_assignment_is_reported(consumer: confluent_kafka.Consumer) -> None:
    """on_partitions_assigned runs at every completed rebalance, also with nothing new."""
    listener = RecordingListener(consumer)
    RebalanceBridge(listener, COOPERATIVE, commit_on_revoke=False).on_assign(consumer, [])
    assert listener.calls == [("assigned", [], set())]


def test_eager_replaces_the_whole_assignment(consumer: confluent_kafka.Consumer) -> None:
    """EAGER: revoke drops everything (listener first), assign installs the new full set."""
    listener = RecordingListener(consumer)
    bridge = RebalanceBridge(listener, EAGER, commit_on_revoke=False)
    bridge.on_assign(consumer, parts(0, 1))
    bridge.on_revoke(consumer, parts(0, 1))
    assert owned(consumer) == set()
    bridge.on_assign(consumer, parts(1, 2))
    assert owned(consumer) == tps(1, 2)
    assert listener.calls == [
        ("assigned", sorted(tps(0, 1)), tps(0, 1)),
        ("revoked", sorted(tps(0, 1)), tps(0, 1)),
        ("assigned", sorted(tps(1, 2)), tps(1, 2)),
    ]


def test_eager_reports_empty_revocations(consumer: confluent_kafka.Consumer) -> None:
    """EAGER: on_partitions_revoked runs at every rebalance, as in Java, even when empty."""
    listener = RecordingListener(consumer)
    RebalanceBridge(listener, EAGER, commit_on_revoke=False).on_revoke(consumer, [])
    assert listener.calls == [("revoked", [], set())]


@pytest.mark.parametrize("protocol", [COOPERATIVE, EAGER])
def test_lost_goes_to_on_partitions_lost(
    consumer: confluent_kafka.Consumer, protocol: RebalanceProtocol
) -> None:
    """on_lost calls on_partitions_lost (not revoked) and drops the partitions."""
    listener = RecordingListener(consumer)
    bridge = RebalanceBridge(listener, protocol, commit_on_revoke=True)
    bridge.on_assign(consumer, parts(0, 1))
    bridge.on_lost(consumer, parts(0, 1))
    assert listener.calls[-1] == ("lost", sorted(tps(0, 1)), tps(0, 1))
    assert owned(consumer) == set()


def test_lost_falls_back_to_revoked_without_on_partitions_lost(
    consumer: confluent_kafka.Consumer,
) -> None:
    """A listener without on_partitions_lost is told through on_partitions_revoked."""
    listener = RevokeOnlyListener()
    bridge = RebalanceBridge(listener, COOPERATIVE, commit_on_revoke=False)
    bridge.on_assign(consumer, parts(0, 1, 2))
    bridge.on_lost(consumer, parts(2))
    assert listener.revoked == [tps(2)]
    assert owned(consumer) == tps(0, 1)


@pytest.mark.parametrize("protocol", [COOPERATIVE, EAGER])
def test_a_failing_listener_still_leaves_librdkafka_consistent(
    consumer: confluent_kafka.Consumer, protocol: RebalanceProtocol
) -> None:
    """The assignment change happens even when the listener raises; the error propagates."""
    listener = FailingListener(consumer)
    bridge = RebalanceBridge(listener, protocol, commit_on_revoke=True)
    with pytest.raises(RuntimeError, match="on assign"):
        bridge.on_assign(consumer, parts(0, 1))
    assert owned(consumer) == tps(0, 1)
    with pytest.raises(RuntimeError, match="on revoke"):
        bridge.on_revoke(consumer, parts(0, 1))
    assert owned(consumer) == set()


def test_nothing_consumed_means_nothing_to_commit(consumer: confluent_kafka.Consumer) -> None:
    """Partitions without a position (nothing read since assignment) are not committed."""
    consumer.assign(parts(0, 1))
    assert commit_positions(consumer, parts(0, 1)) == []


@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_cooperative_bridge_tracks_the_model_assignment(seed: int) -> None:
    """Random assign/revoke/lost sequences: the real assignment equals the listener's view.

    The listener's view is: everything ever passed to on_partitions_assigned minus everything
    passed to on_partitions_revoked / on_partitions_lost. Seeded (the seed is in the failure).
    """
    rng = random.Random(seed)
    made = confluent_kafka.Consumer({"group.id": "unit", "log_level": 0})
    try:
        listener = RecordingListener(made)
        bridge = RebalanceBridge(listener, COOPERATIVE, commit_on_revoke=False)
        model: set[TopicPartition] = set()
        universe = sorted(tps(*range(6), topic="a") | tps(*range(3), topic="b"))
        for _ in range(12):
            free = [tp for tp in universe if tp not in model]
            held = sorted(model)
            event = rng.choice(["assign", "revoke", "lost"])
            if event == "assign":
                chosen = rng.sample(free, rng.randint(0, len(free)))
                bridge.on_assign(made, [confluent_kafka.TopicPartition(*tp) for tp in chosen])
                model |= set(chosen)
            else:
                chosen = rng.sample(held, rng.randint(0, len(held)))
                callback = bridge.on_revoke if event == "revoke" else bridge.on_lost
                callback(made, [confluent_kafka.TopicPartition(*tp) for tp in chosen])
                model -= set(chosen)
            assert owned(made) == model, f"seed={seed} after {event} {sorted(chosen)}"
        seen: set[TopicPartition] = set()
        for method, partitions, _ in listener.calls:
            seen = seen | set(partitions) if method == "assigned" else seen - set(partitions)
        assert seen == model, f"seed={seed}"
    finally:
        made.close()
