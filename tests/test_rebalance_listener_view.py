"""The KIP-1306 listener floor (``kafka_sticky_plugin.listener``), client-free: Java 4.5's
``RebalanceListener`` defaults and the ``RebalanceConsumer`` view's rules (only Java's
operations, one clear error for anything else, dead once its callback returned).

The view here wraps a plain object whose methods record their calls: the floor takes any
callables; the client bindings over real consumers are tested per client
(``tests/hooks``, ``tests/aiokafka``, ``tests/test_confluent_rebalance_listener.py``) and on
brokers (``integration_tests``)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from kafka_sticky_plugin import RebalanceConsumer as TopRebalanceConsumer
from kafka_sticky_plugin import RebalanceListener as TopRebalanceListener
from kafka_sticky_plugin.errors import ConfigurationError
from kafka_sticky_plugin.listener import (
    JAVA_OPERATIONS,
    RebalanceConsumer,
    RebalanceConsumerClosedError,
    RebalanceConsumerError,
    RebalanceListener,
    check_rebalance_listener,
)
from kafka_sticky_plugin.listener.contract import invoke, invoke_async

FORBIDDEN = ("poll", "close", "subscribe", "unsubscribe", "assign", "wakeup", "enforce_rebalance")


class Target:
    """Records the calls the view forwards."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...]]] = []

    def commit(self, offsets: Any = None) -> str:
        self.calls.append(("commit", (offsets,)))
        return "committed"

    def seek(self, partition: Any, offset: int) -> None:
        self.calls.append(("seek", (partition, offset)))

    def assignment(self) -> set[str]:
        return {"t-0", "t-1"}


def view(target: Target, callback: str = "on_partitions_revoked") -> RebalanceConsumer:
    ops: dict[str, Callable[..., Any]] = {
        "commit": target.commit,
        "seek": target.seek,
        "assignment": target.assignment,
    }
    return RebalanceConsumer(ops, callback=callback, client="test")


class Keeper(RebalanceListener):
    """Uses the view and keeps it (the mistake the view makes harmless)."""

    def __init__(self) -> None:
        self.kept: list[tuple[str, set[Any], RebalanceConsumer]] = []

    def on_partitions_revoked(self, partitions: set[Any], consumer: RebalanceConsumer) -> None:
        consumer.commit({"t-0": 5})
        self.kept.append(("revoked", partitions, consumer))

    def on_partitions_assigned(self, partitions: set[Any], consumer: RebalanceConsumer) -> None:
        consumer.seek("t-1", 7)
        self.kept.append(("assigned", partitions, consumer))


def test_the_top_level_names_are_the_floor_classes() -> None:
    assert TopRebalanceListener is RebalanceListener
    assert TopRebalanceConsumer is RebalanceConsumer


def test_offered_operations_reach_the_client_in_java_order() -> None:
    target = Target()
    v = view(target)
    assert v.operations == ("commit", "seek", "assignment")
    assert v.commit({"t-0": 3}) == "committed"
    v.seek("t-0", 4)
    assert v.assignment() == {"t-0", "t-1"}
    assert target.calls == [("commit", ({"t-0": 3},)), ("seek", ("t-0", 4))]


@pytest.mark.parametrize("name", [*FORBIDDEN, "commit_async", "position", "no_such_call"])
def test_any_other_attribute_is_one_clear_error_naming_what_is_allowed(name: str) -> None:
    v = view(Target())
    with pytest.raises(RebalanceConsumerError) as caught:
        getattr(v, name)
    message = str(caught.value)
    assert repr(name) in message and "commit, seek, assignment" in message
    assert "on_partitions_revoked" in message and "KIP-1306" in message
    assert not hasattr(v, name)  # an AttributeError: absent, as in Java's interface


def test_the_view_cannot_be_written_to() -> None:
    v = view(Target())
    with pytest.raises(RebalanceConsumerError):
        v.commit = print  # type: ignore[method-assign]
    assert "print" not in repr(v)


def test_a_kept_view_is_dead_after_its_callback_returned() -> None:
    target = Target()
    listener = Keeper()
    invoke(listener, "revoked", ["t-0"], lambda name: view(target, name))
    (kind, partitions, kept) = listener.kept[0]
    assert (kind, partitions) == ("revoked", {"t-0"}) and not kept.valid
    for name in ("commit", "seek", "assignment", "poll"):
        with pytest.raises(RebalanceConsumerClosedError, match="no longer valid"):
            getattr(kept, name)
    assert target.calls == [("commit", ({"t-0": 5},))]  # only the call made in time


def test_an_operation_fetched_in_time_and_called_late_is_refused() -> None:
    target = Target()
    fetched: list[Any] = []

    class Grabber(Keeper):
        def on_partitions_assigned(self, partitions: set[Any], consumer: Any) -> None:
            fetched.append(consumer.commit)

    invoke(Grabber(), "assigned", [], lambda name: view(target, name))
    with pytest.raises(RebalanceConsumerClosedError, match="on_partitions_assigned"):
        fetched[0]({"t-0": 1})
    assert target.calls == []


def test_the_view_dies_also_when_the_callback_raises() -> None:
    kept: list[RebalanceConsumer] = []

    class Failing(Keeper):
        def on_partitions_revoked(self, partitions: set[Any], consumer: Any) -> None:
            kept.append(consumer)
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        invoke(Failing(), "revoked", [], lambda name: view(Target(), name))
    assert not kept[0].valid


def test_lost_defaults_to_revoked_with_its_own_view() -> None:
    target = Target()
    listener = Keeper()
    invoke(listener, "lost", ["t-1"], lambda name: view(target, name))
    (kind, partitions, kept) = listener.kept[0]
    assert (kind, partitions) == ("revoked", {"t-1"})
    assert "on_partitions_lost" in repr(kept) and not kept.valid


def test_each_call_gets_a_fresh_set_and_a_fresh_view() -> None:
    listener = Keeper()
    given = {"t-0"}
    invoke(listener, "revoked", given, lambda name: view(Target(), name))
    invoke(listener, "assigned", given, lambda name: view(Target(), name))
    first, second = listener.kept
    assert first[1] is not given and first[1] is not second[1]
    assert first[2] is not second[2]


def test_an_async_method_keeps_its_view_until_it_finished() -> None:
    target = Target()
    kept: list[RebalanceConsumer] = []

    class Awaiting(Keeper):
        async def on_partitions_revoked(self, partitions: set[Any], consumer: Any) -> None:  # type: ignore[override]
            await asyncio.sleep(0)
            consumer.commit({"t-0": 9})  # after an await: still inside the callback
            kept.append(consumer)

    asyncio.run(invoke_async(Awaiting(), "revoked", ["t-0"], lambda n: view(target, n)))
    assert target.calls == [("commit", ({"t-0": 9},))] and not kept[0].valid


def test_java_requires_revoked_and_assigned() -> None:
    class OnlyRevoked(RebalanceListener):
        def on_partitions_revoked(self, partitions: set[Any], consumer: Any) -> None:
            return None

    with pytest.raises(TypeError, match="on_partitions_assigned"):
        OnlyRevoked()  # type: ignore[abstract]


def test_registration_checks() -> None:
    class Plain:
        def on_partitions_revoked(self, partitions: Any) -> None:
            return None

        def on_partitions_assigned(self, partitions: Any) -> None:
            return None

    with pytest.raises(ConfigurationError, match=r"not a kafka_sticky_plugin\.RebalanceListener"):
        check_rebalance_listener(Plain(), coroutines=False)

    class Async(Keeper):
        async def on_partitions_lost(self, partitions: set[Any], consumer: Any) -> None:
            return None

    with pytest.raises(ConfigurationError, match=r"on_partitions_lost .* is async def"):
        check_rebalance_listener(Async(), coroutines=False)
    listener = Async()
    assert check_rebalance_listener(listener, coroutines=True) is listener


def test_only_java_operations_can_be_offered() -> None:
    assert JAVA_OPERATIONS["commit"] == "commitSync"
    assert not set(FORBIDDEN) & set(JAVA_OPERATIONS)
    with pytest.raises(ValueError, match="poll"):
        RebalanceConsumer({"poll": print}, callback="on_partitions_revoked", client="test")
