"""A classic leader that may not describe a topic another member subscribes to (issue 27),
with this client version's hooks, over SCRAM on a secured Apache Kafka 4.4 node
(:mod:`kafka_sticky_plugin.testing.kafka_security`).

``alice`` may read t1 only and subscribes to it; she joins first and leads. ``bob`` may read
t1 and t2 and subscribes to both. alice steps aside once (one line), bob leads: every
partition of both topics is assigned and every record consumed, no ``poll()`` raises, and
no partition has two owners (checked after every round; both members are polled in turn from
the test's thread). Apache Kafka only: skipped on the embedded broker. The hooks' side:
:mod:`kafka_sticky_plugin.adapters.kafka_python.hooks.leader_refusal`.
"""

from __future__ import annotations

import logging
import os
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kafka
import pytest
from hooks_harness import GROUP_SETTINGS, create_topics, unique
from kafka import KafkaConsumer, KafkaProducer

from kafka_sticky_plugin import CooperativeStickyAssignor
from kafka_sticky_plugin.hooks import install_hooks
from kafka_sticky_plugin.testing.client_security import kafka_python_settings
from kafka_sticky_plugin.testing.kafka_security import SecuredKafka, secured_kafka_broker

pytestmark = [
    pytest.mark.skipif(
        os.environ.get("KAFKA_STICKY_BROKER") == "embedded",
        reason="ACLs: this test starts its own secured Apache Kafka node",
    ),
    pytest.mark.timeout(180),
]

RECORDS = 20  # per topic
STEP_ASIDE = "subscribed by other members: it leaves the group once and rejoins"


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecuredKafka]:
    users = ["alice", "bob"]
    with secured_kafka_broker(Path(tmp_path_factory.mktemp("acl-leader")), users=users) as node:
        yield node


class _Lines(logging.Handler):
    """Our hooks' WARNING lines while attached."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.name.startswith("kafka_sticky_plugin"):
            self.lines.append(record.getMessage())


def test_refused_leader_steps_aside_and_every_topic_is_consumed(secured: SecuredKafka) -> None:
    """The module docstring's scenario."""
    bootstrap = secured.bootstrap("scram")
    admin = kafka_python_settings(secured.admin("scram"))
    t1, t2, group_id = unique("t-lead1"), unique("t-lead2"), unique("g-lead")
    create_topics(bootstrap, {t1: 2, t2: 2}, settings=admin)
    producer = KafkaProducer(bootstrap_servers=bootstrap, **admin)
    for n in range(RECORDS):
        for topic in (t1, t2):
            producer.send(topic, value=str(n).encode(), partition=n % 2)
    producer.flush(10)
    producer.close(5)
    for user, topics in (("alice", [t1]), ("bob", [t1, t2])):
        secured.grant(user, "group", group_id, ("READ",))
        for topic in topics:
            secured.grant(user, "topic", topic)

    consumers: dict[str, Any] = {}
    consumed: set[tuple[str, int, int]] = set()
    errors: Counter[str] = Counter()
    double_owned: list[tuple[str, int]] = []

    def add(user: str, topics: list[str]) -> Any:
        consumer = KafkaConsumer(
            bootstrap_servers=bootstrap,
            group_id=group_id,
            client_id=f"{group_id}-{user}",
            partition_assignment_strategy=[CooperativeStickyAssignor],
            auto_commit_interval_ms=500,
            **GROUP_SETTINGS,
            **kafka_python_settings(secured.client(user, "scram")),
        )
        hooks = install_hooks(consumer)
        consumer.subscribe(topics)
        consumers[user] = consumer
        return hooks

    def owned(user: str) -> set[tuple[str, int]]:
        return {(tp.topic, tp.partition) for tp in consumers[user].assignment()}

    def drive_until(done: Any, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for consumer in consumers.values():
                try:
                    batches = consumer.poll(timeout_ms=100)
                except Exception as exc:  # what poll() raised is checked below
                    errors[type(exc).__name__] += 1
                    continue
                for tp, records in batches.items():
                    consumed.update((tp.topic, tp.partition, r.offset) for r in records)
            owners = Counter(tp for user in consumers for tp in owned(user))
            double_owned.extend(tp for tp, n in owners.items() if n > 1)
            if done():
                return True
        return False

    lines = _Lines()
    logging.getLogger().addHandler(lines)
    everything = {(t, p) for t in (t1, t2) for p in (0, 1)}
    try:
        alice = add("alice", [t1])
        assert drive_until(lambda: len(owned("alice")) == 2, 30)
        assert consumers["alice"]._coordinator._is_leader
        started = time.monotonic()
        bob = add("bob", [t1, t2])
        assert drive_until(
            lambda: owned("alice") | owned("bob") == everything and len(consumed) == 2 * RECORDS,
            45,
        ), ({u: owned(u) for u in consumers}, len(consumed), lines.lines)
        took_s = time.monotonic() - started
        drive_until(lambda: False, 3.0)  # settled: no further step-aside
    finally:
        logging.getLogger().removeHandler(lines)
        for consumer in consumers.values():
            consumer.close()
    refusal_a, refusal_b = alice._impl.leader_refusal, bob._impl.leader_refusal
    print(
        f"kafka-python {kafka.__version__}: everything assigned and consumed {took_s:.1f} s"
        f" after bob joined; step-asides alice {refusal_a.step_asides}, bob"
        f" {refusal_b.step_asides}"
    )
    assert refusal_a.step_asides == 1 and refusal_b.step_asides == 0
    assert len([line for line in lines.lines if STEP_ASIDE in line and t2 in line]) == 1
    assert not [line for line in lines.lines if "are assigned to no member" in line], lines.lines
    assert not errors, errors
    assert not double_owned, double_owned
