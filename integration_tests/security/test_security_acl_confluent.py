"""ACL scenarios for confluent-kafka members (``create_consumer``, cooperative-sticky) on a
secured Apache Kafka node (SCRAM, ``StandardAuthorizer``): librdkafka returns each refusal
from ``poll()``; the consumer says it once, in one line naming the grant
(:mod:`kafka_sticky_plugin.authorization_advice`); the rest of the group keeps consuming and
no partition ever has two owners (checked after every polling round). One node for the
module.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from acl_group import LogLines, PolledGroup, PolledMember, acl_topic, confluent_config
from secured_tier import EMBEDDED_SKIP, secured_kafka

from kafka_sticky_plugin.confluent import create_consumer
from kafka_sticky_plugin.groups.admin import unique_name
from testlab.kafka_security import SecuredKafka

pytestmark = [EMBEDDED_SKIP]
__all__ = ["secured_kafka"]


class RdGroup(PolledGroup):
    """confluent-kafka members of one group polled in turn from the test's thread (errors
    counted by librdkafka's code); ownership checked after every round."""

    def add(self, user: str, topics: list[str]) -> PolledMember:
        consumer = create_consumer(
            {
                **confluent_config(self.kafka, self.group_id, user),
                "partition.assignment.strategy": "cooperative-sticky",
            }
        )
        consumer.subscribe(topics)
        member = PolledMember(user, consumer)
        self.members[user] = member
        return member

    def drive(self, seconds: float) -> None:
        self.drive_until(lambda: False, seconds)

    def drive_until(self, done: Callable[[], bool], seconds: float) -> bool:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            for member in list(self.members.values()):
                message = member.consumer.poll(0.05)
                if message is None:
                    continue
                if message.error() is not None:
                    member.errors[message.error().code()] += 1
                else:
                    member.consumed.add((message.topic(), message.partition(), message.offset()))
            self.check_round()
            if done():
                return True
        return done()

    def close(self) -> None:
        for member in self.members.values():
            member.consumer.close()


def test_group_acl_missing_then_granted_then_revoked(secured_kafka: SecuredKafka) -> None:
    """carol may read the topic but not the group: one ERROR line naming the group, the grant
    and her principal; a handful of refusals from poll() in 10 s (no storm); she holds
    nothing; alice keeps every partition without a rebalance. Granted, carol joins and the
    two share the topic; revoked, carol's membership ends and alice gets everything back.
    Never two owners; every record consumed."""
    kafka = secured_kafka
    topic = acl_topic(kafka, "rd-group", 2, records=40)
    group_id = unique_name("rd-group")
    for user in ("alice", "carol"):
        kafka.grant(user, "topic", topic)
    kafka.grant("alice", "group", group_id)
    group = RdGroup(kafka, group_id)
    try:
        alice = group.add("alice", [topic])
        assert group.drive_until(lambda: len(alice.owned()) == 2, 30)
        alice_changes = group.changes["alice"]
        with LogLines() as logs:
            carol = group.add("carol", [topic])
            group.drive(10.0)
        refused = carol.errors[30]  # GROUP_AUTHORIZATION_FAILED
        print(f"carol: {refused} refusals from poll() in 10 s; errors {dict(carol.errors)}")
        assert len(logs.ours(f"grant Read on Group {group_id!r} to User:carol")) == 1, logs.lines
        assert 1 <= refused <= 6
        assert not carol.owned() and not carol.consumed
        assert group.changes["alice"] == alice_changes, "alice was disturbed"
        assert alice.owned() == {(topic, 0), (topic, 1)}
        assert group.drive_until(lambda: len(group.consumed(topic)) == 40, 20)

        kafka.grant("carol", "group", group_id)
        assert group.drive_until(lambda: len(carol.owned()) == 1 and len(alice.owned()) == 1, 60)
        kafka.revoke("carol", "group", group_id)
        assert group.drive_until(lambda: len(alice.owned()) == 2 and not carol.owned(), 60), {
            u: m.owned() for u, m in group.members.items()
        }
        print(f"after revoke: carol errors {dict(carol.errors)}")
        assert not group.double_owned, group.double_owned
    finally:
        group.close()


def test_own_topic_refused_is_one_line_and_the_rest_is_consumed(
    secured_kafka: SecuredKafka,
) -> None:
    """alice subscribes to ``common`` and ``hidden`` but may not describe ``hidden``: one
    WARNING line naming it and the grant; she is assigned ``common`` and consumes it all;
    bob (``common`` only) shares it; never two owners."""
    kafka = secured_kafka
    common = acl_topic(kafka, "rd-common", 2, records=30)
    hidden = acl_topic(kafka, "rd-hidden", 2, records=10)
    group_id = unique_name("rd-own")
    for user in ("alice", "bob"):
        kafka.grant(user, "group", group_id)
        kafka.grant(user, "topic", common)
    group = RdGroup(kafka, group_id)
    try:
        with LogLines() as logs:
            alice = group.add("alice", [common, hidden])
            bob = group.add("bob", [common])
            assert group.drive_until(
                lambda: len(alice.owned()) == 1 and len(bob.owned()) == 1, 40
            ), {u: m.owned() for u, m in group.members.items()}
            assert group.drive_until(lambda: len(group.consumed(common)) == 30, 20)
        said = logs.ours(f"not authorized to describe subscribed topic(s) {hidden!r}")
        assert len(said) == 1 and "to User:alice" in said[0], logs.lines
        assert not group.consumed(hidden) and not bob.errors
        assert not group.double_owned
    finally:
        group.close()
