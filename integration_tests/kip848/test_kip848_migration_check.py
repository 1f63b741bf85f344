"""``migration-check`` against a classic group of our members and the same group once a
KIP-848 member converted it, on Apache Kafka (read-only: the command changes nothing)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from kip848_check_run import run_migration_check

from kafka_sticky_plugin.brokers.embedded import RunningBroker
from kafka_sticky_plugin.groups.runner import ConsumerGroupRunner


@pytest.mark.kafka_only("protocol_vote")
@pytest.mark.timeout(150)
def test_migration_check_on_a_classic_and_a_converted_group(
    broker: RunningBroker,
    topic_factory: Callable[[int], str],
    group_id: str,
    group_factory: Callable[..., ConsumerGroupRunner],
    capsys: pytest.CaptureFixture[str],
) -> None:
    topic = topic_factory(4)
    group = group_factory(group_id, {topic: 4}, ["cooperative-sticky"])
    group.start_members(["m0"])
    group.wait_stable(timeout_s=60)

    code, out = run_migration_check(broker.bootstrap, group_id, capsys)
    assert code == 0, out
    assert f"group {group_id}: type=classic" in out
    assert "protocol=cooperative-sticky members=1" in out
    assert "online move classic -> consumer: possible" in out
    assert "migration.policy=bidirectional" in out and "group.version=1" in out

    group.start_member("k0", client="confluent", group_protocol="consumer")
    group.wait_stable(timeout_s=90)
    code, out = run_migration_check(broker.bootstrap, group_id, capsys)
    assert code == 0, out
    assert f"group {group_id}: type=consumer" in out and "members=2" in out
    assert "online move consumer -> classic: possible" in out

    code, out = run_migration_check(broker.bootstrap, f"{group_id}-nobody", capsys)
    assert code == 3 and "does not exist" in out
