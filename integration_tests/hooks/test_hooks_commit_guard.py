"""The commit guard on every kafka-python family (run once per matrix version: 2.0.2, 2.2,
2.3, kafka-python-ng 2.2, 3.0): after ``b`` joins and takes half of ``a``'s partitions, ``a``
commits from its stale view; the moved partitions are refused (``CommitRefusedError`` naming
them) and keep ``b``'s offsets, ``a``'s own part lands. The full set of guard scenarios runs
on 3.0 in ``integration_tests/processing/test_guard_kafka_python.py``."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from hooks_harness import create_topics, unique
from kafka import KafkaConsumer, TopicPartition
from kafka.coordinator.base import MemberState
from kafka.structs import OffsetAndMetadata

from kafka_sticky_plugin import CooperativeStickyAssignor
from kafka_sticky_plugin.errors import CommitRefusedError
from kafka_sticky_plugin.kafka_python import guard_commits, install_hooks

pytestmark = [pytest.mark.timeout(180), pytest.mark.kafka_only()]

PARTITIONS = 4


def _offset(value: int) -> Any:
    """``OffsetAndMetadata`` in this client's shape (3.0 added ``leader_epoch``)."""
    if len(OffsetAndMetadata._fields) == 3:
        return OffsetAndMetadata(value, "", -1)
    return OffsetAndMetadata(value, "")


class _Polled:
    """One guarded member polled by its own thread (2.x joins block inside ``poll``, so two
    members cannot share a thread); :meth:`run` calls a function on the poll thread."""

    def __init__(self, bootstrap: str, group: str, topic: str) -> None:
        self._commands: queue.Queue[Callable[[KafkaConsumer], None]] = queue.Queue()
        self._stop = threading.Event()
        self._ready = threading.Event()
        self.assignment: frozenset[TopicPartition] = frozenset()
        self.error: BaseException | None = None
        self._args = (bootstrap, group, topic)
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        bootstrap, group, topic = self._args
        try:
            consumer = KafkaConsumer(
                bootstrap_servers=bootstrap,
                group_id=group,
                enable_auto_commit=False,
                partition_assignment_strategy=[CooperativeStickyAssignor],
                session_timeout_ms=6000,
                heartbeat_interval_ms=500,
            )
            consumer.subscribe([topic])
            install_hooks(consumer)
            guard_commits(consumer)
            try:
                while not self._stop.is_set():
                    while not self._commands.empty():
                        self._commands.get_nowait()(consumer)
                    consumer.poll(timeout_ms=100)
                    coordinator = consumer._coordinator
                    stable = coordinator.state == MemberState.STABLE
                    if stable and not coordinator.need_rejoin():
                        self.assignment = frozenset(consumer.assignment())
            finally:
                consumer.close(autocommit=False)
        except BaseException as exc:  # surfaced by run() and stop()
            self.error = exc

    def run(self, fn: Callable[[KafkaConsumer], Any]) -> Any:
        """``fn(consumer)`` on the poll thread: its result, or what it raised, returned."""
        answer: queue.Queue[Any] = queue.Queue()

        def call(consumer: KafkaConsumer) -> None:
            try:
                answer.put(fn(consumer))
            except Exception as exc:
                answer.put(exc)

        self._commands.put(call)
        return answer.get(timeout=30)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(30)
        assert self.error is None, repr(self.error)


def _until(done: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 45
    while not done():
        assert time.monotonic() < deadline, "the group did not settle"
        time.sleep(0.1)


def test_a_stale_commit_is_refused_for_the_moved_partitions(broker: Any) -> None:
    topic, group = unique("t-guard"), unique("g-guard")
    create_topics(broker.bootstrap, {topic: PARTITIONS})
    a = _Polled(broker.bootstrap, group, topic)
    b = None
    try:
        everything = {TopicPartition(topic, p) for p in range(PARTITIONS)}
        _until(lambda: a.assignment == everything)
        b = _Polled(broker.bootstrap, group, topic)
        _until(lambda: len(a.assignment) == 2 and len(b.assignment) == 2)
        assert b is not None
        moved, kept = set(b.assignment), set(a.assignment)
        for _ in range(20):  # until b's cooperative follow-up round is over
            if b.run(lambda c: c.commit({tp: _offset(5) for tp in moved})) is None:
                break
            time.sleep(0.3)
        refused = a.run(lambda c: c.commit({tp: _offset(999) for tp in everything}))
        assert isinstance(refused, CommitRefusedError), refused
        assert refused.refused == sorted((tp.topic, tp.partition) for tp in moved)
        seen = b.run(lambda c: {tp.partition: c.committed(tp) for tp in everything})
        assert {seen[tp.partition] for tp in moved} == {5}, seen
        assert {seen[tp.partition] for tp in kept} == {999}, seen
    finally:
        a.stop()
        if b is not None:
            b.stop()
