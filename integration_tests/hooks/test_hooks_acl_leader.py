"""A classic leader that may not describe a topic another member subscribes to (issue 27),
with this client version's hooks, over SCRAM on a secured Apache Kafka 4.4 node
(:mod:`testlab.kafka_security`).

``alice`` may read t1 only and subscribes to it; she joins first and leads. ``bob`` may read
t1 and t2 and subscribes to both. alice steps aside once (one line), bob leads: every
partition of both topics is assigned and every record consumed, no ``poll()`` raises, and
no partition is consumed by two members at once (each member polls in its own thread: 2.0.2's
``poll()`` blocks until a join completes). Apache Kafka only: skipped on the embedded
broker. The hooks' side: :mod:`kafka_sticky_plugin.adapters.kafka_python.hooks.leader_refusal`.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kafka
import pytest
from hooks_harness import (
    Member,
    consumed_by_two_live_members,
    create_topics,
    unique,
    wait_stable,
)
from kafka import KafkaProducer

from kafka_sticky_plugin import CooperativeStickyAssignor
from kafka_sticky_plugin.client_security import kafka_python_settings
from kafka_sticky_plugin.hooks import install_hooks
from testlab.kafka_security import SecuredKafka, secured_kafka_broker

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
    """Our hooks' WARNING lines while attached (from every thread)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.name.startswith("kafka_sticky_plugin"):
            self.lines.append(record.getMessage())


def _refusal(member: Member) -> dict[str, Any]:
    """The member's step-asides and whether it leads, read in its poll thread."""
    member.note(
        "refusal",
        lambda consumer: {
            "step_asides": install_hooks(consumer)._impl.leader_refusal.step_asides,
            "leads": bool(consumer._coordinator._is_leader),
        },
    )
    deadline = time.monotonic() + 10
    while "refusal" not in member.notes and time.monotonic() < deadline:
        time.sleep(0.1)
    return dict(member.notes["refusal"])


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
    alice, bob = (
        Member(
            user,
            bootstrap,
            group_id,
            topics,
            [CooperativeStickyAssignor],
            settings=kafka_python_settings(secured.client(user, "scram")),
        )
        for user, topics in (("alice", [t1]), ("bob", [t1, t2]))
    )
    everything = {(t, p) for t in (t1, t2) for p in (0, 1)}
    lines = _Lines()
    logging.getLogger().addHandler(lines)
    try:
        alice.start()
        wait_stable([alice], {(t1, 0), (t1, 1)}, timeout_s=30, hold_s=0.5)
        started = time.monotonic()
        bob.start()
        wait_stable([alice, bob], everything, timeout_s=45, every_member_owns=False)
        deadline = time.monotonic() + 30
        while len(_delivered(alice, bob)) < 2 * RECORDS and time.monotonic() < deadline:
            time.sleep(0.2)
        took_s = time.monotonic() - started
        time.sleep(2.0)  # settled: no further step-aside
        refusals = {"alice": _refusal(alice), "bob": _refusal(bob)}
    finally:
        logging.getLogger().removeHandler(lines)
        for member in (alice, bob):
            member.stop()
    print(
        f"kafka-python {kafka.__version__}: every partition assigned and every record consumed"
        f" {took_s:.1f} s after bob joined; {refusals}"
    )
    assert len(_delivered(alice, bob)) == 2 * RECORDS
    assert refusals["alice"]["step_asides"] == 1 and refusals["bob"]["step_asides"] == 0
    assert refusals["bob"]["leads"], refusals
    assert len([line for line in lines.lines if STEP_ASIDE in line and t2 in line]) == 1
    assert not [line for line in lines.lines if "are assigned to no member" in line], lines.lines
    assert not consumed_by_two_live_members([alice, bob])


def _delivered(*members: Member) -> set[tuple[tuple[str, int], int]]:
    return {(d.partition, d.offset) for m in members for d in list(m.deliveries)}
