"""Keep fetching the owned partitions while a cooperative join is in flight (issue 38;
:mod:`kafka_sticky_plugin.adapters.kafka_python.hooks.keep_fetching`): the rule, and where the
hooks apply it on a real ``KafkaConsumer`` of every supported version (no broker: the
member's state is driven through the coordinator's own rebalance steps)."""

from __future__ import annotations

import inspect
import itertools
from typing import Any

import pytest
from hooks_support import RecordingListener, join_complete, make_consumer, tps
from kafka.coordinator.base import Generation
from kafka.coordinator.consumer import ConsumerCoordinator

from kafka_sticky_plugin import CooperativeStickyAssignor, StickyAssignor
from kafka_sticky_plugin.adapters.kafka_python.hooks.keep_fetching import keeps_fetching
from kafka_sticky_plugin.assignor.rebalance import RebalanceProtocol
from kafka_sticky_plugin.hooks import install_hooks

COOP = "cooperative-sticky"
POLL_TAKES_A_TIMEOUT = "timeout_ms" in inspect.signature(ConsumerCoordinator.poll).parameters
needs_timeout = pytest.mark.skipif(
    not POLL_TAKES_A_TIMEOUT, reason="kafka-python 2.0.2: coordinator.poll() has no timeout"
)


def test_only_a_cooperative_owner_in_a_live_rebalance_keeps_fetching() -> None:
    flags: tuple[bool, ...] = (True, False)
    for protocol, auto, owns, lost, rebalancing in itertools.product(
        RebalanceProtocol, flags, flags, flags, flags
    ):
        expected = (
            protocol is RebalanceProtocol.COOPERATIVE and auto and owns and not lost and rebalancing
        )
        got = keeps_fetching(
            protocol=protocol,
            auto_assigned=auto,
            owns_partitions=owns,
            lost=lost,
            rebalancing=rebalancing,
        )
        assert got is expected, (protocol, auto, owns, lost, rebalancing)


@pytest.fixture
def member() -> Any:
    """A hooked cooperative member of generation 3 owning t1-0 and t1-1."""
    consumer = make_consumer([CooperativeStickyAssignor], retry_backoff_ms=80)
    hooks = install_hooks(consumer)
    listener = RecordingListener(consumer)
    consumer.subscribe(["t1"], listener=listener)
    join_complete(consumer, 3, COOP, [("t1", 0), ("t1", 1)])
    consumer._coordinator._generation = Generation(3, "member-1", COOP)
    yield consumer, hooks, listener
    consumer.close()


@needs_timeout
def test_rebalance_of_an_owner_keeps_fetching_with_a_short_wait(member: Any) -> None:
    consumer, hooks, _listener = member
    keep = hooks._impl.keep_fetching
    coordinator = consumer._coordinator
    assert not keep.active()  # stable: the client's own poll and wait
    coordinator.request_rejoin()
    assert keep.active()
    assert coordinator.time_to_next_poll() == pytest.approx(0.08)


@needs_timeout
def test_lost_membership_never_keeps_fetching(member: Any) -> None:
    consumer, hooks, listener = member
    coordinator = consumer._coordinator
    coordinator.request_rejoin()
    coordinator.reset_generation()
    assert not hooks._impl.keep_fetching.active()
    # The partitions go to on_partitions_lost at the next pre-join step, before any fetch.
    from hooks_support import join_prepare

    join_prepare(consumer, -1, "")
    assert ("lost", tps(("t1", 0), ("t1", 1))) in [(k, p) for k, p, _ in listener.calls]
    assert not consumer.assignment()
    assert not hooks._impl.keep_fetching.active()


@needs_timeout
def test_a_member_that_owns_nothing_waits_for_its_join(member: Any) -> None:
    consumer, hooks, _listener = member
    join_complete(consumer, 4, COOP, [])
    consumer._coordinator.request_rejoin()
    assert not hooks._impl.keep_fetching.active()


def test_eager_and_uninstalled_members_keep_the_clients_poll() -> None:
    consumer = make_consumer([StickyAssignor])
    client_poll = consumer._coordinator.poll
    install_hooks(consumer)
    assert "poll" not in vars(consumer._coordinator)  # eager: nothing is kept through a round
    consumer.close()
    consumer = make_consumer([CooperativeStickyAssignor])
    hooks = install_hooks(consumer)
    assert ("poll" in vars(consumer._coordinator)) is POLL_TAKES_A_TIMEOUT
    hooks.uninstall()
    assert "poll" not in vars(consumer._coordinator)
    assert consumer._coordinator.poll.__func__ is type(consumer._coordinator).poll
    assert client_poll.__func__ is type(consumer._coordinator).poll
    consumer.close()
