"""A hooked member subscribed to a topic the cluster does not have (issue 39): one line of ours
per member, early, naming the topic; the member goes on with its other topics. Without the
hooks' line kafka-python repeats its own ERROR at every metadata refresh and aiokafka's
``start()`` waits 40 s, then raises an error naming nothing. Apache Kafka as the suite starts
it does not auto-create topics (the embedded broker does: skipped there). About 15 s.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import pytest
from kafka import KafkaConsumer

from kafka_sticky_plugin import CooperativeStickyAssignor
from kafka_sticky_plugin.groups.admin import admin_client, create_topic, unique_name
from kafka_sticky_plugin.hooks import install_hooks

SAID = "do not exist on the cluster"


def _ours(caplog: pytest.LogCaptureFixture, missing: str) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name.startswith("kafka_sticky_plugin") and SAID in r.getMessage()
        and repr(missing) in r.getMessage()
    ]  # fmt: skip


@pytest.fixture
def topics(broker: Any) -> tuple[str, str]:
    present, missing = unique_name("t-present"), unique_name("t-missing")
    create_topic(broker.bootstrap, present, 2)
    return present, missing


def _skip_if_created(broker: Any, topic: str) -> None:
    with admin_client(broker.bootstrap) as admin:
        created = topic in admin.list_topics()
    if created:
        pytest.skip("this broker auto-creates a subscribed topic")


@pytest.mark.timeout(90)
def test_kafka_python_member_says_a_missing_topic_once(
    broker: Any, topics: tuple[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    present, missing = topics
    consumer = KafkaConsumer(
        present,
        missing,
        bootstrap_servers=broker.bootstrap,
        group_id=unique_name("g-missing"),
        partition_assignment_strategy=[CooperativeStickyAssignor],
        session_timeout_ms=6000,
        heartbeat_interval_ms=1000,
        max_poll_interval_ms=10000,
    )
    install_hooks(consumer)
    try:
        with caplog.at_level(logging.INFO):
            deadline = time.monotonic() + 12
            while time.monotonic() < deadline:
                consumer.poll(timeout_ms=200)
            assigned = consumer.assignment()
    finally:
        consumer.close()
    _skip_if_created(broker, missing)
    said = _ours(caplog, missing)
    assert len(said) == 1, said
    assert {tp.topic for tp in assigned} == {present}, assigned


@pytest.mark.timeout(90)
def test_aiokafka_member_says_a_missing_topic_at_start(
    broker: Any, topics: tuple[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    from aiokafka import AIOKafkaConsumer

    from kafka_sticky_plugin.aiokafka import CooperativeStickyAssignor as AioCooperative
    from kafka_sticky_plugin.aiokafka import install_hooks as aio_install_hooks

    present, missing = topics

    async def scenario() -> set[str]:
        consumer = AIOKafkaConsumer(
            present,
            missing,
            bootstrap_servers=broker.bootstrap,
            group_id=unique_name("g-missing-aio"),
            partition_assignment_strategy=[AioCooperative],
            session_timeout_ms=6000,
            heartbeat_interval_ms=1000,
        )
        aio_install_hooks(consumer)
        await consumer.start()  # without the hooks: UnknownTopicOrPartitionError after 40 s
        try:
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and not consumer.assignment():
                await consumer.getmany(timeout_ms=200)
            return {tp.topic for tp in consumer.assignment()}
        finally:
            await consumer.stop()

    with caplog.at_level(logging.INFO):
        assigned = asyncio.run(scenario())
    _skip_if_created(broker, missing)
    said = _ours(caplog, missing)
    assert len(said) == 1, said
    assert assigned == {present}, assigned
