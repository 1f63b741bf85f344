"""Java 4.5's listener (KIP-1306) on a hooked kafka-python consumer, no broker: registration
(one listener slot), the view over the real consumer, and the callbacks the hooks make
through the coordinator's own rebalance entry points."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from hooks_support import IS_V3, RecordingListener, join_complete, join_prepare, make_consumer, tps
from kafka import KafkaConsumer

from kafka_sticky_plugin.adapters.kafka_python.rebalance_consumer import OFFERED
from kafka_sticky_plugin.errors import ConfigurationError
from kafka_sticky_plugin.kafka_python import (
    CooperativeStickyAssignor,
    RebalanceConsumer,
    RebalanceConsumerClosedError,
    RebalanceConsumerError,
    RebalanceListener,
    install_hooks,
    set_rebalance_listener,
)
from kafka_sticky_plugin.listener import JAVA_OPERATIONS

COOP = "cooperative-sticky"
pytestmark = pytest.mark.timeout(30)


class Seen(RebalanceListener):
    """Records each call: kind, partitions, the assignment the view shows, its thread, the
    view's operations, whether poll/close were refused; keeps the view."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, set[Any], set[Any]]] = []
        self.threads: list[str] = []
        self.refused: list[str] = []
        self.views: list[RebalanceConsumer] = []

    def _see(self, kind: str, partitions: set[Any], consumer: RebalanceConsumer) -> None:
        self.calls.append((kind, partitions, set(consumer.assignment())))
        self.threads.append(threading.current_thread().name)
        for name in ("poll", "close", "subscribe", "unsubscribe", "wakeup"):
            try:
                getattr(consumer, name)
            except RebalanceConsumerError:
                self.refused.append(name)
        self.views.append(consumer)

    def on_partitions_revoked(self, partitions: set[Any], consumer: RebalanceConsumer) -> None:
        self._see("revoked", partitions, consumer)

    def on_partitions_assigned(self, partitions: set[Any], consumer: RebalanceConsumer) -> None:
        self._see("assigned", partitions, consumer)


@pytest.fixture
def consumer() -> Any:
    made = make_consumer([CooperativeStickyAssignor])
    yield made
    made.close()


def test_the_view_offers_kafka_pythons_calls_of_javas_view() -> None:
    assert set(OFFERED) <= set(JAVA_OPERATIONS)
    assert all(hasattr(KafkaConsumer, name) for name in ("commit", "seek", "pause", "position"))


def test_callbacks_get_a_view_of_the_consumer_that_dies_with_the_callback(consumer: Any) -> None:
    listener = Seen()
    install_hooks(consumer, listener=listener)
    consumer.subscribe(["t1"])  # after registration: subscribe(topics) keeps the listener
    join_complete(consumer, 2, COOP, [("t1", 0), ("t1", 1)])
    join_complete(consumer, 3, COOP, [("t1", 0)])
    assert listener.calls == [
        ("assigned", tps(("t1", 0), ("t1", 1)), tps(("t1", 0), ("t1", 1))),
        ("revoked", tps(("t1", 1)), tps(("t1", 0), ("t1", 1))),  # still assigned: commit here
        ("assigned", set(), tps(("t1", 0))),
    ]
    assert listener.refused == ["poll", "close", "subscribe", "unsubscribe", "wakeup"] * 3
    expected = tuple(n for n in JAVA_OPERATIONS if n in OFFERED and hasattr(consumer, n))
    assert listener.views[0].operations == expected
    for view in listener.views:
        with pytest.raises(RebalanceConsumerClosedError, match="no longer valid"):
            view.assignment()
    if IS_V3:  # off the IO thread, so a blocking call (commit) is allowed there
        assert all(name.startswith("rebalance-listener-") for name in listener.threads)


def test_lost_goes_to_revoked_by_default(consumer: Any) -> None:
    listener = Seen()
    install_hooks(consumer)
    consumer.subscribe(["t1"])
    set_rebalance_listener(consumer, listener)  # after subscribe works too
    join_complete(consumer, 2, COOP, [("t1", 0)])
    listener.calls.clear()
    join_prepare(consumer, -1, "")
    assert listener.calls == [("revoked", tps(("t1", 0)), tps(("t1", 0)))]


def test_a_listener_that_raises_is_the_clients_listener_error(consumer: Any) -> None:
    class Failing(Seen):
        def on_partitions_assigned(self, partitions: set[Any], consumer: Any) -> None:
            raise ValueError("listener broke")

    install_hooks(consumer, listener=Failing())
    consumer.subscribe(["t1"])
    if IS_V3:  # 3.0's contract: raised again from poll() after the bookkeeping
        with pytest.raises(Exception) as caught:
            join_complete(consumer, 2, COOP, [("t1", 0)])
        chain = [caught.value, caught.value.__cause__]
        assert any(isinstance(e, ValueError) and "listener broke" in str(e) for e in chain)
    else:  # 2.x's contract: logged, the rebalance goes on
        join_complete(consumer, 2, COOP, [("t1", 0)])
    assert consumer.assignment() == tps(("t1", 0))  # the bookkeeping completed


def test_one_listener_slot_subscribe_listener_first(consumer: Any) -> None:
    consumer.subscribe(["t1"], listener=RecordingListener(consumer))
    with pytest.raises(ConfigurationError, match="one listener slot"):
        install_hooks(consumer, listener=Seen())
    assert not hasattr(consumer, "_kafka_sticky_plugin_hooks")  # refused before installing
    install_hooks(consumer)
    with pytest.raises(ConfigurationError, match="one listener slot"):
        set_rebalance_listener(consumer, Seen())


def test_one_listener_slot_rebalance_listener_first(consumer: Any) -> None:
    install_hooks(consumer, listener=Seen())
    with pytest.raises(ConfigurationError, match="one listener slot"):
        consumer.subscribe(["t1"], listener=RecordingListener(consumer))


def test_registration_refusals(consumer: Any) -> None:
    with pytest.raises(ConfigurationError, match="install_hooks"):
        set_rebalance_listener(consumer, Seen())

    class Async(Seen):
        async def on_partitions_revoked(self, partitions: set[Any], consumer: Any) -> None:  # type: ignore[override]
            return None

    with pytest.raises(ConfigurationError, match="async def"):
        install_hooks(consumer, listener=Async())
    with pytest.raises(ConfigurationError, match=r"not a kafka_sticky_plugin\.RebalanceListener"):
        install_hooks(consumer, listener=RecordingListener(consumer))  # type: ignore[arg-type]


def test_replacing_the_listener_keeps_one(consumer: Any) -> None:
    first, second = Seen(), Seen()
    install_hooks(consumer, listener=first)
    set_rebalance_listener(consumer, second)
    consumer.subscribe(["t1"])
    join_complete(consumer, 2, COOP, [("t1", 0)])
    assert first.calls == [] and [kind for kind, _p, _a in second.calls] == ["assigned"]


@pytest.mark.skipif(not IS_V3, reason="the Processor is for kafka-python 3.0.x")
def test_a_processor_calls_a_rebalance_listener_with_its_view(consumer: Any) -> None:
    """``Processor.listener(RebalanceListener)``: the processor's work, then the user's
    method with a view (on a helper thread, so its blocking calls are allowed)."""
    from kafka_sticky_plugin.kafka_python import Processor

    listener = Seen()
    install_hooks(consumer)
    processor = Processor(consumer, lambda record: None, revoke_wait_s=0.1)
    try:
        consumer.subscribe(["t1"], listener=processor.listener(listener))
        join_complete(consumer, 2, COOP, [("t1", 0), ("t1", 1)])
        join_complete(consumer, 3, COOP, [("t1", 0)])
    finally:
        processor.close()
    assert [(kind, parts) for kind, parts, _held in listener.calls] == [
        ("assigned", tps(("t1", 0), ("t1", 1))),
        ("revoked", tps(("t1", 1))),
        ("assigned", set()),
    ]
    assert all(name.startswith("rebalance-listener-") for name in listener.threads)
    assert not any(view.valid for view in listener.views)
