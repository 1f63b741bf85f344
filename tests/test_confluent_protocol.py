"""Protocol detection: rebalance_protocol(), create_consumer() and subscribe() argument rules."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import confluent_kafka
import pytest

import kafka_sticky_plugin.confluent as confluent_api
from kafka_sticky_plugin.confluent import (
    CheckedConsumer,
    RebalanceProtocol,
    TopicPartition,
    copy_committed_offsets,
    create_consumer,
    rebalance_protocol,
    subscribe,
)
from kafka_sticky_plugin.errors import ConfigurationError

BASE: dict[str, Any] = {"group.id": "unit", "log_level": 0}
COOP: dict[str, Any] = {**BASE, "partition.assignment.strategy": "cooperative-sticky"}


class NullListener:
    """Does nothing: these tests exercise argument handling only."""

    def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        """Nothing to do."""

    def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        """Nothing to do."""


@pytest.fixture
def plain() -> Iterator[confluent_kafka.Consumer]:
    """A real confluent-kafka consumer built without this package."""
    made = confluent_kafka.Consumer(dict(COOP))
    try:
        yield made
    finally:
        made.close()


@pytest.fixture
def checked() -> Iterator[CheckedConsumer]:
    """A consumer from create_consumer() with cooperative-sticky."""
    made = create_consumer(COOP)
    try:
        yield made
    finally:
        made.close()


def test_exports_are_sorted_and_resolvable() -> None:
    """The public module's __all__ is sorted and every name exists."""
    names = list(confluent_api.__all__)
    assert names == sorted(names)
    for name in names:
        assert getattr(confluent_api, name) is not None


def test_protocol_of_a_config_and_of_a_checked_consumer(checked: CheckedConsumer) -> None:
    """A configuration and a consumer built from it report the same protocol."""
    assert rebalance_protocol(COOP) is RebalanceProtocol.COOPERATIVE
    assert rebalance_protocol(checked) is RebalanceProtocol.COOPERATIVE
    assert isinstance(checked, confluent_kafka.Consumer)


def test_eager_consumer_reports_eager() -> None:
    """The default strategy list (range,roundrobin) is EAGER."""
    made = create_consumer(BASE)
    try:
        assert rebalance_protocol(made) is RebalanceProtocol.EAGER
    finally:
        made.close()


def test_plain_consumer_protocol_is_refused_with_the_way_out(
    plain: confluent_kafka.Consumer,
) -> None:
    """A plain consumer hides its configuration: the error says what to pass instead."""
    with pytest.raises(ConfigurationError, match="create_consumer"):
        rebalance_protocol(plain)


def test_create_consumer_refuses_before_librdkafka_sees_the_config() -> None:
    """A refused configuration raises ConfigurationError (with the reason), not KafkaException."""
    with pytest.raises(ConfigurationError, match="mixes eager"):
        create_consumer({**BASE, "partition.assignment.strategy": "range,cooperative-sticky"})


def test_subscribe_a_plain_consumer_needs_its_protocol(plain: confluent_kafka.Consumer) -> None:
    """Without protocol= a plain consumer cannot be subscribed; with it, it can."""
    with pytest.raises(ConfigurationError, match="protocol=rebalance_protocol"):
        subscribe(plain, ["t"], NullListener())
    bridge = subscribe(plain, ["t"], NullListener(), protocol=rebalance_protocol(COOP))
    assert bridge.protocol is RebalanceProtocol.COOPERATIVE


def test_subscribe_refuses_a_contradicting_protocol(checked: CheckedConsumer) -> None:
    """protocol= that disagrees with a checked consumer's configuration is refused."""
    with pytest.raises(ConfigurationError, match="contradicts"):
        subscribe(checked, ["t"], NullListener(), protocol=RebalanceProtocol.EAGER)
    bridge = subscribe(checked, ["t"], NullListener(), protocol=RebalanceProtocol.COOPERATIVE)
    assert bridge.protocol is RebalanceProtocol.COOPERATIVE


@pytest.mark.parametrize("topics", [[], [""], [3]])
def test_subscribe_refuses_bad_topic_lists(checked: CheckedConsumer, topics: list[Any]) -> None:
    """Empty lists and non-names are refused before librdkafka sees them."""
    with pytest.raises(ConfigurationError, match="topics"):
        subscribe(checked, topics, NullListener())


def test_subscribe_takes_one_topic_name_as_a_string(checked: CheckedConsumer) -> None:
    """A single topic name is one topic, not a list of characters."""
    bridge = subscribe(checked, "orders", NullListener())
    assert bridge.protocol is RebalanceProtocol.COOPERATIVE


class _LostNotCallable(NullListener):
    on_partitions_lost = "not a method"


class _AsyncAssigned(NullListener):
    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:  # type: ignore[override]
        """A coroutine: librdkafka would never run it."""


class _OnlyRevoked:
    def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        """No on_partitions_assigned at all."""


@pytest.mark.parametrize(
    ("listener", "complaint"),
    [
        (object(), "has no on_partitions_revoked"),
        (_OnlyRevoked(), "has no on_partitions_assigned"),
        (_LostNotCallable(), "on_partitions_lost is not callable"),
        (_AsyncAssigned(), "on_partitions_assigned is a coroutine function"),
    ],
)
def test_subscribe_checks_the_listener_up_front(
    checked: CheckedConsumer, listener: Any, complaint: str
) -> None:
    """A listener the bridge could not call is refused at subscribe(), not inside poll()."""
    with pytest.raises(ConfigurationError, match=complaint):
        subscribe(checked, ["orders"], listener)


@pytest.mark.parametrize(("source", "target"), [("g", "g"), ("", "g"), ("g", "")])
def test_copy_needs_two_different_named_groups(source: str, target: str) -> None:
    """Copying offsets onto the same group (or an unnamed one) is refused before connecting."""
    with pytest.raises(ConfigurationError, match="two different group ids"):
        copy_committed_offsets({"bootstrap.servers": "127.0.0.1:9"}, source, target, ["t"])


def test_the_package_imports_without_touching_confluent_kafka() -> None:
    """Only kafka_sticky_plugin.confluent loads confluent_kafka; the package and the pure
    configuration check do not (the check runs where librdkafka is not installed)."""
    probe = (
        "import sys\n"
        "import kafka_sticky_plugin, kafka_sticky_plugin.core, kafka_sticky_plugin.codec\n"
        "from kafka_sticky_plugin.adapters.confluent_kafka.config import check_config\n"
        "check_config({'group.id': 'g'})\n"
        "assert 'confluent_kafka' not in sys.modules, 'confluent_kafka was imported'\n"
        "import kafka_sticky_plugin.confluent\n"
        "assert 'confluent_kafka' in sys.modules\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
