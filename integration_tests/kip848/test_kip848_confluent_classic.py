"""confluent-kafka classic members (librdkafka's ``cooperative-sticky`` behind this package's
listener bridge) moving to KIP-848, on Apache Kafka.

Why a group of them is refused: librdkafka's leader copies every member's *subscription*
user data into that member's *assignment* (it keeps the JoinGroup metadata's user data per
member and writes it back in the SyncGroup), and librdkafka's ``cooperative-sticky``
subscription carries the member's previous assignment and generation from its second join on.
So once such a group has rebalanced twice under a librdkafka leader, assignments carry user
data and the broker refuses to convert it ("userData from a custom assignor would be lost":
the first ``group.protocol=consumer`` member gets GROUP_ID_NOT_FOUND). ``migration-check``
names this, the refused newcomer logs one line that says so, and the two ways that work are
checked here with records flowing and
commit-on-revoke: restart every member at once with ``group.protocol=consumer`` (committed
offsets carry over; nothing acknowledged is lost), or let a member whose leader code writes no
assignment user data lead (a hooked kafka-python member), then roll the confluent members one
by one.
"""

from __future__ import annotations

import logging
import time

import pytest
from group_flow import FlowingGroupFactory
from kip848_check_run import run_migration_check
from kip848_logs import assert_no_error_of_ours

from kafka_sticky_plugin.brokers.embedded import RunningBroker
from kafka_sticky_plugin.confluent import create_consumer
from testlab.checks import check_stable_assignment

PARTITIONS = 6


def _refused(bootstrap: str, group_id: str, topic: str) -> str | None:
    """A ``group.protocol=consumer`` newcomer (made by ``kafka_sticky_plugin.confluent``):
    the name of the error it gets within 20 s (librdkafka makes the broker's refusal fatal),
    or None; closed either way."""
    consumer = create_consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group_id,
            "group.protocol": "consumer",
            "auto.offset.reset": "earliest",
            "log_level": 3,
        }
    )
    try:
        consumer.subscribe([topic])
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            message = consumer.poll(0.2)
            error = message.error() if message is not None else None
            if error is not None:
                return str(error.name())
        return None
    finally:
        consumer.close()


@pytest.mark.kafka_only("protocol_vote")
@pytest.mark.timeout(240)
def test_a_librdkafka_led_group_is_blocked_and_moves_by_one_restart_of_all(
    broker: RunningBroker,
    flowing_group: FlowingGroupFactory,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="kafka_sticky_plugin")
    flow = flowing_group(["cooperative-sticky"], PARTITIONS, rate_per_s=20, client="confluent")
    group = flow.group
    everything = group.all_partitions()
    group.start_member("m0")
    group.wait_stable(timeout_s=60)
    group.start_member("m1")  # m0's second join: its subscription carries librdkafka's state
    check_stable_assignment(group.wait_stable(timeout_s=60), everything)
    status, out = run_migration_check(broker.bootstrap, group.group_id, capsys)
    assert status == 1
    assert "leader is a librdkafka (confluent-kafka) consumer" in out
    assert _refused(broker.bootstrap, group.group_id, flow.topic) == "_FATAL"
    refusals = [r.getMessage() for r in caplog.records if "refused to convert" in r.getMessage()]
    assert len(refusals) == 1 and "confluent-kafka classic leader" in refusals[0], refusals
    for name in ("m0", "m1"):
        group.stop_member(name)
    for name in ("m0", "m1"):
        group.start_member(name, client="confluent", group_protocol="consumer")
    check_stable_assignment(group.wait_stable(timeout_s=90), everything)
    status, out = run_migration_check(broker.bootstrap, group.group_id, capsys)
    assert "type=consumer" in out  # a consumer group now
    flow.finish("confluent classic -> consumer, all at once")
    assert_no_error_of_ours(caplog)


@pytest.mark.kafka_only("protocol_vote")
@pytest.mark.timeout(240)
def test_confluent_classic_members_move_online_when_a_hooked_member_leads(
    broker: RunningBroker,
    flowing_group: FlowingGroupFactory,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="kafka_sticky_plugin")
    flow = flowing_group(["cooperative-sticky"], PARTITIONS, rate_per_s=20)
    group = flow.group
    everything = group.all_partitions()
    group.start_member("leader")  # hooked kafka-python: first in, so it leads
    group.wait_stable(timeout_s=60)
    for name in ("c0", "c1"):
        group.start_member(name, client="confluent")
        check_stable_assignment(group.wait_stable(timeout_s=60), everything)
    status, out = run_migration_check(broker.bootstrap, group.group_id, capsys)
    assert status == 0, out
    for name in ("c0", "c1"):
        group.stop_member(name)
        group.start_member(name, client="confluent", group_protocol="consumer")
        check_stable_assignment(group.wait_stable(timeout_s=90), everything)
    status, out = run_migration_check(broker.bootstrap, group.group_id, capsys)
    assert "type=consumer" in out
    flow.finish("confluent classic -> consumer, one by one, a hooked member leading")
    assert_no_error_of_ours(caplog)
