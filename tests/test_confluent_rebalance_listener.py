"""Java 4.5's listener (KIP-1306) through the confluent-kafka bridge, on a real unconnected
librdkafka consumer (no broker): the bridge's callbacks driven directly, as in
``test_confluent_listener.py``. On a broker: ``integration_tests/
test_confluent_rebalance_listener.py``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import confluent_kafka
import pytest

from kafka_sticky_plugin import RebalanceListener
from kafka_sticky_plugin.adapters.confluent_kafka.rebalance_consumer import one_argument
from kafka_sticky_plugin.confluent import (
    Processor,
    RebalanceBridge,
    RebalanceConsumer,
    RebalanceConsumerClosedError,
    RebalanceConsumerError,
    RebalanceProtocol,
    TopicPartition,
    subscribe,
)
from kafka_sticky_plugin.errors import ConfigurationError
from kafka_sticky_plugin.listener import JAVA_OPERATIONS


class Seen(RebalanceListener):
    """Records (kind, partitions, the view's assignment); pauses what it is assigned;
    keeps each view; notes which forbidden calls were refused."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, set[Any], set[Any]]] = []
        self.views: list[RebalanceConsumer] = []
        self.refused: list[str] = []

    def _see(self, kind: str, partitions: set[Any], consumer: RebalanceConsumer) -> None:
        self.calls.append((kind, partitions, consumer.assignment()))
        self.views.append(consumer)
        for name in ("poll", "consume", "close", "subscribe", "unsubscribe", "incremental_assign"):
            try:
                getattr(consumer, name)
            except RebalanceConsumerError:
                self.refused.append(name)

    def on_partitions_revoked(self, partitions: set[Any], consumer: RebalanceConsumer) -> None:
        self._see("revoked", partitions, consumer)

    def on_partitions_assigned(self, partitions: set[Any], consumer: RebalanceConsumer) -> None:
        self._see("assigned", partitions, consumer)
        consumer.pause(partitions)


@pytest.fixture
def consumer() -> Iterator[confluent_kafka.Consumer]:
    made = confluent_kafka.Consumer({"group.id": "unit", "log_level": 0})
    try:
        yield made
    finally:
        made.close()


def tps(*numbers: int) -> set[TopicPartition]:
    return {TopicPartition("t", n) for n in numbers}


def native(*numbers: int) -> list[confluent_kafka.TopicPartition]:
    return [confluent_kafka.TopicPartition("t", n) for n in numbers]


def test_callbacks_get_a_view_that_dies_with_them(consumer: confluent_kafka.Consumer) -> None:
    listener = Seen()
    bridge = RebalanceBridge(
        one_argument(consumer, listener), RebalanceProtocol.COOPERATIVE, commit_on_revoke=False
    )
    bridge.on_assign(consumer, native(0, 1))
    bridge.on_revoke(consumer, native(1))
    bridge.on_lost(consumer, native(0))
    assert listener.calls == [
        ("assigned", tps(0, 1), tps(0, 1)),
        ("revoked", tps(1), tps(0, 1)),  # still assigned while revoked runs
        ("revoked", tps(0), tps(0)),  # lost: Java's default is revoked
    ]
    assert listener.refused == [
        "poll", "consume", "close", "subscribe", "unsubscribe", "incremental_assign"
    ] * 3  # fmt: skip
    assert "on_partitions_lost" in repr(listener.views[2])
    for view in listener.views:
        with pytest.raises(RebalanceConsumerClosedError):
            view.assignment()
    assert consumer.assignment() == []


def test_the_view_offers_javas_operations_that_librdkafka_has(
    consumer: confluent_kafka.Consumer,
) -> None:
    from kafka_sticky_plugin.adapters.confluent_kafka.rebalance_consumer import (
        rebalance_consumer,
    )

    view = rebalance_consumer(consumer, "on_partitions_assigned")
    assert set(view.operations) <= set(JAVA_OPERATIONS)
    assert {"commit", "commit_async", "committed", "position", "seek", "pause", "resume"} <= set(
        view.operations
    )
    consumer.incremental_assign(native(3))
    assert view.assignment() == tps(3)
    assert view.position(TopicPartition("t", 3)) < 0  # nothing consumed yet: no position


def test_registration_checks(consumer: confluent_kafka.Consumer) -> None:
    class Async(Seen):
        async def on_partitions_assigned(self, partitions: set[Any], consumer: Any) -> None:  # type: ignore[override]
            return None

    with pytest.raises(ConfigurationError, match="async def"):
        subscribe(consumer, ["t"], Async(), protocol=RebalanceProtocol.COOPERATIVE)
    processor = Processor(consumer, lambda message: None)
    try:
        with pytest.raises(ConfigurationError, match="async def"):
            processor.listener(Async())
    finally:
        processor.close()


def test_a_processor_calls_a_rebalance_listener_with_its_view(
    consumer: confluent_kafka.Consumer,
) -> None:
    listener = Seen()
    processor = Processor(consumer, lambda message: None)
    try:
        bridge = RebalanceBridge(
            processor.listener(listener), RebalanceProtocol.COOPERATIVE, commit_on_revoke=False
        )
        bridge.on_assign(consumer, native(0, 1))
        bridge.on_revoke(consumer, native(1))
    finally:
        processor.close()
    assert listener.calls == [
        ("assigned", tps(0, 1), tps(0, 1)),
        ("revoked", tps(1), tps(0, 1)),
    ]
    assert not any(view.valid for view in listener.views)
