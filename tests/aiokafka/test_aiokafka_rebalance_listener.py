"""Java 4.5's listener (KIP-1306) on a hooked aiokafka consumer, no broker: registration
(one listener slot) and the view over the real consumer (its coroutines stay coroutines).
The callbacks on a broker: ``integration_tests/aiokafka/test_aio_rebalance_listener.py``."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Coroutine
from typing import Any

import pytest
from aio_support import consumer
from aiokafka.abc import ConsumerRebalanceListener

from kafka_sticky_plugin.adapters.aiokafka.rebalance_consumer import OFFERED, rebalance_consumer
from kafka_sticky_plugin.aiokafka import (
    CooperativeStickyAssignor,
    RebalanceConsumerError,
    RebalanceListener,
    install_hooks,
    set_rebalance_listener,
)
from kafka_sticky_plugin.errors import ConfigurationError
from kafka_sticky_plugin.listener import JAVA_OPERATIONS


def run(coro: Coroutine[Any, Any, None]) -> None:
    asyncio.run(coro)


class Ours(RebalanceListener):
    async def on_partitions_revoked(self, partitions: set[Any], consumer: Any) -> None:
        await consumer.commit()

    def on_partitions_assigned(self, partitions: set[Any], consumer: Any) -> None:
        return None


class Theirs(ConsumerRebalanceListener):  # type: ignore[misc]
    def on_partitions_revoked(self, revoked: Any) -> None:
        return None

    def on_partitions_assigned(self, assigned: Any) -> None:
        return None


def test_the_view_is_aiokafkas_own_calls() -> None:
    async def scenario() -> None:
        c = consumer("t", partition_assignment_strategy=(CooperativeStickyAssignor,))
        view = rebalance_consumer(c, "on_partitions_revoked")
        assert set(view.operations) == set(OFFERED) <= set(JAVA_OPERATIONS)
        assert inspect.iscoroutinefunction(view.commit)  # awaited, as aiokafka's commit
        for name in ("getmany", "getone", "stop", "subscribe", "unsubscribe"):
            with pytest.raises(RebalanceConsumerError, match="commit, committed, position"):
                getattr(view, name)
        await c.stop()

    run(scenario())


def test_one_listener_slot() -> None:
    async def scenario() -> None:
        first = consumer(partition_assignment_strategy=(CooperativeStickyAssignor,))
        first.subscribe(["t"], listener=Theirs())
        with pytest.raises(ConfigurationError, match="one listener slot"):
            install_hooks(first, listener=Ours())
        assert "_kafka_sticky_plugin_aiokafka_hooks" not in first.__dict__
        install_hooks(first)
        with pytest.raises(ConfigurationError, match="one listener slot"):
            set_rebalance_listener(first, Ours())
        second = consumer(partition_assignment_strategy=(CooperativeStickyAssignor,))
        handle = install_hooks(second, listener=Ours())
        with pytest.raises(ConfigurationError, match="one listener slot"):
            second.subscribe(["t"], listener=Theirs())
        second.subscribe(["t"])  # no listener: ours stays
        assert isinstance(handle._impl.rebalance_listener, Ours)
        await first.stop()
        await second.stop()

    run(scenario())


def test_registration_refusals() -> None:
    async def scenario() -> None:
        c = consumer("t", partition_assignment_strategy=(CooperativeStickyAssignor,))
        with pytest.raises(ConfigurationError, match="install_hooks"):
            set_rebalance_listener(c, Ours())
        with pytest.raises(ConfigurationError, match="RebalanceListener"):
            install_hooks(c, listener=Theirs())  # type: ignore[arg-type]
        await c.stop()

    run(scenario())


def test_a_processor_calls_a_rebalance_listener_with_its_view() -> None:
    """``Processor.listener(RebalanceListener)``: the user's method gets its view, valid
    while the method (awaited) runs, dead afterwards."""
    from kafka_sticky_plugin.aiokafka import Processor

    seen: list[tuple[str, set[Any], Any]] = []

    class Keeps(RebalanceListener):
        async def on_partitions_revoked(self, partitions: set[Any], consumer: Any) -> None:
            await asyncio.sleep(0)
            seen.append(("revoked", partitions, consumer.assignment()))

        def on_partitions_assigned(self, partitions: set[Any], consumer: Any) -> None:
            seen.append(("assigned", partitions, consumer))

    async def handle(record: Any) -> None:
        return None

    async def scenario() -> None:
        c = consumer("t", enable_auto_commit=False)
        processor = Processor(c, handle)
        listener = processor.listener(Keeps())
        await listener.on_partitions_assigned(set())
        await listener.on_partitions_revoked(set())
        await c.stop()

    run(scenario())
    assert [(kind, parts) for kind, parts, _x in seen] == [("assigned", set()), ("revoked", set())]
    assert seen[1][2] == set()  # the view answered inside the (awaited) method
    assert not seen[0][2].valid
