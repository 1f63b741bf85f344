"""ACL scenarios for hooked aiokafka members (``cooperative-sticky``) on a secured Apache Kafka
node (SCRAM, ``StandardAuthorizer``), all consumers polled in turn from one event loop (the
harsh case: a member whose ``getmany`` blocks starves the others). A refusal is one ERROR
line; the broker is asked again at most once per wait (1, 2, 4 ... 30 s); the healthy
members' assignments never change because of it (counted); a member refused while it holds
partitions gives them up at once; never two owners (checked after every round). The hooks'
side: :mod:`kafka_sticky_plugin.adapters.aiokafka.authorization`. One node for the module.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import pytest
from acl_group import LogLines, PolledGroup, PolledMember, acl_topic, consumer_kwargs
from secured_tier import EMBEDDED_SKIP, USERS, secured_kafka

from kafka_sticky_plugin.client_security import aiokafka_settings
from kafka_sticky_plugin.testing.admin import unique_name
from kafka_sticky_plugin.testing.kafka_security import SecuredKafka

pytestmark = [EMBEDDED_SKIP]
__all__ = ["secured_kafka"]


class AioGroup(PolledGroup):
    """Hooked aiokafka members of one group, polled in turn; ownership and assignment
    changes checked after every round."""

    async def add(self, user: str, topics: list[str]) -> PolledMember:
        from aiokafka import AIOKafkaConsumer

        from kafka_sticky_plugin.aiokafka import CooperativeStickyAssignor, install_hooks

        consumer = AIOKafkaConsumer(
            *topics,
            partition_assignment_strategy=[CooperativeStickyAssignor],
            **consumer_kwargs(self.kafka, self.group_id, user, aiokafka_settings),
        )
        hooks = install_hooks(consumer)
        member = PolledMember(user, consumer, hooks)
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
            self.check_round()
            if done():
                return True
        return done()

    async def drive(self, seconds: float) -> None:
        await self.drive_until(lambda: False, seconds)

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
