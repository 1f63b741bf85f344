"""ACL scenarios for hooked aiokafka members (``cooperative-sticky``) on a secured Apache Kafka
node (SCRAM, ``StandardAuthorizer``), all consumers polled in turn from one event loop (the
harsh case: a member whose ``getmany`` blocks starves the others). A refusal is one ERROR
line; the broker is asked again at most once per wait (1, 2, 4 ... 30 s); the healthy
members' assignments never change because of it (counted); a member refused while it holds
partitions gives them up at once; never two owners (checked after every round). The hooks'
side: :mod:`kafka_sticky_plugin.adapters.aiokafka.authorization`. A member refused one of its
own topics asks the group for the others only (:mod:`kafka_sticky_plugin.adapters.aiokafka.
topic_authorization`). One node for the module.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from acl_group import LogLines, acl_topic
from secured_tier import EMBEDDED_SKIP, USERS, secured_kafka

from kafka_sticky_plugin.testing.admin import unique_name
from kafka_sticky_plugin.testing.client_security import aiokafka_settings
from kafka_sticky_plugin.testing.kafka_security import SecuredKafka
from kafka_sticky_plugin.testing.producer import KeyedProducer

pytestmark = [EMBEDDED_SKIP]
__all__ = ["secured_kafka"]


@dataclass
class AioMember:
    user: str
    consumer: Any
    hooks: Any
    consumed: set[tuple[str, int, int]] = field(default_factory=set)
    errors: Counter[str] = field(default_factory=Counter)

    def owned(self) -> set[tuple[str, int]]:
        return {(tp.topic, tp.partition) for tp in self.consumer.assignment()}


class AioGroup:
    """Hooked aiokafka members of one group, polled in turn; ownership and assignment
    changes checked after every round."""

    def __init__(self, kafka: SecuredKafka, group_id: str) -> None:
        self.kafka = kafka
        self.group_id = group_id
        self.members: dict[str, AioMember] = {}
        self.double_owned: list[tuple[str, int]] = []
        self.changes: Counter[str] = Counter()
        self._last: dict[str, set[tuple[str, int]]] = {}

    async def add(self, user: str, topics: list[str]) -> AioMember:
        from aiokafka import AIOKafkaConsumer

        from kafka_sticky_plugin.aiokafka import CooperativeStickyAssignor, install_hooks

        consumer = AIOKafkaConsumer(
            *topics,
            bootstrap_servers=self.kafka.bootstrap("scram"),
            group_id=self.group_id,
            client_id=f"{self.group_id}-{user}",
            auto_offset_reset="earliest",
            session_timeout_ms=6000,
            heartbeat_interval_ms=1000,
            max_poll_interval_ms=10000,
            partition_assignment_strategy=[CooperativeStickyAssignor],
            **aiokafka_settings(self.kafka.client(user)),
        )
        hooks = install_hooks(consumer)
        member = AioMember(user, consumer, hooks)
        self.members[user] = member
        try:
            await consumer.start()
        except Exception as exc:  # a refused member's start() raises the refusal
            member.errors[type(exc).__name__] += 1
        return member

    async def drive_until(self, done: Callable[[], bool], seconds: float) -> bool:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            for member in list(self.members.values()):
                try:
                    batches = await member.consumer.getmany(timeout_ms=100)
                except Exception as exc:  # what getmany raised is part of what is checked
                    member.errors[type(exc).__name__] += 1
                    continue
                for tp, records in batches.items():
                    member.consumed.update((tp.topic, tp.partition, r.offset) for r in records)
            owners: Counter[tuple[str, int]] = Counter()
            for user, member in self.members.items():
                owned = member.owned()
                owners.update(owned)
                if owned != self._last.get(user, set()):
                    self.changes[user] += 1
                    self._last[user] = owned
            self.double_owned.extend(tp for tp, n in owners.items() if n > 1)
            if done():
                return True
        return done()

    async def drive(self, seconds: float) -> None:
        await self.drive_until(lambda: False, seconds)

    def consumed(self, topic: str) -> set[tuple[int, int]]:
        """(partition, offset) of ``topic`` consumed by any member."""
        return {(p, o) for m in self.members.values() for t, p, o in m.consumed if t == topic}

    async def close(self) -> None:
        for member in self.members.values():
            await asyncio.wait_for(member.consumer.stop(), 30)


@pytest.mark.timeout(240)
def test_group_acl_missing_then_granted_then_revoked(secured_kafka: SecuredKafka) -> None:
    """carol may read the topic but not the group: one ERROR line naming the group, the grant
    and her principal; at most 6 refused requests in 15 s (aiokafka alone: one per
    ``getmany``); alice and bob, polled in the same loop, keep their partitions without a
    single change and consume every record; carol holds nothing. Granted, carol joins;
    revoked, she gives her partitions up at once and the others take them. Never two
    owners."""
    kafka = secured_kafka
    topic = acl_topic(kafka, "aio-group", 3, records=60)
    group_id = unique_name("aio-group")
    for user in USERS:
        kafka.grant(user, "topic", topic)
    for user in ("alice", "bob"):
        kafka.grant(user, "group", group_id)

    async def scenario() -> None:
        group = AioGroup(kafka, group_id)
        try:
            alice = await group.add("alice", [topic])
            bob = await group.add("bob", [topic])
            assert await group.drive_until(
                lambda: len(alice.owned()) + len(bob.owned()) == 3 and bool(bob.owned()), 40
            )
            await group.drive(2.0)
            settled = dict(group.changes)
            with LogLines() as logs:
                carol = await group.add("carol", [topic])
                await group.drive(15.0)
            refusals = carol.hooks._impl.group_authorization.refusals
            print(
                f"carol: {refusals} refused requests in 15 s; getmany raised {dict(carol.errors)}"
            )
            said = logs.ours(f"grant Read on Group {group_id!r} to User:carol")
            assert len(said) == 1, logs.lines
            assert 1 <= refusals <= 6
            assert not carol.owned() and not carol.consumed
            assert {u: group.changes[u] for u in ("alice", "bob")} == settled, "disturbed"
            assert not alice.errors and not bob.errors
            assert len({(p, o) for _, p, o in alice.consumed | bob.consumed}) == 60

            kafka.grant("carol", "group", group_id)
            assert await group.drive_until(lambda: bool(carol.owned()), 60)
            kafka.revoke("carol", "group", group_id)
            with LogLines() as logs:
                assert await group.drive_until(
                    lambda: not carol.owned() and len(alice.owned()) + len(bob.owned()) == 3,
                    60,
                ), {u: m.owned() for u, m in group.members.items()}
            after = carol.hooks._impl.group_authorization.refusals - refusals
            print(f"after revoke: {after} refused requests; {dict(carol.errors)}")
            assert after >= 1  # the refusal, not a session expiry, ended the membership
            assert len(logs.ours(f"grant Read on Group {group_id!r} to User:carol")) == 1
            assert not group.double_owned, group.double_owned
        finally:
            await group.close()

    asyncio.run(scenario())


@pytest.mark.timeout(180)
def test_member_refused_its_own_topic_joins_without_it(secured_kafka: SecuredKafka) -> None:
    """carol subscribes to ``common`` and ``hidden`` but may not describe ``hidden``; alice
    (the leader) may read both. carol says so in one line and asks the group for ``common``
    only: alice is given every ``hidden`` partition, every record of both topics is consumed
    and nobody's ``getmany`` raises (aiokafka alone: carol is given ``hidden`` partitions and
    every fetch of them raises TopicAuthorizationFailedError). Granted, carol rejoins with
    ``hidden`` and consumes records of it. Never two owners."""
    kafka = secured_kafka
    common = acl_topic(kafka, "aio-common", 1, records=20)
    hidden = acl_topic(kafka, "aio-hidden", 3, records=30)
    group_id = unique_name("aio-topic")
    for user in ("alice", "carol"):
        kafka.grant(user, "group", group_id)
        kafka.grant(user, "topic", common)
    kafka.grant("alice", "topic", hidden)

    async def scenario() -> None:
        group = AioGroup(kafka, group_id)
        try:
            alice = await group.add("alice", [common, hidden])
            assert await group.drive_until(lambda: len(alice.owned()) == 4, 30)
            with LogLines() as logs:
                carol = await group.add("carol", [common, hidden])
                assert await group.drive_until(
                    lambda: (
                        carol.owned() == {(common, 0)}
                        and len(group.consumed(common)) == 20
                        and len(group.consumed(hidden)) == 30
                    ),
                    40,
                ), {u: m.owned() for u, m in group.members.items()}
                await group.drive(2.0)
            assert alice.owned() == {(hidden, p) for p in range(3)}
            assert not alice.errors and not carol.errors, (alice.errors, carol.errors)
            said = logs.ours(f"not authorized to describe subscribed topic(s) {hidden!r}")
            assert len(said) == 1, logs.lines

            granted_at = time.monotonic()
            kafka.grant("carol", "topic", hidden)
            assert await group.drive_until(lambda: any(t == hidden for t, _ in carol.owned()), 40)
            waited = time.monotonic() - granted_at
            print(f"carol was assigned {hidden} {waited:.1f} s after the grant")
            producer = KeyedProducer(kafka.bootstrap("scram"), hidden, security=kafka.admin())
            producer.send_burst(30)
            producer.close()
            assert await group.drive_until(
                lambda: (
                    any(t == hidden for t, _, _ in carol.consumed)
                    and len(group.consumed(hidden)) == 60
                ),
                30,
            )
            assert not alice.errors and not carol.errors, (alice.errors, carol.errors)
            assert not group.double_owned, group.double_owned
        finally:
            await group.close()

    asyncio.run(scenario())
