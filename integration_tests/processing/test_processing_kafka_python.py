"""The kafka-python 3.x processing helper on a real broker (issue 25).

Work of 3x ``max_poll_interval_ms`` per record keeps the member in the group (one assignment,
no revoke or loss, one generation), every record is processed exactly once and commits cover
finished records only. A member whose partition is revoked while work is in flight commits
its finished work from the revoke callback and nothing after it; the next owner starts there.
The scenarios are in :mod:`processing_runs` (the same for every client).
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from kafka import KafkaConsumer
from processing_runs import MemberThread, Recorder, WorkLog, long_work_run, revoke_run

from kafka_sticky_plugin.kafka_python import CooperativeStickyAssignor, Processor, install_hooks
from kafka_sticky_plugin.testing.embedded_broker import RunningBroker

pytestmark = pytest.mark.kafka_only()


class Member(MemberThread):
    """A KafkaConsumer with the hooks and a Processor whose work sleeps ``work_s``."""

    def __init__(
        self,
        bootstrap: str,
        group: str,
        topic: str,
        log: WorkLog,
        *,
        work_s: float,
        poll_interval_ms: int,
        revoke_wait_s: float,
    ) -> None:
        consumer = KafkaConsumer(
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
        install_hooks(consumer)

        def work(record: Any) -> None:
            time.sleep(work_s)
            log.done((record.topic, record.partition), record.offset)

        processor = Processor(
            consumer,
            work,
            workers=4,
            revoke_wait_s=revoke_wait_s,
            commit_interval_s=0.5,
            on_commit=lambda offsets: log.committed(
                {(tp.topic, tp.partition): o for tp, o in offsets.items()}
            ),
        )
        consumer.subscribe([topic], listener=processor.listener(Recorder(log)))
        self.generations: list[tuple[float, int]] = []  # (when first seen, generation)

        def turn() -> None:
            processor.poll(timeout_ms=200)
            generation = consumer._coordinator.generation_if_stable()
            seen = [g for _, g in self.generations]
            if generation is not None and generation.generation_id not in seen:
                self.generations.append((time.monotonic(), generation.generation_id))

        def close() -> None:
            try:
                processor.close()
            finally:
                consumer.close()

        super().__init__(log, turn, close)


def test_processing_longer_than_the_poll_interval_keeps_the_member(
    broker: RunningBroker, topic_factory: Any, group_id: str
) -> None:
    """Work of 3x max_poll_interval_ms per record: no rebalance (one generation), exactly
    once, commits only of finished records, everything committed at the end."""
    members: list[Member] = []

    def make(topic: str, log: WorkLog, **options: Any) -> Member:
        members.append(Member(broker.bootstrap, group_id, topic, log, **options))
        return members[-1]

    log = long_work_run(broker.bootstrap, topic_factory(2), make, poll_interval_ms=2000)
    first_done = min(t for t, _, _ in log.finished)
    later = [g for t, g in members[0].generations if t > first_done]
    assert later == [], f"a new generation while working: {members[0].generations}"


def test_revoked_partition_hands_over_its_finished_work(
    broker: RunningBroker, topic_factory: Any, group_id: str
) -> None:
    """A partition revoked while its work runs: the revoke callback waits, commits what
    finished, nothing is committed after it, the next owner starts there; exactly once."""
    revoke_run(
        broker.bootstrap,
        topic_factory(2),
        lambda topic, log, **options: Member(broker.bootstrap, group_id, topic, log, **options),
    )
