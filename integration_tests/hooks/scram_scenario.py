"""The SCRAM scenario every client-version matrix venv runs (kafka-python's
``test_hooks_scram.py``, aiokafka's ``test_aiokafka_scram.py``), for members of either
harness (``hooks_harness.Member``, ``aio_harness.AioMember``).

``secured`` (a module-scoped fixture: import it into the test module) is the secured node,
users ``alice`` and ``bob``; :data:`SECURED_MARKS` skip the module on the embedded broker and
bound each test. ``alice`` gets a consumer's ACLs only (``READ`` on the group,
``READ``/``DESCRIBE`` on the topic); two of her hooked ``cooperative-sticky`` members share
four partitions; one leaves and the other takes everything back without being revoked
anything. What the broker keeps as committed is returned beside what was delivered, for the
test to compare.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hooks_harness import Partition, Producer, create_topics, unique, wait_stable
from kafka import KafkaConsumer, TopicPartition

from kafka_sticky_plugin.client_security import kafka_python_settings
from testlab.kafka_security import SecuredKafka, secured_kafka_broker

PARTITIONS = 4

SECURED_MARKS = [
    pytest.mark.skipif(
        os.environ.get("KAFKA_STICKY_BROKER") == "embedded",
        reason="SCRAM and ACLs: this test starts its own secured Apache Kafka node",
    ),
    pytest.mark.timeout(180),
]


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecuredKafka]:
    """One secured Apache Kafka node for the module (users ``alice`` and ``bob``)."""
    path = Path(tmp_path_factory.mktemp("scram"))
    with secured_kafka_broker(path, users=["alice", "bob"]) as node:
        yield node


#: ``(name, bootstrap, group_id, topic)`` -> an unstarted member connecting as ``alice``
MemberMaker = Callable[[str, str, str, str], Any]


def join_leave_and_commit(
    secured: SecuredKafka, member: MemberMaker
) -> tuple[dict[Partition, int], dict[Partition, int]]:
    """Run the scenario (module docstring); return ``(committed, delivered)``: per partition
    the offset the broker keeps for the group (read back as ``alice``) and the offset after
    the last record any member was given."""
    bootstrap = secured.bootstrap("scram")
    admin = kafka_python_settings(secured.admin("scram"))
    topic, group_id = unique("t-scram"), unique("g-scram")
    create_topics(bootstrap, {topic: PARTITIONS}, settings=admin)
    secured.grant("alice", "topic", topic, ("READ", "DESCRIBE"))
    secured.grant("alice", "group", group_id, ("READ",))
    producer = Producer(bootstrap, {topic: PARTITIONS}, rate_per_s=40, settings=admin)
    everything = {(topic, p) for p in range(PARTITIONS)}
    members = [member(name, bootstrap, group_id, topic) for name in ("a", "b")]
    try:
        for each in members:
            each.start()
        both = wait_stable(members, everything)
        left_at = time.monotonic()
        members[1].stop()
        alone = wait_stable(members[:1], everything)
        assert both["a"] <= alone["a"], (both, alone)
        revoked = [e for e in members[0].events if e.kind == "revoked" and e.t >= left_at]
        assert not any(e.partitions for e in revoked), revoked
    finally:
        for each in members:
            each.stop()
        producer.close()
    alice = kafka_python_settings(secured.client("alice", "scram"))
    reader = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group_id, **alice)
    try:
        committed = {
            (topic, p): reader.committed(TopicPartition(topic, p)) or 0 for p in range(PARTITIONS)
        }
    finally:
        reader.close()
    delivered = {p: 0 for p in everything}
    for each in members:
        for d in each.deliveries:
            delivered[d.partition] = max(delivered[d.partition], d.offset + 1)
    return committed, delivered
