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
from typing import Any

import pytest
from acl_group import LogLines, PolledGroup, PolledMember, acl_topic, consumer_kwargs
from secured_tier import EMBEDDED_SKIP, USERS, secured_kafka

from kafka_sticky_plugin.client_security import aiokafka_settings
from kafka_sticky_plugin.groups.admin import unique_name
from kafka_sticky_plugin.groups.producer import KeyedProducer
from testlab.kafka_security import SecuredKafka

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


def _two_topics(
    kafka: SecuredKafka, prefix: str, reads: dict[str, tuple[int, ...]]
) -> tuple[list[str], str, list[tuple[str, str, str]]]:
    """Two fresh topics (2 partitions, 30 records each), a group id, and the grants made:
    the group to every user of ``reads``, and each user the topics (by index) it reads."""
    topics = [acl_topic(kafka, f"{prefix}-t{n}", 2, records=30) for n in (1, 2)]
    group_id = unique_name(prefix)
    grants = [(user, "group", group_id) for user in reads]
    grants += [(user, "topic", topics[n]) for user, ns in reads.items() for n in ns]
    for grant in grants:
        kafka.grant(*grant)
    return topics, group_id, grants


def _run_and_revoke(kafka: SecuredKafka, scenario: Any, grants: list[tuple[str, str, str]]) -> None:
    try:
        asyncio.run(scenario())
    finally:
        for grant in reversed(grants):
            kafka.revoke(*grant)


async def _alice_leads_then_bob(
    group: AioGroup, t1: str, bob_topics: list[str]
) -> tuple[PolledMember, PolledMember, float]:
    """alice starts alone on t1 and takes both partitions (she leads), then bob starts on
    ``bob_topics``; returns both and when bob's ``start()`` returned."""
    alice = await group.add("alice", [t1])
    assert await group.drive_until(lambda: len(alice.owned()) == 2, 30)
    bob = await group.add("bob", bob_topics)
    return alice, bob, time.monotonic()


@pytest.mark.timeout(180)
def test_leader_refused_another_members_topic_steps_aside(secured_kafka: SecuredKafka) -> None:
    """alice may read t1 only, bob t1 and t2; alice leads (she starts first), bob subscribes
    to both: alice steps aside once (one line) and bob leads, every partition of t1 and t2 is
    assigned and every record of both consumed; nobody is told anything; nothing raised;
    never two owners."""
    kafka = secured_kafka
    (t1, t2), group_id, grants = _two_topics(kafka, "aio-lead", {"alice": (0,), "bob": (0, 1)})

    async def scenario() -> None:
        group = AioGroup(kafka, group_id)
        try:
            with LogLines() as logs:
                alice, bob, started = await _alice_leads_then_bob(group, t1, [t1, t2])
                everything = {(t, p) for t in (t1, t2) for p in (0, 1)}
                assert await group.drive_until(
                    lambda: (
                        alice.owned() | bob.owned() == everything
                        and len(group.consumed(t1)) == 30 == len(group.consumed(t2))
                    ),
                    60,
                ), {u: m.owned() for u, m in group.members.items()}
                took_s = time.monotonic() - started
                await group.drive(3.0)
            print(f"everything assigned and consumed {took_s:.1f} s after bob's start() returned")
            assert alice.hooks._impl.leader_refusal.step_asides == 1
            assert bob.hooks._impl.leader_refusal.step_asides == 0
            aside = logs.ours(f"{t2!r} subscribed by other members: it leaves the group once")
            assert len(aside) == 1, logs.lines
            assert not logs.ours("assigned to no member"), logs.lines
            assert alice.owned() | bob.owned() == everything
            assert not alice.errors and not bob.errors, (alice.errors, bob.errors)
            assert not group.double_owned, group.double_owned
        finally:
            await group.close()

    _run_and_revoke(kafka, scenario, grants)


@pytest.mark.timeout(180)
def test_symmetric_refusals_tell_the_unassigned_topics_subscriber(
    secured_kafka: SecuredKafka,
) -> None:
    """alice may read and subscribes to t1 only, bob t2 only: alice steps aside, bob steps
    aside, alice leads again and stays. t1 is consumed whole, t2 stays unassigned and bob is
    told once, naming t2 and alice's client id; at most one step-aside each; never two
    owners."""
    kafka = secured_kafka
    (t1, t2), group_id, grants = _two_topics(kafka, "aio-sym", {"alice": (0,), "bob": (1,)})

    async def scenario() -> None:
        group = AioGroup(kafka, group_id)
        try:
            with LogLines() as logs:
                alice, bob, started = await _alice_leads_then_bob(group, t1, [t2])
                told_line = "assigned to no member"
                assert await group.drive_until(lambda: bool(logs.ours(told_line)), 60), logs.lines
                took_s = time.monotonic() - started
                await group.drive(3.0)
            asides = [m.hooks._impl.leader_refusal.step_asides for m in (alice, bob)]
            print(f"told {took_s:.1f} s after bob's start() returned; step-asides {asides}")
            assert max(asides) <= 1
            told = logs.ours(told_line)
            assert len(told) == 1 and repr(t2) in told[0], told
            assert f"client id '{group_id}-alice'" in told[0], told
            assert alice.owned() == {(t1, 0), (t1, 1)} and not bob.owned()
            assert len(group.consumed(t1)) == 30 and not group.consumed(t2)
            assert not alice.errors and not bob.errors, (alice.errors, bob.errors)
            assert not group.double_owned, group.double_owned
        finally:
            await group.close()

    _run_and_revoke(kafka, scenario, grants)


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
