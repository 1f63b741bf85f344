"""The kafka-python hooks' side of a leader refused another member's topic, without a broker
(the decisions: ``tests/test_leader_refusal.py``; real brokers:
``integration_tests/hooks/test_hooks_acl_leader.py`` on every client version,
``integration_tests/security/test_security_acl_leader.py`` on 3.0): 2.x's step-aside in the
pre-join step, the told check taken once per generation, and 2.x's DescribeGroups version."""

from __future__ import annotations

import logging
import time
from typing import Any

import pytest
from hooks_support import IS_V3, RecordingListener, join_complete, join_prepare, make_consumer, tps

from kafka_sticky_plugin.adapters.kafka_python.hooks.leader_refusal import (
    describe_groups_version,
)
from kafka_sticky_plugin.assignor.leader_refusal import DescribedMember
from kafka_sticky_plugin.codec.consumer_protocol import Assignment, encode_assignment
from kafka_sticky_plugin.kafka_python import CooperativeStickyAssignor, install_hooks


@pytest.fixture
def consumer() -> Any:
    consumer = make_consumer([CooperativeStickyAssignor])
    yield consumer
    consumer.close()


def test_describe_groups_version_is_the_highest_both_sides_know_up_to_v3() -> None:
    assert describe_groups_version(4, None) == 0  # broker versions unknown
    assert describe_groups_version(4, (0, 5)) == 3
    assert describe_groups_version(6, (0, 5)) == 3  # v4 adds a member field: not read
    assert describe_groups_version(4, (0, 1)) == 1
    assert describe_groups_version(4, (2, 5)) == 3
    assert describe_groups_version(2, (0, 5)) == 1  # a client that has v0 and v1 only


@pytest.mark.skipif(IS_V3, reason="3.0 steps aside in join_group_async (real-broker test)")
def test_a_pending_step_aside_revokes_everything_and_forgets_the_join(consumer: Any) -> None:
    """2.x: the pre-join step of a leader that decided to step aside revokes every owned
    partition (still assigned during the callback), forgets the join state and leaves (no
    coordinator known: only the generation is reset), once."""
    listener = RecordingListener(consumer)
    hooks = install_hooks(consumer)
    consumer.subscribe(["t1"], listener=listener)
    join_complete(consumer, 3, "cooperative-sticky", [("t1", 0), ("t1", 1)])
    refusal = hooks._impl.leader_refusal
    refusal.pending = True
    join_prepare(consumer, 3, "member-1")
    owned = tps(("t1", 0), ("t1", 1))
    assert listener.calls[-1] == ("revoked", owned, owned)
    assert not consumer.assignment()
    assert refusal.step_asides == 1 and not refusal.pending
    assert not hooks._impl.joined.partitions
    assert consumer._coordinator._generation.member_id == ""
    # the next pre-join step is an ordinary one (nothing owned, nothing revoked again)
    join_prepare(consumer, -1, "")
    assert refusal.step_asides == 1 and listener.kinds().count("revoked") == 1


def test_the_check_is_taken_once_per_generation_and_tells_once(
    consumer: Any, caplog: pytest.LogCaptureFixture
) -> None:
    hooks = install_hooks(consumer)
    consumer.subscribe(["t1", "t2"])
    refusal = hooks._impl.leader_refusal
    generation = consumer._coordinator._generation.generation_id
    refusal._check = (generation, time.monotonic() + 60, frozenset({"t2"}))
    assert refusal._take_due(True) is None  # not due yet
    refusal._check = (generation, time.monotonic() - 1, frozenset({"t2"}))
    assert refusal._take_due(False) is None  # due, but a rebalance is on
    assert refusal._take_due(True) == (generation, frozenset({"t2"}))
    assert refusal._take_due(True) is None and refusal.describes == 1
    refusal.on_join_response("m-1")
    held = encode_assignment(Assignment(version=1, partitions=(("t1", 0),)))
    members = [
        DescribedMember("m-1", "orders-a", "/10.0.0.1", held),
        DescribedMember("m-2", "orders-b", "/10.0.0.2", b""),
    ]
    with caplog.at_level(logging.WARNING, logger="kafka_sticky_plugin"):
        refusal._tell(members, generation, frozenset({"t2"}))
        refusal._tell(members, generation, frozenset({"t2"}))
        refusal._tell(None, generation, frozenset({"t3"}))  # not described: nothing said
        refusal._tell(members, generation + 1, frozenset({"t3"}))  # an older generation's
    told = [r.getMessage() for r in caplog.records if "assigned to no member" in r.getMessage()]
    assert len(told) == 1 and "'t2'" in told[0] and "client id 'orders-a'" in told[0], told
    # a check whose generation ended is dropped
    refusal._check = (generation - 1, time.monotonic() - 1, frozenset({"t2"}))
    assert refusal._take_due(True) is None and refusal._check is None
