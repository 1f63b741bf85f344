"""Each way Apache Kafka refuses an online move between the classic and the KIP-848
``consumer`` protocol surfaces from our code as one WARNING line that says what to change
(and ``migration-check`` names the blocker before anyone tries):

- policy ``disabled``: a ``consumer``-protocol member cannot convert a classic group (the
  broker answers GROUP_ID_NOT_FOUND, librdkafka reports a fatal "group id does not exist"),
  and a classic member cannot join a consumer group (INCONSISTENT_GROUP_PROTOCOL);
- assignment user data (a custom assignor's state) in a classic group: the conversion is
  refused (GROUP_ID_NOT_FOUND);
- mismatched protocol names: a classic member whose assignors share no name with the classic
  members of a mixed group is refused (INCONSISTENT_GROUP_PROTOCOL).

Never more than one such line per consumer, and the classic group keeps consuming.
The ``disabled`` cases need their own broker (the policy is a static broker setting).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from kafka import KafkaConsumer
from kafka.coordinator.assignors.range import RangePartitionAssignor
from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment

from kafka_sticky_plugin import CooperativeStickyAssignor, StickyAssignor
from kafka_sticky_plugin.brokers.embedded import RunningBroker
from kafka_sticky_plugin.confluent import create_consumer
from kafka_sticky_plugin.groups.admin import create_topic, unique_name
from kafka_sticky_plugin.hooks import install_hooks
from kafka_sticky_plugin.migration_check import main as migration_check
from testlab.kafka_broker import kafka_broker

pytestmark = pytest.mark.skipif(
    os.environ.get("KAFKA_STICKY_BROKER") == "embedded", reason="Apache Kafka behaviour"
)


@pytest.fixture(scope="module")
def disabled_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningBroker]:
    """Apache Kafka with group.consumer.migration.policy=disabled."""
    settings = {"group.consumer.migration.policy": "disabled"}
    with kafka_broker(Path(tmp_path_factory.mktemp("disabled")), settings=settings) as running:
        yield running


class UserDataRange(RangePartitionAssignor):  # type: ignore[misc]
    """kafka-python's range, but every assignment carries user data (a custom assignor)."""

    name = "range-with-state"

    @classmethod
    def assign(cls, cluster: Any, members: Any) -> dict[str, Any]:
        plain = super().assign(cluster, members)
        return {
            member: ConsumerProtocolAssignment(
                version=0, assigned_partitions=a.assigned_partitions, user_data=b"state"
            )
            for member, a in plain.items()
        }


def _classic(bootstrap: str, group: str, topic: str, assignor: Any, hooks: bool) -> Any:
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=group,
        partition_assignment_strategy=[assignor],
        session_timeout_ms=6000,
        heartbeat_interval_ms=1000,
        max_poll_interval_ms=10000,
        auto_offset_reset="earliest",
    )
    _OPEN.append(consumer)
    if hooks:
        install_hooks(consumer)
    consumer.subscribe([topic])
    return consumer


def _kip848(bootstrap: str, group: str, topic: str) -> Any:
    consumer = create_consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "group.protocol": "consumer",
            "auto.offset.reset": "earliest",
            "log_level": 3,
        }
    )
    _OPEN.append(consumer)
    consumer.subscribe([topic])
    return consumer


def _spin(seconds: float, classic: list[Any], kip848: list[Any]) -> list[str]:
    """Poll every consumer for ``seconds``; the errors they raised or returned."""
    seen: list[str] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for consumer in classic:
            try:
                consumer.poll(timeout_ms=100)
            except Exception as exc:  # what a refused classic member raises: recorded
                seen.append(type(exc).__name__)
        for consumer in kip848:
            message = consumer.poll(0.1)
            if message is not None and message.error() is not None:
                seen.append(message.error().name())
    return seen


def _our_line(caplog: pytest.LogCaptureFixture, words: str) -> str:
    """The one line of ours that holds ``words`` (asserting there is exactly one)."""
    lines = [
        r.getMessage()
        for r in caplog.records
        if r.name.startswith("kafka_sticky_plugin") and words in r.getMessage()
    ]
    for line in lines:
        print(f"our line: {line}")
    assert len(lines) == 1, f"{len(lines)} lines of ours with {words!r}"
    return lines[0]


_OPEN: list[Any] = []


@pytest.fixture(autouse=True)
def _close_consumers() -> Iterator[None]:
    """Every consumer a test opened is closed, in reverse order, whatever the test did (a
    librdkafka consumer left open keeps the interpreter from exiting)."""
    yield
    while _OPEN:
        _OPEN.pop().close()


@pytest.mark.timeout(120)
def test_policy_disabled_refuses_both_ways_in_one_line_each(
    disabled_broker: RunningBroker, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="kafka_sticky_plugin")
    bootstrap = disabled_broker.bootstrap
    topic = create_topic(bootstrap, unique_name("t-disabled"), 4)
    classic_group, consumer_group = unique_name("g-classic"), unique_name("g-consumer")

    ours = _classic(bootstrap, classic_group, topic, CooperativeStickyAssignor(), hooks=True)
    _spin(4, [ours], [])
    assert migration_check(["--bootstrap", bootstrap, "--group", classic_group]) == 1
    newcomer = _kip848(bootstrap, classic_group, topic)
    errors = _spin(6, [ours], [newcomer])
    assert "_FATAL" in errors and not any(e.endswith("Error") for e in errors)
    assert "migration.policy must be" in _our_line(caplog, "refused to convert this classic group")
    assert ours.assignment(), "the classic member stopped consuming"

    kip848 = _kip848(bootstrap, consumer_group, topic)
    _spin(4, [], [kip848])
    joiner = _classic(bootstrap, consumer_group, topic, CooperativeStickyAssignor(), hooks=True)
    errors = _spin(6, [joiner], [kip848])
    assert "InconsistentGroupProtocolError" in errors
    assert "'bidirectional' or 'downgrade'" in _our_line(caplog, "refused this classic member")


@pytest.mark.kafka_only("protocol_vote")
@pytest.mark.timeout(120)
def test_assignment_user_data_blocks_the_conversion(
    broker: RunningBroker, topic_factory: Callable[[int], str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="kafka_sticky_plugin")
    topic, group = topic_factory(4), unique_name("g-user-data")
    custom = _classic(broker.bootstrap, group, topic, UserDataRange(), hooks=False)
    _spin(4, [custom], [])
    assert migration_check(["--bootstrap", broker.bootstrap, "--group", group]) == 1
    newcomer = _kip848(broker.bootstrap, group, topic)
    errors = _spin(6, [custom], [newcomer])
    assert "_FATAL" in errors
    assert "user data" in _our_line(caplog, "refused to convert this classic group")


@pytest.mark.kafka_only("protocol_vote")
@pytest.mark.timeout(120)
def test_a_classic_member_with_another_protocol_name_is_refused_from_a_mixed_group(
    broker: RunningBroker, topic_factory: Callable[[int], str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="kafka_sticky_plugin")
    topic, group = topic_factory(4), unique_name("g-names")
    ours = _classic(broker.bootstrap, group, topic, CooperativeStickyAssignor(), hooks=True)
    kip848 = _kip848(broker.bootstrap, group, topic)
    _spin(6, [ours], [kip848])
    eager = _classic(broker.bootstrap, group, topic, StickyAssignor(), hooks=True)
    errors = _spin(6, [ours, eager], [kip848])
    assert "InconsistentGroupProtocolError" in errors
    assert "this one offers sticky" in _our_line(caplog, "refused this classic member")
    assert ours.assignment(), "the member already in the group stopped consuming"
