"""Each hook's behaviour on the installed client, driven through the coordinator's own
rebalance entry points (no broker: these steps need none with auto-commit off).

Tests named ``..._without_hooks`` run the same steps on an unhooked kafka-python 3.0
consumer and are strict xfails: they demonstrate the 3.0.12 defect each hook fixes (they
would XPASS, and so fail the run, the day kafka-python fixes it).
"""

from __future__ import annotations

from typing import Any

import pytest
from hooks_support import (
    IS_V3,
    RecordingListener,
    RevokeOnlyListener,
    held_position,
    join_complete,
    join_prepare,
    make_consumer,
    tps,
)

from kafka_sticky_plugin import CooperativeStickyAssignor, StickyAssignor
from kafka_sticky_plugin.codec.consumer_protocol import decode_subscription
from kafka_sticky_plugin.hooks import install_hooks

COOP = "cooperative-sticky"
only_v3 = pytest.mark.skipif(not IS_V3, reason="demonstrates a kafka-python 3.0 defect")
pytestmark = pytest.mark.timeout(30)
v3_defect = pytest.mark.xfail(strict=True, reason="kafka-python 3.0.12 defect fixed by the hooks")


@pytest.fixture
def cooperative() -> Any:
    """A hooked COOPERATIVE consumer subscribed to t1 and t2, with a recording listener."""
    consumer = make_consumer([CooperativeStickyAssignor])
    install_hooks(consumer)
    listener = RecordingListener(consumer)
    consumer.subscribe(["t1", "t2"], listener=listener)
    yield consumer, listener
    consumer.close()


@pytest.fixture
def unhooked_v3() -> Any:
    consumer = make_consumer([CooperativeStickyAssignor])
    listener = RecordingListener(consumer)
    consumer.subscribe(["t1", "t2"], listener=listener)
    yield consumer, listener
    consumer.close()


def _subscription_claims(consumer: Any) -> tuple[tuple[tuple[str, int], ...], int]:
    protocols = dict(consumer._coordinator.group_protocols())
    subscription = decode_subscription(bytes(protocols[COOP]))
    return subscription.owned_partitions, subscription.generation_id


# -- COOPERATIVE: revoke before remove, keep positions, assigned with the added ones ---------


def _revoke_round(consumer: Any, listener: RecordingListener) -> None:
    join_complete(consumer, 3, COOP, [("t1", 0), ("t1", 1), ("t2", 0)])
    consumer.seek(tps(("t1", 1)).pop(), 42)
    listener.calls.clear()
    join_complete(consumer, 4, COOP, [("t1", 1), ("t2", 0), ("t2", 1)])


def test_revoked_partitions_are_still_assigned_during_the_callback(cooperative: Any) -> None:
    """on_partitions_revoked sees exactly the revoked partitions while they are still held."""
    consumer, listener = cooperative
    _revoke_round(consumer, listener)
    kind, revoked, held = listener.calls[0]
    assert kind == "revoked"
    assert revoked == tps(("t1", 0))
    assert revoked <= held


@only_v3
@v3_defect
def test_revoked_partitions_are_still_assigned_during_the_callback_without_hooks(
    unhooked_v3: Any,
) -> None:
    """kafka-python 3.0.12 removes revoked partitions before calling the listener."""
    consumer, listener = unhooked_v3
    _revoke_round(consumer, listener)
    _kind, revoked, held = listener.calls[0]
    assert revoked <= held


def test_cooperative_round_keeps_positions_adds_and_rejoins(cooperative: Any) -> None:
    """Kept partitions keep their fetch position; added ones are reported; a revoke rejoins."""
    consumer, listener = cooperative
    _revoke_round(consumer, listener)
    assert listener.kinds() == ["revoked", "assigned"]
    assert listener.calls[1][1] == tps(("t2", 1))
    assert consumer.assignment() == tps(("t1", 1), ("t2", 0), ("t2", 1))
    assert held_position(consumer, tps(("t1", 1)).pop()) == 42
    assert consumer._coordinator.need_rejoin()


def _unchanged_round(consumer: Any, listener: RecordingListener) -> None:
    join_complete(consumer, 3, COOP, [("t1", 0)])
    listener.calls.clear()
    join_complete(consumer, 4, COOP, [("t1", 0)])


def test_assigned_callback_fires_when_nothing_was_added(cooperative: Any) -> None:
    """As in Java, on_partitions_assigned runs (with nothing) when nothing was added."""
    consumer, listener = cooperative
    _unchanged_round(consumer, listener)
    assert [(kind, parts) for kind, parts, _held in listener.calls] == [("assigned", set())]
    assert not consumer._coordinator.need_rejoin()


@only_v3
@v3_defect
def test_assigned_callback_fires_when_nothing_was_added_without_hooks(unhooked_v3: Any) -> None:
    """kafka-python 3.0.12 skips on_partitions_assigned when nothing was added."""
    consumer, listener = unhooked_v3
    _unchanged_round(consumer, listener)
    assert listener.kinds() == ["assigned"]


def test_generation_reaches_the_assignor_and_the_subscription(cooperative: Any) -> None:
    """on_assignment gets the generation; the next subscription claims assignment + generation."""
    consumer, _listener = cooperative
    join_complete(consumer, 7, COOP, [("t1", 0), ("t2", 1)])
    owned, generation = _subscription_claims(consumer)
    assert owned == (("t1", 0), ("t2", 1))
    assert generation == 7


# -- lost membership ---------------------------------------------------------------------------


def _lose_membership(consumer: Any) -> None:
    join_complete(consumer, 5, COOP, [("t1", 0), ("t2", 0)])
    join_prepare(consumer, -1, "")


def test_lost_membership_calls_lost_and_forgets_claims(cooperative: Any) -> None:
    """Lost: on_partitions_lost with everything, assignment cleared, next claim empty at -1."""
    consumer, listener = cooperative
    _lose_membership(consumer)
    lost = [(parts, held) for kind, parts, held in listener.calls if kind == "lost"]
    assert lost == [(tps(("t1", 0), ("t2", 0)), tps(("t1", 0), ("t2", 0)))]
    assert "revoked" not in listener.kinds()
    assert consumer.assignment() == set()
    assert _subscription_claims(consumer) == ((), -1)


@only_v3
@v3_defect
def test_lost_membership_forgets_claims_without_hooks(unhooked_v3: Any) -> None:
    """kafka-python 3.0.12 keeps claiming the lost partitions and generation."""
    consumer, _listener = unhooked_v3
    _lose_membership(consumer)
    assert _subscription_claims(consumer) == ((), -1)


def test_listener_without_lost_method_gets_revoked() -> None:
    """A listener lacking on_partitions_lost receives on_partitions_revoked, as in Java."""
    consumer = make_consumer([CooperativeStickyAssignor])
    try:
        install_hooks(consumer)
        listener = RevokeOnlyListener(consumer)
        consumer.subscribe(["t1"], listener=listener)
        join_complete(consumer, 2, COOP, [("t1", 0), ("t1", 1)])
        listener.calls.clear()
        join_prepare(consumer, -1, "")
        assert [(kind, parts) for kind, parts, _held in listener.calls] == [
            ("revoked", tps(("t1", 0), ("t1", 1)))
        ]
    finally:
        consumer.close()


def test_unknown_member_id_alone_means_lost(cooperative: Any) -> None:
    """A valid generation with an empty member id is lost membership too."""
    consumer, listener = cooperative
    join_complete(consumer, 5, COOP, [("t1", 0)])
    join_prepare(consumer, 5, "")
    assert listener.kinds()[-1] == "lost"


# -- KIP-70 ------------------------------------------------------------------------------------


def test_subscription_change_revokes_dropped_topics_at_the_next_rebalance(
    cooperative: Any,
) -> None:
    """Dropping t2 keeps its partitions until the next join, which revokes only them."""
    consumer, listener = cooperative
    join_complete(consumer, 1, COOP, [("t1", 0), ("t2", 0)])
    consumer.subscribe(["t1"], listener=listener)
    assert consumer.assignment() == tps(("t1", 0), ("t2", 0))
    listener.calls.clear()
    join_prepare(consumer, 1, "member-1")
    assert [(kind, parts) for kind, parts, _held in listener.calls] == [("revoked", tps(("t2", 0)))]
    assert listener.calls[0][2] == tps(("t1", 0), ("t2", 0))
    assert consumer.assignment() == tps(("t1", 0))
    owned, _generation = _subscription_claims(consumer)
    assert owned == (("t1", 0),)


# -- EAGER ------------------------------------------------------------------------------------


def test_eager_revokes_everything_then_assigns_everything() -> None:
    """StickyAssignor (EAGER): revoke all before the join, assign all after, generation kept."""
    consumer = make_consumer([StickyAssignor])
    try:
        handle = install_hooks(consumer)
        listener = RecordingListener(consumer)
        consumer.subscribe(["t1"], listener=listener)
        join_complete(consumer, 2, "sticky", [("t1", 0), ("t1", 1)])
        join_prepare(consumer, 2, "member-1")
        join_complete(consumer, 3, "sticky", [("t1", 1), ("t1", 2)])
        assert [(kind, parts) for kind, parts, _held in listener.calls] == [
            ("assigned", tps(("t1", 0), ("t1", 1))),
            ("revoked", tps(("t1", 0), ("t1", 1))),
            ("assigned", tps(("t1", 1), ("t1", 2))),
        ]
        assert handle.generation == 3
        assert handle.joined.partitions == (("t1", 1), ("t1", 2))
    finally:
        consumer.close()


def test_eager_first_join_fires_no_callback() -> None:
    """At a member's first EAGER join (generation -1, nothing owned) no callback fires, as in
    Java (kafka-python alone calls on_partitions_revoked(set()) there); a member still in a
    generation gets the EAGER revoke even when it owns nothing, as Java's does."""
    consumer = make_consumer([StickyAssignor])
    try:
        install_hooks(consumer)
        listener = RecordingListener(consumer)
        consumer.subscribe(["t1"], listener=listener)
        join_prepare(consumer, -1, "")
        assert listener.calls == []
        join_complete(consumer, 0, "sticky", [])
        join_prepare(consumer, 0, "member-1")
        assert [(kind, parts) for kind, parts, _held in listener.calls] == [
            ("assigned", set()),
            ("revoked", set()),
        ]
    finally:
        consumer.close()


def test_membership_lost_during_a_rebalance_still_reports_lost(cooperative: Any) -> None:
    """A generation reset while a rebalance is under way (JoinGroup/SyncGroup answered
    UNKNOWN_MEMBER_ID) makes the join loop run the pre-join step again: lost is reported."""
    consumer, listener = cooperative
    coordinator = consumer._coordinator
    join_complete(consumer, 5, COOP, [("t1", 0)])
    join_prepare(consumer, 5, "member-1")
    coordinator.rejoining = True  # the join loop's flag: the pre-join step ran
    coordinator.reset_generation()
    assert not coordinator.rejoining
    generation = coordinator._generation
    join_prepare(consumer, generation.generation_id, generation.member_id)
    assert listener.kinds()[-1] == "lost"
    assert listener.calls[-1][1] == tps(("t1", 0))
    assert _subscription_claims(consumer) == ((), -1)


def _pending_join_after_subscription_change(consumer: Any) -> bool:
    """Join, change the subscription, start the JoinGroup (metadata sent, not yet answered)."""
    from kafka.future import Future

    coordinator = consumer._coordinator
    join_complete(consumer, 1, COOP, [("t1", 0), ("t2", 0)])
    consumer.subscribe(["t1"], listener=RecordingListener(consumer))
    assert coordinator.need_rejoin()  # the subscription changed: a rebalance is needed
    coordinator.group_protocols()  # the JoinGroup carries the new subscription ...
    if IS_V3:
        coordinator._join_task = Future()  # ... and is still in flight
    else:
        coordinator.join_future = Future()
    return bool(coordinator.need_rejoin())


def test_join_in_flight_keeps_the_rebalance_pending(cooperative: Any) -> None:
    """Java's rejoinNeededOrPending: a JoinGroup in flight keeps need_rejoin() true, so the
    next poll completes it (otherwise the member keeps a stale assignment forever)."""
    consumer, _listener = cooperative
    assert _pending_join_after_subscription_change(consumer)


@only_v3
@v3_defect
def test_join_in_flight_keeps_the_rebalance_pending_without_hooks(unhooked_v3: Any) -> None:
    """kafka-python 3.0.12 forgets a join started by a subscription change once it is sent."""
    consumer, _listener = unhooked_v3
    assert _pending_join_after_subscription_change(consumer)


# -- close(): revoke before leaving (Java's onLeavePrepare; 2.x lacks it, 3.0 has it) --------


def test_close_revokes_what_is_assigned_while_it_is_still_assigned() -> None:
    """A commit-on-revoke listener can commit at close(): revoked with everything, held."""
    from kafka.coordinator.base import Generation

    consumer = make_consumer([StickyAssignor])
    install_hooks(consumer)
    listener = RecordingListener(consumer)
    consumer.subscribe(["t1"], listener=listener)
    join_complete(consumer, 2, "sticky", [("t1", 0), ("t1", 1)])
    # What the client's join loop sets around the step above: the member is in generation 2.
    consumer._coordinator._generation = Generation(2, "member-1", "sticky")
    listener.calls.clear()
    consumer.close()
    everything = tps(("t1", 0), ("t1", 1))
    assert listener.calls == [("revoked", everything, everything)]


def test_close_after_a_lost_membership_reports_nothing_more(cooperative: Any) -> None:
    """Lost at the last rejoin: the loss was reported then; close() has nothing to revoke."""
    consumer, listener = cooperative
    _lose_membership(consumer)
    listener.calls.clear()
    consumer.close()
    assert listener.calls == []
