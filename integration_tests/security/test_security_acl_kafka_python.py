"""ACL scenarios for hooked kafka-python (3.0.x) members on a secured Apache Kafka node
(SCRAM, ``StandardAuthorizer``): each refusal is one clear line, nothing raises out of a
``poll()`` for another member's permissions, the group keeps consuming what it may,
and no partition ever has two owners. One node for the module (about 10 s to start).

What each scenario checks is said in its docstring; the hooks' side is
:mod:`kafka_sticky_plugin.adapters.kafka_python.hooks.authorization`.
"""

from __future__ import annotations

import pytest
from acl_group import AclGroup, LogLines, acl_topic
from secured_tier import EMBEDDED_SKIP, secured_kafka

from kafka_sticky_plugin.groups.admin import unique_name
from kafka_sticky_plugin.groups.producer import KeyedProducer
from testlab.kafka_security import SecuredKafka

pytestmark = [EMBEDDED_SKIP]
__all__ = ["secured_kafka"]  # the fixture, imported for pytest


@pytest.fixture(scope="module")
def kafka(secured_kafka: SecuredKafka) -> SecuredKafka:
    """The module's secured node (:mod:`secured_tier`), by the name these tests use."""
    return secured_kafka


def _acked(producer: KeyedProducer) -> set[tuple[int, int]]:
    return {(tp[1], o) for tp, offsets in producer.acknowledged().items() for o in offsets}


def test_group_acl_missing_is_one_line_without_a_retry_storm(kafka: SecuredKafka) -> None:
    """carol may read the topic but not the group: one ERROR line naming the group, the grant
    and her principal; at most a handful of refused attempts in ~10 s (the client alone:
    about one a second); she holds nothing; alice keeps consuming every record."""
    topic = acl_topic(kafka, "acl-group", 2)
    group_id = unique_name("acl-group")
    for user in ("alice", "carol"):
        kafka.grant(user, "topic", topic)
    kafka.grant("alice", "group", group_id)
    group = AclGroup(kafka, group_id)
    producer = KeyedProducer(kafka.bootstrap("scram"), topic, security=kafka.admin())
    try:
        alice = group.add("alice", [topic])
        assert group.drive_until(lambda: len(alice.owned()) == 2, 30)
        producer.start(rate_per_s=50)
        with LogLines() as logs:
            carol = group.add("carol", [topic])
            group.drive(10.0)
        producer.stop()
        assert group.drive_until(lambda: group.consumed(topic) >= _acked(producer), 20)
        refusal = carol.hooks._impl.group_authorization.refusals
        lines = logs.ours(f"grant Read on Group {group_id!r} to User:carol")
        print(f"carol: {refusal} refused attempts in 10 s; poll() raised {dict(carol.errors)}")
        assert len(lines) == 1, logs.lines
        assert 1 <= refusal <= 6
        assert sum(carol.errors.values()) == refusal
        assert not carol.owned() and not carol.consumed
        assert not alice.errors and alice.owned() == {(topic, 0), (topic, 1)}
        assert not group.double_owned
    finally:
        producer.close()
        group.close()


def test_member_refused_its_own_topic(kafka: SecuredKafka) -> None:
    """carol may not describe ``hidden``, her own topic (alice, the leader, may but does not
    subscribe to it). Nobody's ``poll()`` raises; every record of ``common`` is consumed;
    ``hidden`` stays unassigned (nobody who subscribes to it may read it) and carol says so
    in one line; never two owners. (A leader refused another member's topic:
    ``test_security_acl_leader.py``.)"""
    common = acl_topic(kafka, "acl-common", 3, records=60)
    hidden = acl_topic(kafka, "acl-hidden", 2, records=20)
    group_id = unique_name("acl-own")
    for user in ("alice", "carol"):
        kafka.grant(user, "group", group_id)
        kafka.grant(user, "topic", common)
    kafka.grant("alice", "topic", hidden)  # alice may, but does not subscribe to it
    group = AclGroup(kafka, group_id)
    try:
        with LogLines() as logs:
            alice = group.add("alice", [common])
            assert group.drive_until(lambda: len(alice.owned()) == 3, 30)
            carol = group.add("carol", [common, hidden])
            assert group.drive_until(
                lambda: len(alice.owned()) + len(carol.owned()) == 3 and len(carol.owned()) >= 1,
                40,
            ), {m.user: m.owned() for m in group.members.values()}
            group.drive(3.0)
        assert alice.consumer._coordinator._is_leader
        assert {p for p, _ in group.consumed(common)} == {0, 1, 2}
        assert len(group.consumed(common)) == 60
        assert not group.consumed(hidden)
        for member in group.members.values():
            assert not member.errors, (member.user, member.errors)
        assert len(logs.ours(f"not authorized to describe subscribed topic(s) {hidden!r}")) == 1
        assert not logs.ours("leads the group") and not logs.ours("assigned to no member")
        assert not group.double_owned
    finally:
        group.close()


def test_group_acl_revoked_then_granted_while_the_group_runs(kafka: SecuredKafka) -> None:
    """bob's Read on the group is revoked while alice and bob consume: bob gives his
    partitions up at once (lost) and alice takes them after the broker drops bob; granted
    again, bob rejoins and gets partitions back. Every acknowledged record is consumed, no
    poll() of alice raises, never two owners."""
    topic = acl_topic(kafka, "acl-revoke", 4)
    group_id = unique_name("acl-revoke")
    for user in ("alice", "bob"):
        kafka.grant(user, "topic", topic)
        kafka.grant(user, "group", group_id)
    group = AclGroup(kafka, group_id)
    producer = KeyedProducer(kafka.bootstrap("scram"), topic, security=kafka.admin())
    try:
        alice = group.add("alice", [topic])
        bob = group.add("bob", [topic])
        assert group.drive_until(lambda: len(alice.owned()) == 2 == len(bob.owned()), 40)
        producer.start(rate_per_s=50)
        group.drive(2.0)
        with LogLines() as logs:
            kafka.revoke("bob", "group", group_id)
            assert group.drive_until(lambda: len(alice.owned()) == 4, 40)
            assert not bob.owned()
            kafka.grant("bob", "group", group_id)
            assert group.drive_until(lambda: len(bob.owned()) == 2 == len(alice.owned()), 60)
        producer.stop()
        assert group.drive_until(lambda: group.consumed(topic) >= _acked(producer), 30)
        print(
            f"bob: {bob.hooks._impl.group_authorization.refusals} refusals,"
            f" raised {dict(bob.errors)}"
        )
        assert len(logs.ours(f"grant Read on Group {group_id!r} to User:bob")) == 1
        assert not alice.errors
        assert not group.double_owned
    finally:
        producer.close()
        group.close()
