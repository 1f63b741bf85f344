"""The kafka-python 3.x processing helper on a real broker (issue 25).

Work of 3x ``max_poll_interval_ms`` per record keeps the member in the group (one assignment,
no revoke or loss, the same generation at the end), every record is processed exactly once
and commits cover finished records only. A member whose partition is revoked while work is in
flight commits its finished work from the revoke callback and nothing after it; the next
owner starts there.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from kafka import ConsumerRebalanceListener, KafkaConsumer
from processing_runs import (
    WorkLog,
    check_commits_cover_finished,
    check_exactly_once,
    check_handover,
    fill,
)

from kafka_sticky_plugin.kafka_python import CooperativeStickyAssignor, Processor, install_hooks
from kafka_sticky_plugin.testing.embedded_broker import RunningBroker

pytestmark = pytest.mark.kafka_only()

POLL_INTERVAL_MS = 2000


class Recorder(ConsumerRebalanceListener):  # type: ignore[misc]
    """The user's listener: notes each callback (after the processor's own work)."""

    def __init__(self, log: WorkLog) -> None:
        self.log = log

    def on_partitions_revoked(self, revoked: set[Any]) -> None:
        self.log.callback("revoked", {(tp.topic, tp.partition) for tp in revoked})

    def on_partitions_assigned(self, assigned: set[Any]) -> None:
        self.log.callback("assigned", {(tp.topic, tp.partition) for tp in assigned})

    def on_partitions_lost(self, lost: set[Any]) -> None:
        self.log.callback("lost", {(tp.topic, tp.partition) for tp in lost})


class Member:
    """One consumer with a Processor whose work sleeps ``work_s``, run on a thread."""

    def __init__(
        self,
        bootstrap: str,
        topic: str,
        group: str,
        log: WorkLog,
        *,
        work_s: float,
        poll_interval_ms: int,
        revoke_wait_s: float,
    ) -> None:
        self.log = log
        self.consumer = KafkaConsumer(
            bootstrap_servers=bootstrap,
            group_id=group,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            partition_assignment_strategy=[CooperativeStickyAssignor],
            session_timeout_ms=6000,
            heartbeat_interval_ms=1000,
            max_poll_interval_ms=poll_interval_ms,
            max_poll_records=10,
        )
        install_hooks(self.consumer)

        def work(record: Any) -> None:
            time.sleep(work_s)
            log.done((record.topic, record.partition), record.offset)

        self.processor = Processor(
            self.consumer,
            work,
            workers=4,
            revoke_wait_s=revoke_wait_s,
            commit_interval_s=0.5,
            on_commit=lambda offsets: log.committed(
                {(tp.topic, tp.partition): o for tp, o in offsets.items()}
            ),
        )
        self.consumer.subscribe([topic], listener=self.processor.listener(Recorder(log)))
        self.stop = threading.Event()
        self.error: BaseException | None = None
        self.generations: list[int] = []
        self.thread = threading.Thread(target=self._run, name=log.name, daemon=True)
        self.thread.start()

    def _generation(self) -> None:
        generation = self.consumer._coordinator.generation_if_stable()
        if generation is not None and generation.generation_id not in self.generations:
            self.generations.append(generation.generation_id)

    def _run(self) -> None:
        try:
            while not self.stop.is_set():
                self.processor.poll(timeout_ms=200)
                self._generation()
            self.processor.close()
        except BaseException as exc:
            self.error = exc
        finally:
            self.consumer.close()

    def finish(self) -> None:
        self.stop.set()
        self.thread.join(60)
        assert not self.thread.is_alive(), f"{self.log.name} did not stop"
        assert self.error is None, f"{self.log.name} failed: {self.error!r}"


def _wait(condition: Any, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def test_processing_longer_than_the_poll_interval_keeps_the_member(
    broker: RunningBroker, topic_factory: Any, group_id: str
) -> None:
    """Work of 3x max_poll_interval_ms per record: no rebalance, exactly once, commits only
    of finished records, everything committed at the end."""
    topic = topic_factory(2)
    expected = fill(broker.bootstrap, topic, 2, 2)
    log = WorkLog("solo")
    member = Member(
        broker.bootstrap,
        topic,
        group_id,
        log,
        work_s=3 * POLL_INTERVAL_MS / 1000,
        poll_interval_ms=POLL_INTERVAL_MS,
        revoke_wait_s=1.0,
    )
    try:
        _wait(lambda: len(log.finished) == 4, 60, "4 records processed")
        time.sleep(1.5)  # one more commit round and a few polls in the same generation
        before_close = log.callback_names()  # close() revokes: not part of the run
    finally:
        member.finish()
    check_exactly_once(expected, log)
    check_commits_cover_finished(log)
    assert before_close == ["assigned"], log.callbacks
    assert len(member.generations) == 1, f"generations seen: {member.generations}"
    last = {p: o for _, p, o in log.commits}
    assert last == {p: n for p, n in expected.items()}


def test_revoked_partition_hands_over_its_finished_work(
    broker: RunningBroker, topic_factory: Any, group_id: str
) -> None:
    """A partition revoked while its work runs: the revoke callback waits, commits what
    finished, nothing is committed after it, the next owner starts there; exactly once."""
    topic = topic_factory(2)
    expected = fill(broker.bootstrap, topic, 2, 4)
    first_log, second_log = WorkLog("first"), WorkLog("second")
    first = Member(
        broker.bootstrap,
        topic,
        group_id,
        first_log,
        work_s=1.5,
        poll_interval_ms=8000,
        revoke_wait_s=5.0,
    )
    second = None
    try:
        _wait(lambda: len(first_log.finished) >= 2, 60, "the first member's work")
        second = Member(
            broker.bootstrap,
            topic,
            group_id,
            second_log,
            work_s=0.1,
            poll_interval_ms=8000,
            revoke_wait_s=5.0,
        )
        _wait(lambda: len(first_log.finished) + len(second_log.finished) >= 8, 90, "all records")
        time.sleep(1.0)
    finally:
        first.finish()
        if second is not None:
            second.finish()
    check_exactly_once(expected, first_log, second_log)
    check_commits_cover_finished(first_log, second_log)
    moved = {p for _, name, ps in first_log.callbacks[:-1] if name == "revoked" for p in ps}
    assert len(moved) == 1, first_log.callbacks
    (partition,) = moved
    start = check_handover(first_log, second_log, partition)
    print(f"handed over {partition} at offset {start}")
    assert 0 < start < expected[partition]  # the revoke landed while work was in flight
