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
from processing_runs import (
    MemberThread,
    Recorder,
    WorkLog,
    check_exactly_once,
    fill,
    long_work_run,
    revoke_run,
)

from kafka_sticky_plugin.brokers.embedded import RunningBroker
from kafka_sticky_plugin.kafka_python import CooperativeStickyAssignor, Processor, install_hooks
from kafka_sticky_plugin.processing import ProcessingError

pytestmark = pytest.mark.kafka_only()


def _consumer(bootstrap: str, group: str, **config: Any) -> KafkaConsumer:
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=group,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        partition_assignment_strategy=[CooperativeStickyAssignor],
        **config,
    )
    install_hooks(consumer)
    return consumer


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
        consumer = _consumer(
            bootstrap,
            group,
            session_timeout_ms=6000,
            heartbeat_interval_ms=1000,
            max_poll_interval_ms=poll_interval_ms,
            max_poll_records=10,
        )

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


def test_many_short_records_never_stall_a_paused_partition(
    broker: RunningBroker, topic_factory: Any, group_id: str
) -> None:
    """3 partitions x 400 records, 50 a poll, a share of one record per partition: partitions
    paused and resumed in the middle of fetched batches all the time still deliver every
    record once, all committed. (kafka-python 3.0.12 parked a paused partition's records for
    good in a 6-partition benchmark run, fixed by the port's workaround; this smaller run has
    not reproduced that stall without the workaround: it guards the pause/resume path.)"""
    topic = topic_factory(3)
    expected = fill(broker.bootstrap, topic, 3, 400)
    log = WorkLog("many")
    consumer = _consumer(broker.bootstrap, group_id, max_poll_records=50)
    processor = Processor(  # a share of 1: every partition holding a record is paused
        consumer, lambda r: log.done((r.topic, r.partition), r.offset), max_in_flight=3
    )
    consumer.subscribe([topic], listener=processor.listener())
    try:
        deadline = time.monotonic() + 60
        while len(log.finished) < 1200 and time.monotonic() < deadline:
            processor.poll(timeout_ms=100)
        processor.close()  # commits what the last periodic commit left
        committed = {
            (tp.topic, tp.partition): consumer.committed(tp) for tp in consumer.assignment()
        }
    finally:
        consumer.close()
    check_exactly_once(expected, log)
    assert committed == expected


def test_a_failing_record_stops_its_partition_and_raises_from_poll(
    broker: RunningBroker, topic_factory: Any, group_id: str
) -> None:
    """Without on_error, a failure at offset 2 raises ProcessingError from poll(), nothing of
    that partition is committed past offset 2, the other partition goes on; with on_error
    returning, the record is skipped and committed past."""
    topic = topic_factory(2)
    fill(broker.bootstrap, topic, 2, 4)

    def work(record: Any) -> None:
        if record.partition == 0 and record.offset == 2:
            raise ValueError("bad record")

    consumer = _consumer(broker.bootstrap, group_id)
    processor = Processor(consumer, work, commit_interval_s=0.2)
    consumer.subscribe([topic], listener=processor.listener())
    try:
        with pytest.raises(ProcessingError) as raised:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                processor.poll(timeout_ms=100)
        failed: Any = raised.value.partition  # the client's TopicPartition
        assert (failed.partition, raised.value.offset) == (0, 2)
        assert isinstance(raised.value.__cause__, ValueError)
        time.sleep(0.5)
        committed = {tp.partition: o for tp, o in processor.close().items()}
        committed.update({tp.partition: consumer.committed(tp) for tp in consumer.assignment()})
    finally:
        consumer.close()
    assert committed == {0: 2, 1: 4}

    skipped: list[int] = []
    consumer = _consumer(broker.bootstrap, group_id + "-skip")
    processor = Processor(consumer, work, on_error=lambda r, exc: skipped.append(r.offset))
    consumer.subscribe([topic], listener=processor.listener())
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not skipped:
            processor.poll(timeout_ms=100)
        time.sleep(0.5)
        processor.poll(timeout_ms=100)
        processor.close()
        committed = {tp.partition: consumer.committed(tp) for tp in consumer.assignment()}
    finally:
        consumer.close()
    assert skipped == [2] and committed == {0: 4, 1: 4}
