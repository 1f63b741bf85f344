"""The aiokafka processing helper on a real broker (issue 25): the scenarios of
:mod:`processing_runs` (work of 3x ``max_poll_interval_ms`` per record; a revoke while work
is in flight) with this package's cooperative-sticky assignor and hooks. Each member runs its
own event loop on its own thread."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer
from processing_runs import MemberThread, Recorder, WorkLog, long_work_run, revoke_run

from kafka_sticky_plugin.aiokafka import CooperativeStickyAssignor, Processor, install_hooks
from kafka_sticky_plugin.brokers.embedded import RunningBroker

pytestmark = pytest.mark.kafka_only()


class Member(MemberThread):
    """An AIOKafkaConsumer with the hooks and a Processor whose work sleeps ``work_s``."""

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
        loop = asyncio.new_event_loop()

        async def work(record: Any) -> None:
            await asyncio.sleep(work_s)
            log.done((record.topic, record.partition), record.offset)

        async def start() -> Processor:
            consumer = AIOKafkaConsumer(
                bootstrap_servers=bootstrap,
                group_id=group,
                enable_auto_commit=False,
                auto_offset_reset="earliest",
                partition_assignment_strategy=[CooperativeStickyAssignor],
                session_timeout_ms=6000,
                heartbeat_interval_ms=1000,
                max_poll_interval_ms=poll_interval_ms,
            )
            processor = Processor(
                consumer,
                work,
                revoke_wait_s=revoke_wait_s,
                commit_interval_s=0.5,
                max_records=10,
                on_commit=lambda offsets: log.committed(
                    {(tp.topic, tp.partition): o for tp, o in offsets.items()}
                ),
            )
            install_hooks(consumer)
            consumer.subscribe([topic], listener=processor.listener(Recorder(log)))
            await consumer.start()
            self.consumer = consumer
            return processor

        processor = loop.run_until_complete(start())

        async def stop() -> None:
            try:
                await processor.close()
            finally:
                await self.consumer.stop()

        def close() -> None:
            try:
                loop.run_until_complete(stop())
            finally:
                loop.close()

        super().__init__(log, lambda: loop.run_until_complete(processor.poll(200)), close)


def _maker(broker: RunningBroker, group_id: str) -> Any:
    return lambda topic, log, **options: Member(broker.bootstrap, group_id, topic, log, **options)


def test_processing_longer_than_the_poll_interval_keeps_the_member(
    broker: RunningBroker, topic_factory: Any, group_id: str
) -> None:
    """Work of 3x max_poll_interval_ms per record: no rebalance, exactly once, commits only
    of finished records, everything committed at the end."""
    long_work_run(broker.bootstrap, topic_factory(2), _maker(broker, group_id), 2000)


def test_revoked_partition_hands_over_its_finished_work(
    broker: RunningBroker, topic_factory: Any, group_id: str
) -> None:
    """A partition revoked while its work runs: the revoke callback waits, commits what
    finished, nothing is committed after it, the next owner starts there; exactly once."""
    revoke_run(broker.bootstrap, topic_factory(2), _maker(broker, group_id))
