"""A classic leader that may not describe a topic another member subscribes to (issue 27),
with hooked kafka-python 3.0 members over SCRAM on a secured Apache Kafka node: the refused
leader steps aside once (LeaveGroup, rejoin) so that a member who can describe the topic
leads; when nobody who leads can, the member whose topic stays unassigned is told in one
line; a static leader never steps aside. Nothing raises out of any ``poll()``; never two
owners (checked after every round of polls, all members polled from one thread). One node
for the module (about 10 s to start); every grant made is revoked at the end of its test.

The hooks' side: :mod:`kafka_sticky_plugin.adapters.kafka_python.hooks.leader_refusal`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from acl_group import AclGroup, LogLines, PolledMember, acl_topic

from kafka_sticky_plugin.groups.admin import unique_name
from testlab.kafka_security import SecuredKafka, secured_kafka_broker

pytestmark = [
    pytest.mark.skipif(
        os.environ.get("KAFKA_STICKY_BROKER") == "embedded",
        reason="needs Apache Kafka's authorizer (the embedded broker has none)",
    ),
]

USERS = ("alice", "bob")
STEP_ASIDE = "it leaves the group once and rejoins"
STAYS = "stay unassigned while it leads (it stepped aside once"
TOLD = "are assigned to no member"


@pytest.fixture(scope="module")
def kafka(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecuredKafka]:
    with secured_kafka_broker(tmp_path_factory.mktemp("acl-leader"), users=USERS) as node:
        yield node


class Grants:
    """The ACLs a test grants, revoked when it ends."""

    def __init__(self, kafka: SecuredKafka) -> None:
        self.kafka = kafka
        self.made: list[tuple[str, str, str]] = []

    def __call__(self, user: str, resource: str, name: str) -> None:
        self.kafka.grant(user, resource, name)
        self.made.append((user, resource, name))

    def revoke_all(self) -> None:
        for user, resource, name in reversed(self.made):
            self.kafka.revoke(user, resource, name)


@dataclass
class Scene:
    """Two fresh topics (2 partitions, 30 records each), a group both users may use, the
    group's members; everything granted is revoked at teardown."""

    t1: str
    t2: str
    group: AclGroup
    grants: Grants

    def alice_leads(self, protocol: str = "cooperative", **settings: Any) -> PolledMember:
        """alice subscribes to t1 alone, takes both partitions and leads."""
        alice = self.group.add("alice", [self.t1], protocol, **settings)
        assert self.group.drive_until(lambda: len(alice.owned()) == 2, 30)
        assert alice.consumer._coordinator._is_leader
        return alice


@pytest.fixture
def scene(kafka: SecuredKafka) -> Iterator[Scene]:
    group_id = unique_name("acl-lead")
    t1, t2 = (acl_topic(kafka, f"lead-{name}", 2, records=30) for name in ("t1", "t2"))
    grants = Grants(kafka)
    group = AclGroup(kafka, group_id)
    try:
        for user in USERS:
            grants(user, "group", group_id)
        yield Scene(t1, t2, group, grants)
    finally:
        group.close()
        grants.revoke_all()


def _leader(member: PolledMember) -> Any:
    return member.hooks._impl.leader_refusal


def _generation(member: PolledMember) -> int:
    return int(member.consumer._coordinator._generation.generation_id)


@pytest.mark.parametrize("protocol", ["cooperative", "eager"])
def test_refused_leader_steps_aside_and_every_topic_is_consumed(
    scene: Scene, protocol: str
) -> None:
    """alice may read t1 only, bob t1 and t2; alice leads (she joins first), bob subscribes to
    both. alice steps aside once (one line), bob leads: every partition of t1 and t2 is
    assigned and every record of both is consumed; nobody is told anything; no poll()
    raises; never two owners."""
    t1, t2, group = scene.t1, scene.t2, scene.group
    for user in USERS:
        scene.grants(user, "topic", t1)
    scene.grants("bob", "topic", t2)
    with LogLines() as logs:
        alice = scene.alice_leads(protocol)
        first = _generation(alice)
        started = time.monotonic()
        bob = group.add("bob", [t1, t2], protocol)
        everything = {(t, p) for t in (t1, t2) for p in (0, 1)}
        assert group.drive_until(
            lambda: (
                alice.owned() | bob.owned() == everything
                and len(group.consumed(t1)) == 30 == len(group.consumed(t2))
            ),
            60,
        ), {m.user: m.owned() for m in group.members.values()}
        took_s = time.monotonic() - started
        group.drive(4.0)  # settled: no further step-aside, no told line
    print(
        f"{protocol}: everything assigned and consumed {took_s:.1f} s after bob joined;"
        f" generations {first} -> {_generation(bob)}"
    )
    assert _leader(alice).step_asides == 1 and _leader(bob).step_asides == 0
    assert bob.consumer._coordinator._is_leader
    assert alice.owned() | bob.owned() == everything
    assert len(logs.ours(f"{t2!r} subscribed by other members: {STEP_ASIDE}")) == 1
    assert not logs.ours(STAYS) and not logs.ours(TOLD), logs.lines
    assert not alice.errors and not bob.errors, (alice.errors, bob.errors)
    assert not group.double_owned


def test_symmetric_refusals_settle_and_the_unassigned_topics_subscriber_is_told(
    scene: Scene,
) -> None:
    """alice may read (and subscribes to) t1 only, bob t2 only: whoever leads cannot describe
    the other's topic. alice leads and steps aside, bob leads and steps aside, alice leads
    again and stays (one line): at most one step-aside each, then the group is stable. t1 is
    consumed whole; t2 stays unassigned and bob, its subscriber, is told in one line naming
    it and the leader's client id; no poll() raises; never two owners."""
    t1, t2, group = scene.t1, scene.t2, scene.group
    scene.grants("alice", "topic", t1)
    scene.grants("bob", "topic", t2)
    with LogLines() as logs:
        alice = scene.alice_leads()
        first = _generation(alice)
        started = time.monotonic()
        bob = group.add("bob", [t2])
        assert group.drive_until(lambda: bool(logs.ours(TOLD)), 60), logs.lines
        took_s = time.monotonic() - started
        settled = _generation(alice)
        group.drive(5.0)
    print(
        f"told {took_s:.1f} s after bob joined; generations {first} -> {settled};"
        f" step-asides alice {_leader(alice).step_asides}, bob {_leader(bob).step_asides};"
        f" DescribeGroups alice {_leader(alice).describes}, bob {_leader(bob).describes}"
    )
    assert _generation(alice) == settled == _generation(bob)  # stable since
    assert _leader(alice).step_asides <= 1 and _leader(bob).step_asides <= 1
    assert alice.consumer._coordinator._is_leader
    assert alice.owned() == {(t1, 0), (t1, 1)} and not bob.owned()
    assert len(group.consumed(t1)) == 30 and not group.consumed(t2)
    told = logs.ours(TOLD)
    assert len(told) == 1 and repr(t2) in told[0], told
    assert f"client id '{group.group_id}-alice'" in told[0], told
    assert len(logs.ours(STAYS)) == 1, logs.lines
    assert not alice.errors and not bob.errors, (alice.errors, bob.errors)
    assert not group.double_owned


def test_a_static_leader_stays_and_the_member_is_told(scene: Scene) -> None:
    """As the first scenario, but alice is a static member (``group_instance_id``): she never
    steps aside (the coordinator would keep her leader when she rejoins) and says why in one
    line; t2 stays unassigned and bob is told once; t1 is consumed whole; never two
    owners."""
    t1, t2, group = scene.t1, scene.t2, scene.group
    for user in USERS:
        scene.grants(user, "topic", t1)
    scene.grants("bob", "topic", t2)
    with LogLines() as logs:
        alice = scene.alice_leads(group_instance_id=f"{group.group_id}-alice")
        bob = group.add("bob", [t1, t2])
        assert group.drive_until(lambda: bool(logs.ours(TOLD)), 60), logs.lines
        group.drive(3.0)
    assert _leader(alice).step_asides == 0 and alice.consumer._coordinator._is_leader
    stays = logs.ours("stay unassigned while it leads (a static member")
    assert len(stays) == 1 and repr(t2) in stays[0], logs.lines
    told = logs.ours(TOLD)
    assert len(told) == 1 and repr(t2) in told[0], told
    assert alice.owned() | bob.owned() == {(t1, 0), (t1, 1)}
    assert len(group.consumed(t1)) == 30 and not group.consumed(t2)
    assert not alice.errors and not bob.errors, (alice.errors, bob.errors)
    assert not group.double_owned
