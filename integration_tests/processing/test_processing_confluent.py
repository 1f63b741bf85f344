"""The confluent-kafka processing helper on a real broker (issue 25): the scenarios of
:mod:`processing_runs` (work of 3x ``max.poll.interval.ms`` per record; a revoke while work
is in flight) with librdkafka's cooperative-sticky assignor."""

from __future__ import annotations

import time
from typing import Any

import pytest
from processing_runs import MemberThread, Recorder, WorkLog, long_work_run, revoke_run

from kafka_sticky_plugin.brokers.embedded import RunningBroker
from kafka_sticky_plugin.confluent import Processor, create_consumer, subscribe

pytestmark = pytest.mark.kafka_only()


class Member(MemberThread):
    """A confluent-kafka consumer with a Processor whose work sleeps ``work_s``."""

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
        consumer = create_consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": group,
                "partition.assignment.strategy": "cooperative-sticky",
                "auto.offset.reset": "earliest",
                "enable.auto.commit": False,
                "session.timeout.ms": 6000,
                "heartbeat.interval.ms": 1000,
                "max.poll.interval.ms": poll_interval_ms,
            }
        )

        def work(message: Any) -> None:
            time.sleep(work_s)
            log.done((message.topic(), message.partition()), message.offset())

        processor = Processor(
            consumer,
            work,
            workers=4,
            batch=10,
            revoke_wait_s=revoke_wait_s,
            commit_interval_s=0.5,
            on_commit=lambda offsets: log.committed(
                {(tp.topic, tp.partition): o for tp, o in offsets.items()}
            ),
        )
        subscribe(consumer, [topic], processor.listener(Recorder(log)))

        def close() -> None:
            try:
                processor.close()
            finally:
                consumer.close()

        super().__init__(log, lambda: processor.poll(0.2), close)


def _maker(broker: RunningBroker, group_id: str) -> Any:
    return lambda topic, log, **options: Member(broker.bootstrap, group_id, topic, log, **options)


def test_processing_longer_than_the_poll_interval_keeps_the_member(
    broker: RunningBroker, topic_factory: Any, group_id: str
) -> None:
    """Work of 3x max.poll.interval.ms per record: no rebalance, exactly once, commits only
    of finished records, everything committed at the end. librdkafka refuses a poll interval
    below the session timeout (at least 6 s on a default broker): one record per partition."""
    long_work_run(
        broker.bootstrap, topic_factory(2), _maker(broker, group_id), 6000, per_partition=1
    )


def test_revoked_partition_hands_over_its_finished_work(
    broker: RunningBroker, topic_factory: Any, group_id: str
) -> None:
    """A partition revoked while its work runs: the revoke callback waits, commits what
    finished, nothing is committed after it, the next owner starts there; exactly once."""
    revoke_run(broker.bootstrap, topic_factory(2), _maker(broker, group_id))
