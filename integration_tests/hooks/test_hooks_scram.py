"""The coordinator hooks of this client version over SCRAM-SHA-512, as a user with a
consumer's ACLs only, on a secured Apache Kafka 4.4 node (``StandardAuthorizer``, no ACL
means no access; :mod:`testlab.kafka_security`).

Two hooked ``CooperativeStickyAssignor`` members of ``alice`` (``READ`` on the group and the
topic) share four partitions; one leaves and the other takes everything back without being
revoked anything; the offsets committed on the way (auto-commit before the rejoin and at
close) are read back as ``alice`` (:mod:`scram_scenario`, which aiokafka's matrix runs too).
Then the group ACL of one of two members is revoked while
both consume: it gives its partitions up (``on_partitions_lost``) before the broker hands them
to the other. Apache Kafka only: skipped on the embedded broker.
"""

from __future__ import annotations

import time

import kafka
from hooks_harness import (
    Member,
    Producer,
    consumed_by_two_live_members,
    create_topics,
    unique,
    wait_stable,
)
from scram_scenario import PARTITIONS, SECURED_MARKS, join_leave_and_commit, secured

from kafka_sticky_plugin import CooperativeStickyAssignor
from kafka_sticky_plugin.client_security import kafka_python_settings
from testlab.kafka_security import SecuredKafka

pytestmark = SECURED_MARKS
__all__ = ["secured"]


def test_hooked_members_join_rebalance_and_commit_over_scram(secured: SecuredKafka) -> None:
    """Join, leave and commit over SCRAM with a consumer's ACLs (module docstring)."""
    alice = kafka_python_settings(secured.client("alice", "scram"))
    committed, delivered = join_leave_and_commit(
        secured,
        lambda name, bootstrap, group_id, topic: Member(
            name, bootstrap, group_id, [topic], [CooperativeStickyAssignor], settings=alice
        ),
    )
    print(f"kafka-python {kafka.__version__}: committed {committed}, delivered {delivered}")
    assert committed == delivered


def test_group_acl_revoked_while_consuming_loses_partitions_first(secured: SecuredKafka) -> None:
    """``bob``'s Read on the group is revoked while ``a`` (alice) and ``b`` (bob) consume. His
    first refused heartbeat drops his membership: his partitions go to
    ``on_partitions_lost`` before ``a`` is assigned them (which the broker does only after
    bob's session timeout); no partition is owned or consumed by both at once. Without the
    hooks' heartbeat handling (2.x) bob kept them and fetched on: two owners."""
    import kafka.errors as kafka_errors

    bootstrap = secured.bootstrap("scram")
    admin = kafka_python_settings(secured.admin("scram"))
    topic, group_id = unique("t-revoke"), unique("g-revoke")
    create_topics(bootstrap, {topic: PARTITIONS}, settings=admin)
    for user in ("alice", "bob"):
        secured.grant(user, "topic", topic, ("READ", "DESCRIBE"))
        secured.grant(user, "group", group_id, ("READ",))
    producer = Producer(bootstrap, {topic: PARTITIONS}, rate_per_s=40, settings=admin)
    everything = {(topic, p) for p in range(PARTITIONS)}
    a = Member(
        "a",
        bootstrap,
        group_id,
        [topic],
        [CooperativeStickyAssignor],
        settings=kafka_python_settings(secured.client("alice", "scram")),
    )
    b = Member(
        "b",
        bootstrap,
        group_id,
        [topic],
        [CooperativeStickyAssignor],
        settings=kafka_python_settings(secured.client("bob", "scram")),
        tolerate=(kafka_errors.GroupAuthorizationFailedError,),  # the refused join's raise
    )
    try:
        a.start()
        b.start()
        held = wait_stable([a, b], everything)["b"]
        revoked_at = time.monotonic()
        secured.revoke("bob", "group", group_id, ("READ",))
        wait_stable([a], everything, timeout_s=40)
        lost = [e for e in b.events if e.kind == "lost" and e.t >= revoked_at]
        taken = [
            e
            for e in a.events
            if e.kind == "assigned" and e.partitions & held and e.t >= revoked_at
        ]
        print(
            f"kafka-python {kafka.__version__}: bob held {sorted(held)}; lost after"
            f" {[round(e.t - revoked_at, 1) for e in lost]} s, alice assigned them after"
            f" {[round(e.t - revoked_at, 1) for e in taken]} s;"
            f" bob's poll() raised {len(b.poll_errors)} times"
        )
        assert lost and lost[0].partitions == held, b.events
        assert taken and lost[0].t < taken[0].t, (lost, taken)
        assert not b.snapshot()
        assert consumed_by_two_live_members([a, b]) == []
    finally:
        a.stop()
        b.stop()
        producer.close()
