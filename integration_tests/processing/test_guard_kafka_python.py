"""The commit guard on kafka-python 3.0.x against Apache Kafka (issue 25): zombie commits
(a stale view after a revocation, during and after a loss, an auto-commit computed before a
revocation) are refused and the new owner's committed offset does not move; ``drop`` mode
commits the owned part of a mixed commit and names the rest in one WARNING line.

On the classic protocol the broker accepts all of these commits from a member that is still
in the group: without the guard each test's "unchanged" assertion fails.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import pytest
from guard_kafka_python_members import (
    LostRecorder,
    RevokeCommitter,
    committed,
    member,
    offsets,
    owned,
    poll_until,
)
from kafka import KafkaConsumer, TopicPartition

from kafka_sticky_plugin.brokers.embedded import RunningBroker
from kafka_sticky_plugin.errors import CommitRefusedError

pytestmark = [pytest.mark.timeout(180), pytest.mark.kafka_only()]

PARTITIONS = 4
NEW_OWNER_OFFSET = 5
ZOMBIE_OFFSET = 999


def _split_group(
    broker: RunningBroker, group: str, topic: str, mode: str = "refuse"
) -> tuple[KafkaConsumer, KafkaConsumer, set[TopicPartition], set[TopicPartition]]:
    """``a`` owns everything, then ``b`` joins and takes half (cooperative: two rounds);
    ``b`` commits ``NEW_OWNER_OFFSET`` on its half. Returns a, b, a's stale view, b's half."""
    a = member(broker.bootstrap, group, topic, mode)
    everything = {TopicPartition(topic, p) for p in range(PARTITIONS)}
    poll_until([a], lambda: owned(a) == everything)
    stale = owned(a)
    b = member(broker.bootstrap, group, topic, mode)
    poll_until(
        [a, b],
        lambda: len(owned(a)) == 2 and len(owned(b)) == 2 and not owned(a) & owned(b),
    )
    moved = owned(b)
    b.commit(offsets(moved, NEW_OWNER_OFFSET))
    return a, b, stale, moved


def test_zombie_commit_after_a_revoke_is_refused_and_the_owned_part_lands(
    broker: RunningBroker, topic_factory: Callable[[int], str], group_id: str
) -> None:
    topic = topic_factory(PARTITIONS)
    a, b, stale, moved = _split_group(broker, group_id, topic)
    try:
        kept = owned(a)
        with pytest.raises(CommitRefusedError) as refused:
            a.commit(offsets(stale, ZOMBIE_OFFSET))  # the stale view: all four partitions
        assert refused.value.refused == sorted((tp.topic, tp.partition) for tp in moved)
        assert all(f"{topic}-{tp.partition}" in str(refused.value) for tp in moved)
        seen = committed(broker.bootstrap, group_id, stale)
        assert {p: seen[p] for p in (tp.partition for tp in moved)} == {
            tp.partition: NEW_OWNER_OFFSET for tp in moved
        }, seen
        assert {seen[tp.partition] for tp in kept} == {ZOMBIE_OFFSET}, seen  # owned part landed
        # commit_async: the callback receives the refusal, the new owner's offsets stay
        outcome: list[object] = []
        a.commit_async(offsets(moved, ZOMBIE_OFFSET), callback=lambda _o, r: outcome.append(r))
        poll_until([a, b], lambda: bool(outcome), timeout_s=15)
        assert isinstance(outcome[0], CommitRefusedError), outcome
        # an auto-commit computed before the revoke and sent after it (as the client's
        # auto-commit does: commit_offsets_async of all consumed offsets)
        coordinator = a._coordinator
        coordinator.commit_offsets_async(
            offsets(stale, ZOMBIE_OFFSET + 1), coordinator._commit_offsets_async_on_complete
        )
        for _ in range(10):
            a.poll(timeout_ms=100)
        after = committed(broker.bootstrap, group_id, moved)
        assert after == {tp.partition: NEW_OWNER_OFFSET for tp in moved}, after
    finally:
        a.close(autocommit=False)
        b.close(autocommit=False)


def test_drop_mode_commits_the_owned_part_and_warns_once(
    broker: RunningBroker,
    topic_factory: Callable[[int], str],
    group_id: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="kafka_sticky_plugin.commit_guard")
    topic = topic_factory(PARTITIONS)
    a, b, stale, moved = _split_group(broker, group_id, topic, mode="drop")
    try:
        kept = owned(a)
        a.commit(offsets(stale, ZOMBIE_OFFSET))  # no exception in drop mode
        seen = committed(broker.bootstrap, group_id, stale)
        assert {seen[tp.partition] for tp in kept} == {ZOMBIE_OFFSET}, seen
        assert {seen[tp.partition] for tp in moved} == {NEW_OWNER_OFFSET}, seen
        lines = [r.getMessage() for r in caplog.records if "commit guard dropped" in r.getMessage()]
        assert len(lines) == 1, lines
        assert all(f"{topic}-{tp.partition}" in lines[0] for tp in moved), lines
    finally:
        a.close(autocommit=False)
        b.close(autocommit=False)


def test_zombie_commits_during_and_after_a_loss_are_refused(
    broker: RunningBroker, topic_factory: Callable[[int], str], group_id: str
) -> None:
    """``a`` stops polling past ``max_poll_interval_ms``: it leaves the group, ``b`` takes
    everything and commits. ``a``'s commit from ``on_partitions_lost`` and its commit from
    the stale view after it rejoined are both refused; ``b``'s offsets are unchanged."""
    topic = topic_factory(PARTITIONS)
    recorder = LostRecorder()
    a = member(broker.bootstrap, group_id, topic, listener=recorder, max_poll_interval_ms=3000)
    everything = {TopicPartition(topic, p) for p in range(PARTITIONS)}
    b = None
    try:
        poll_until([a], lambda: owned(a) == everything)
        b = member(broker.bootstrap, group_id, topic)
        poll_until([a, b], lambda: len(owned(a)) == 2 and len(owned(b)) == 2)
        stale = owned(a)
        time.sleep(4.5)  # a misses max_poll_interval_ms: its heartbeat leaves the group
        poll_until([b], lambda: owned(b) == everything)
        b.commit(offsets(everything, NEW_OWNER_OFFSET))
        poll_until(
            [a, b],
            lambda: (
                "lost" in recorder.calls
                and recorder.lost_commit_error is not None
                and len(owned(a)) == 2
            ),
        )
        assert isinstance(recorder.lost_commit_error, CommitRefusedError), (
            recorder.lost_commit_error
        )
        zombie = stale - owned(a)
        if zombie:  # a got other partitions back: its stale ones are refused
            with pytest.raises(CommitRefusedError):
                a.commit(offsets(zombie, ZOMBIE_OFFSET))
        seen = committed(broker.bootstrap, group_id, everything)
        assert seen == {p: NEW_OWNER_OFFSET for p in range(PARTITIONS)}, seen
    finally:
        a.close(autocommit=False)
        if b is not None:
            b.close(autocommit=False)


def test_a_commit_async_from_on_partitions_revoked_still_lands(
    broker: RunningBroker, topic_factory: Callable[[int], str], group_id: str
) -> None:
    """The guard refuses commits after the revocation, not the listener's own commit: the
    ``commit_async`` queued inside ``on_partitions_revoked`` lands for the moved partitions."""
    topic = topic_factory(PARTITIONS)
    committer = RevokeCommitter(7)
    a = member(broker.bootstrap, group_id, topic, listener=committer)
    b = None
    try:
        everything = {TopicPartition(topic, p) for p in range(PARTITIONS)}
        poll_until([a], lambda: owned(a) == everything)
        b = member(broker.bootstrap, group_id, topic)
        poll_until([a, b], lambda: len(owned(b)) == 2 and bool(committer.outcomes))
        assert not any(isinstance(o, Exception) for o in committer.outcomes), committer.outcomes
        seen = committed(broker.bootstrap, group_id, owned(b))
        assert set(seen.values()) == {7}, seen
    finally:
        a.close(autocommit=False)
        if b is not None:
            b.close(autocommit=False)
