"""The aiokafka hooks of this aiokafka version over SCRAM-SHA-512, as a user with a consumer's
ACLs only, on a secured Apache Kafka 4.4 node (``StandardAuthorizer``, no ACL means no
access; :mod:`kafka_sticky_plugin.testing.kafka_security`). The aiokafka counterpart of
``integration_tests/hooks/test_hooks_scram.py``; the ACL scenarios are in the security tier
(``integration_tests/security/test_security_acl_aiokafka.py``, newest aiokafka only).

Two hooked ``cooperative-sticky`` members of ``alice`` (``READ`` on the group and the topic)
share four partitions; one leaves and the other takes everything back without being revoked
anything; the offsets committed on the way (auto-commit, and at ``stop()``) are read back as
``alice``. Apache Kafka only: skipped on the embedded broker.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import aiokafka
import pytest
from aio_harness import AioMember
from hooks_harness import Producer, create_topics, unique, wait_stable
from kafka import KafkaConsumer, TopicPartition

from kafka_sticky_plugin.aiokafka import CooperativeStickyAssignor
from kafka_sticky_plugin.testing.client_security import aiokafka_settings, kafka_python_settings
from kafka_sticky_plugin.testing.kafka_security import SecuredKafka, secured_kafka_broker

pytestmark = [
    pytest.mark.skipif(
        os.environ.get("KAFKA_STICKY_BROKER") == "embedded",
        reason="SCRAM and ACLs: this test starts its own secured Apache Kafka node",
    ),
    pytest.mark.timeout(180),
]

PARTITIONS = 4


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecuredKafka]:
    with secured_kafka_broker(Path(tmp_path_factory.mktemp("scram")), users=["alice"]) as node:
        yield node


def test_hooked_aiokafka_members_join_rebalance_and_commit_over_scram(
    secured: SecuredKafka,
) -> None:
    """Join, leave and commit over SCRAM with a consumer's ACLs (module docstring)."""
    bootstrap = secured.bootstrap("scram")
    admin = kafka_python_settings(secured.admin("scram"))
    alice = kafka_python_settings(secured.client("alice", "scram"))
    topic, group_id = unique("t-aio-scram"), unique("g-aio-scram")
    create_topics(bootstrap, {topic: PARTITIONS}, settings=admin)
    secured.grant("alice", "topic", topic, ("READ", "DESCRIBE"))
    secured.grant("alice", "group", group_id, ("READ",))
    producer = Producer(bootstrap, {topic: PARTITIONS}, rate_per_s=40, settings=admin)
    everything = {(topic, p) for p in range(PARTITIONS)}
    members = [
        AioMember(
            name,
            bootstrap,
            group_id,
            [topic],
            [CooperativeStickyAssignor],
            settings=aiokafka_settings(secured.client("alice", "scram")),
        )
        for name in ("a", "b")
    ]
    try:
        for member in members:
            member.start()
        both = wait_stable(members, everything)
        left_at = time.monotonic()
        members[1].stop()
        alone = wait_stable(members[:1], everything)
        assert both["a"] <= alone["a"], (both, alone)
        revoked = [e for e in members[0].events if e.kind == "revoked" and e.t >= left_at]
        assert not any(e.partitions for e in revoked), revoked
    finally:
        for member in members:
            member.stop()
        producer.close()
    reader = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group_id, **alice)
    try:
        committed = {
            (topic, p): reader.committed(TopicPartition(topic, p)) or 0 for p in range(PARTITIONS)
        }
    finally:
        reader.close()
    delivered = {p: 0 for p in everything}
    for member in members:
        for d in member.deliveries:
            delivered[d.partition] = max(delivered[d.partition], d.offset + 1)
    print(f"aiokafka {aiokafka.__version__}: committed {committed}, delivered {delivered}")
    assert committed == delivered
