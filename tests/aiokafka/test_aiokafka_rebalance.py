"""The hooked rebalance steps on a real aiokafka coordinator (no broker; its coordination task
is stopped and the test drives each step): generations, lost partitions, the cooperative
protocol with kept positions, KIP-70 subscription changes, and the v0-v3 leader.

The strict xfails run aiokafka's own steps with our assignors and show the defects the hooks
fix (aiokafka#1176: no generation; no ``on_partitions_lost``)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from aio_support import Recorder, close, consumer, coordinator_for, know_topics
from aiokafka.coordinator.assignors.range import RangePartitionAssignor
from aiokafka.coordinator.protocol import ConsumerProtocolMemberMetadata
from aiokafka.protocol.group import JoinGroupResponse_v5
from aiokafka.structs import TopicPartition

from kafka_sticky_plugin.aiokafka import CooperativeStickyAssignor, StickyAssignor, install_hooks
from kafka_sticky_plugin.codec import (
    Assignment,
    Subscription,
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
)

T = "orders"


def tps(*partitions: int, topic: str = T) -> set[TopicPartition]:
    return {TopicPartition(topic, p) for p in partitions}


def position(c: Any, tp: TopicPartition) -> int:
    """The consumed position ``consumer.position`` returns once it is known."""
    return int(c._subscription.subscription.assignment.state_value(tp).position)


def assignment_bytes(*pairs: tuple[str, int]) -> bytes:
    return encode_assignment(Assignment(version=3, partitions=tuple(sorted(pairs))))


async def hooked(strategy: list[Any], listener: Recorder, *, hooks: bool = True, **kw: Any) -> Any:
    c = consumer(partition_assignment_strategy=strategy, **kw)
    handle = install_hooks(c) if hooks else None
    c.subscribe([T], listener=listener)
    coordinator = await coordinator_for(c)
    return c, coordinator, handle


async def joined(coordinator: Any, generation: int, *pairs: tuple[str, int], protocol: str) -> None:
    await asyncio.sleep(0)  # tasks of the previous step run once, as between real rounds
    coordinator.generation, coordinator.member_id = generation, "m-1"
    await coordinator._on_join_complete(generation, "m-1", protocol, assignment_bytes(*pairs))


def test_generation_reaches_the_join_state_and_the_next_subscription() -> None:
    async def scenario() -> None:
        c, coordinator, handle = await hooked([StickyAssignor], Recorder())
        await joined(coordinator, 7, (T, 0), (T, 1), protocol="sticky")
        assert handle.generation == 7 and handle.joined.partitions == ((T, 0), (T, 1))
        assert handle.assignors[0].generation is None, "the assignor holds no member state"
        sent = decode_subscription(handle._impl.group_protocols({T})[0][1])
        assert sent.generation_id == 7 and sent.owned_partitions == ((T, 0), (T, 1))
        await close(c)

    asyncio.run(scenario())


@pytest.mark.xfail(strict=True, reason="aiokafka#1176: on_assignment gets no generation")
def test_without_hooks_the_generation_stays_minus_one() -> None:
    async def scenario() -> None:
        assignor = StickyAssignor()
        c, coordinator, _ = await hooked([assignor], Recorder(), hooks=False)
        await joined(coordinator, 7, (T, 0), protocol="sticky")
        try:
            assert decode_subscription(assignor.metadata({T})).generation_id == 7
        finally:
            await close(c)

    asyncio.run(scenario())


@pytest.mark.parametrize("with_lost", [True, False])
def test_lost_membership_calls_lost_commits_nothing_and_claims_nothing(with_lost: bool) -> None:
    """After the broker forgot the member (reset_generation: session expiry, unknown member,
    poll-interval expiry), the next prepare hands the partitions to on_partitions_lost (or
    on_partitions_revoked for a listener without it), never commits (auto-commit is on and a
    commit would block on the unreachable coordinator), and the next JoinGroup claims
    nothing with generation -1."""

    async def scenario() -> None:
        listener = Recorder(with_lost=with_lost)
        c, coordinator, handle = await hooked([CooperativeStickyAssignor], listener)
        coordinator._enable_auto_commit = True
        await joined(coordinator, 3, (T, 0), (T, 2), protocol="cooperative-sticky")
        coordinator.reset_generation()
        await asyncio.wait_for(
            coordinator._on_join_prepare(c._subscription.subscription.assignment), 5
        )
        expected = "lost" if with_lost else "revoked"
        assert listener.calls[-1] == (expected, [(T, 0), (T, 2)])
        assert c.assignment() == set() and handle.owned == frozenset()
        assert handle.generation is None
        sent = decode_subscription(handle._impl.group_protocols({T})[0][1])
        assert sent.owned_partitions == () and sent.generation_id == -1
        await close(c)

    asyncio.run(scenario())


@pytest.mark.xfail(strict=True, reason="aiokafka has no on_partitions_lost")
def test_without_hooks_lost_partitions_are_reported_as_revoked() -> None:
    async def scenario() -> None:
        listener = Recorder()
        c, coordinator, _ = await hooked([StickyAssignor()], listener, hooks=False)
        await joined(coordinator, 3, (T, 0), protocol="sticky")
        coordinator.reset_generation()
        await coordinator._on_join_prepare(c._subscription.subscription.assignment)
        try:
            assert listener.calls[-1] == ("lost", [(T, 0)])
        finally:
            await close(c)

    asyncio.run(scenario())


def test_cooperative_round_revokes_only_what_moves_and_keeps_positions() -> None:
    async def scenario() -> None:
        listener = Recorder()
        c, coordinator, handle = await hooked([CooperativeStickyAssignor], listener)
        await joined(coordinator, 1, (T, 0), (T, 1), (T, 2), protocol="cooperative-sticky")
        c._subscription.seek(TopicPartition(T, 0), 42)  # what consumer.seek does
        c.pause(TopicPartition(T, 1))
        await coordinator._on_join_prepare(c._subscription.subscription.assignment)
        assert listener.calls[-1][0] == "assigned", "nothing is revoked before the join"
        sent = decode_subscription(handle._impl.group_protocols({T})[0][1])
        assert sent.owned_partitions == ((T, 0), (T, 1), (T, 2))
        coordinator._rejoin_needed_fut = asyncio.get_running_loop().create_future()
        await joined(coordinator, 2, (T, 0), (T, 1), protocol="cooperative-sticky")
        assert listener.calls[-2:] == [("revoked", [(T, 2)]), ("assigned", [])]
        assert c.assignment() == tps(0, 1)
        assert position(c, TopicPartition(T, 0)) == 42
        assert c.paused() == tps(1)
        assert coordinator._rejoin_needed_fut.done(), "a revoking round asks for another"
        await close(c)

    asyncio.run(scenario())


def test_subscription_change_revokes_dropped_topics_only() -> None:
    """KIP-70 under COOPERATIVE: the prepare step revokes the dropped topic's partitions and
    moves the rest into the new subscription with their positions."""

    async def scenario() -> None:
        listener = Recorder()
        c, coordinator, handle = await hooked([CooperativeStickyAssignor], listener)
        c.subscribe([T, "other"], listener=listener)
        await joined(coordinator, 1, (T, 0), ("other", 0), protocol="cooperative-sticky")
        c._subscription.seek(TopicPartition(T, 0), 9)
        previous = c._subscription.subscription.assignment
        c.subscribe([T], listener=listener)
        await coordinator._on_join_prepare(previous)
        assert listener.calls[-1] == ("revoked", [("other", 0)])
        assert c.assignment() == tps(0) and handle.owned == frozenset(tps(0))
        assert position(c, TopicPartition(T, 0)) == 9
        await close(c)

    asyncio.run(scenario())


@pytest.mark.parametrize("strategy", ["cooperative-sticky", "sticky"])
def test_dropped_topics_are_still_assigned_in_on_partitions_revoked(strategy: str) -> None:
    """KIP-70, as KIP-429 promises for every revocation: while ``on_partitions_revoked`` runs
    (COOPERATIVE: the dropped topic's partitions; EAGER: everything), the revoked partitions
    are still assigned, with their positions, so a commit-on-revoke listener can commit them
    (aiokafka's ``subscribe`` replaces its subscription at once; the hooks show the previous
    one for the callback). Found on a real broker by
    integration_tests/test_aiokafka_interop.py, where that commit failed."""
    cooperative = strategy == "cooperative-sticky"
    assignor = CooperativeStickyAssignor if cooperative else StickyAssignor

    class Probe(Recorder):
        """Records, in each revocation, what the consumer shows as assigned and the dropped
        partition's position."""

        def __init__(self) -> None:
            super().__init__()
            self.consumer: Any = None
            self.seen: list[tuple[set[TopicPartition], int, bool]] = []

        async def on_partitions_revoked(self, revoked: Any) -> None:
            await super().on_partitions_revoked(revoked)
            c = self.consumer
            other = TopicPartition("other", 0)
            # aiokafka's fetcher asserts that an assignment it sees is active
            active = bool(c._subscription.subscription.assignment.active)
            self.seen.append((set(c.assignment()), await c.position(other), active))

    async def scenario() -> None:
        listener = Probe()
        c, coordinator, _ = await hooked([assignor], listener)
        listener.consumer = c
        c.subscribe([T, "other"], listener=listener)
        await joined(coordinator, 1, (T, 0), ("other", 0), protocol=strategy)
        c._subscription.seek(TopicPartition(T, 0), 9)
        c._subscription.seek(TopicPartition("other", 0), 5)
        previous = c._subscription.subscription.assignment
        c.subscribe([T], listener=listener)
        await coordinator._on_join_prepare(previous)
        revoked = [("other", 0)] if cooperative else [(T, 0), ("other", 0)]
        assert listener.calls[-1] == ("revoked", revoked)
        assert listener.seen == [(tps(0) | {TopicPartition("other", 0)}, 5, True)]
        assert not previous.active, "the previous assignment ends again after the callback"
        assert c._subscription.subscription.topics == {T}, "the new subscription is back"
        if cooperative:
            assert c.assignment() == tps(0)
            assert position(c, TopicPartition(T, 0)) == 9
        else:
            assert c.assignment() == set()
        await close(c)

    asyncio.run(scenario())


def test_eager_prepare_revokes_everything() -> None:
    async def scenario() -> None:
        listener = Recorder()
        c, coordinator, handle = await hooked([StickyAssignor], listener)
        await joined(coordinator, 1, (T, 0), (T, 1), protocol="sticky")
        await coordinator._on_join_prepare(c._subscription.subscription.assignment)
        assert listener.calls[-1] == ("revoked", [(T, 0), (T, 1)])
        assert handle.owned == frozenset()
        sent = decode_subscription(handle._impl.group_protocols({T})[0][1])
        assert sent.owned_partitions == ((T, 0), (T, 1)), "sticky claims its previous assignment"
        await close(c)

    asyncio.run(scenario())


def test_upgrade_bounce_one_sends_both_protocols_and_claims_nothing() -> None:
    async def scenario() -> None:
        c, coordinator, handle = await hooked(
            [RangePartitionAssignor, CooperativeStickyAssignor], Recorder()
        )
        await joined(coordinator, 1, (T, 0), protocol="cooperative-sticky")
        names = [name for name, _ in handle._impl.group_protocols({T})]
        assert names == ["range", "cooperative-sticky"]
        ours = decode_subscription(handle._impl.group_protocols({T})[1][1])
        assert ours.owned_partitions == () and ours.generation_id == 1
        await close(c)

    asyncio.run(scenario())


def test_leader_reads_v0_to_v3_members() -> None:
    """The leader sees owned partitions and generations (v3), aiokafka's own v0 members and
    an unreadable member (which gets an empty assignment) in one JoinGroup response."""

    async def scenario() -> None:
        c, coordinator, _ = await hooked([StickyAssignor], Recorder())
        know_topics(c, {T: 6})
        v3 = encode_subscription(
            Subscription(3, (T,), None, tuple((T, p) for p in range(4)), 5, None)
        )
        v0 = ConsumerProtocolMemberMetadata(0, [T], b"").encode()
        response = JoinGroupResponse_v5(
            0,
            0,
            6,
            "sticky",
            "a",
            "a",
            [("a", None, v3), ("b", None, v0), ("c", None, b"\x00")],
        )
        plan = await coordinator._perform_assignment(response)
        got = {m: decode_assignment(data).partitions for m, data in plan.items()}
        assert got["c"] == ()
        assert set(got["a"]) <= {(T, p) for p in range(4)} and len(got["a"]) == 3
        assert len(got["b"]) == 3 and not set(got["a"]) & set(got["b"])
        await close(c)

    asyncio.run(scenario())


def test_a_session_without_heartbeat_is_lost_before_records_are_handed_out() -> None:
    """No successful heartbeat for longer than the session (a blocked event loop): the
    partitions are lost at the next getone/getmany, unless a join is in flight (JoinGroup
    keeps the member alive without heartbeats)."""

    async def scenario() -> None:
        listener = Recorder()
        c, coordinator, handle = await hooked([CooperativeStickyAssignor], listener)
        await joined(coordinator, 2, (T, 0), (T, 1), protocol="cooperative-sticky")
        impl = handle._impl
        coordinator.coordinator_id = 0  # a known coordinator that heard nothing
        impl._heartbeat_ok_at -= coordinator._session_timeout_ms / 1000 + 1
        impl._joining = True
        await impl.check_session()
        assert handle.owned == frozenset(tps(0, 1)), "lost during a join"
        impl._joining = False
        await impl.check_session()
        assert listener.calls[-1] == ("lost", [(T, 0), (T, 1)])
        assert handle.owned == frozenset() and coordinator.generation == -1
        assert handle.generation is None
        await close(c)

    asyncio.run(scenario())


def test_time_without_a_coordinator_does_not_count_against_the_session() -> None:
    """The coordinator's broker died: while the member looks for the next coordinator (none
    known), a silent session is not a loss (the broker that takes the group over restarts
    every session when it loads it: issue 29's faults tier lost every partition at each
    coordinator move); once one is known, silence counts from when it was last missing."""

    async def scenario() -> None:
        listener = Recorder()
        c, coordinator, handle = await hooked([CooperativeStickyAssignor], listener)
        await joined(coordinator, 2, (T, 0), (T, 1), protocol="cooperative-sticky")
        impl = handle._impl
        session_s = coordinator._session_timeout_ms / 1000
        impl._heartbeat_ok_at -= session_s + 1
        coordinator.coordinator_id = None  # looking for it
        await impl.check_session()
        assert handle.owned == frozenset(tps(0, 1)), "lost while no coordinator was known"
        coordinator.coordinator_id = 0  # found: its heartbeat answer decides
        await impl.check_session()
        assert handle.owned == frozenset(tps(0, 1)), "lost right after the coordinator came"
        impl._coordinator_missing_at -= session_s + 1  # ...and it never answered since
        await impl.check_session()
        assert listener.calls[-1] == ("lost", [(T, 0), (T, 1)])
        await close(c)

    asyncio.run(scenario())


def test_commits_are_refused_while_a_join_is_in_flight() -> None:
    """A cooperative member consumes during the rebalance; a commit sent then with the old
    generation would make aiokafka reset the generation (losing every kept partition), so
    it raises RebalanceInProgressError instead, as Java's commitSync does (KIP-429)."""
    from aiokafka.errors import RebalanceInProgressError

    async def scenario() -> None:
        c, coordinator, handle = await hooked([CooperativeStickyAssignor], Recorder())
        await joined(coordinator, 2, (T, 0), protocol="cooperative-sticky")
        handle._impl._in_rebalance = True
        with pytest.raises(RebalanceInProgressError):
            await c.commit({TopicPartition(T, 0): 5})
        assert coordinator.generation == 2 and handle.owned == frozenset(tps(0))
        await close(c)

    asyncio.run(scenario())


@pytest.mark.parametrize("static", [True, False], ids=["static", "dynamic"])
def test_a_replaced_static_member_is_fenced_instead_of_taking_the_seat_back(static: bool) -> None:
    """KIP-345 on aiokafka 0.14, whose Heartbeat (v0/v1) carries no instance id: a static
    member replaced by another consumer under its group_instance_id only hears
    UNKNOWN_MEMBER_ID. The hooks keep its member id (aiokafka clears it), so its next
    JoinGroup names it and the broker answers FENCED_INSTANCE_ID: the partitions are lost (no
    commit), the member id stays (every retry is fenced again instead of a fresh join taking
    the seat back) and the error reaches the user. A dynamic member's id is cleared as before.
    Found on Apache Kafka by integration_tests/test_aiokafka_interop.py, where the two
    consumers took the seat from each other about once a second."""
    import aiokafka.errors as errors
    from aiokafka.protocol.group import JoinGroupRequest

    async def scenario() -> None:
        listener = Recorder()
        settings: dict[str, Any] = {"group_instance_id": "i-1"} if static else {}
        c, coordinator, handle = await hooked([CooperativeStickyAssignor], listener, **settings)
        await joined(coordinator, 2, (T, 0), (T, 1), protocol="cooperative-sticky")
        impl = handle._impl

        async def unknown_member() -> bool:  # what aiokafka's heartbeat does on that answer
            coordinator.reset_generation()
            return False

        impl._originals["_do_heartbeat"] = unknown_member
        assert not await coordinator._do_heartbeat()
        assert coordinator.generation == -1
        if not static:
            assert coordinator.member_id == ""
            await close(c)
            return
        assert coordinator.member_id == "m-1", "a static member keeps its id for the JoinGroup"
        sent: list[Any] = []

        async def send(request: Any) -> Any:
            sent.append(request)
            return JoinGroupResponse_v5(0, 82, -1, "", "", "", [])

        coordinator._send_req = send
        coordinator._retry_backoff_ms = 1
        with pytest.raises(errors.KafkaError, match="FENCED_INSTANCE_ID"):
            await coordinator._do_rejoin_group(c._subscription.subscription)
        assert listener.calls[-1] == ("lost", [(T, 0), (T, 1)])
        assert handle.owned == frozenset()
        assert isinstance(sent[0], JoinGroupRequest)
        assert (sent[0]._member_id, sent[0]._group_instance_id) == ("m-1", "i-1")
        assert coordinator.member_id == "m-1", "the next retry is fenced again"
        await close(c)

    asyncio.run(scenario())


def test_a_failed_commit_before_the_rebalance_is_one_warning_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Auto-commit before the JoinGroup fails (here refused: a join is still in flight): the
    member goes on, and the hooks say so in one WARNING line with the group, the partition
    count and the reason; the traceback is at DEBUG only, nothing at ERROR (issue 24)."""
    import logging

    async def scenario() -> None:
        c, coordinator, handle = await hooked([CooperativeStickyAssignor], Recorder())
        coordinator._enable_auto_commit = True
        await joined(coordinator, 2, (T, 0), (T, 1), protocol="cooperative-sticky")
        for tp, offset in ((TopicPartition(T, 0), 7), (TopicPartition(T, 1), 3)):
            c._subscription.subscription.assignment.state_value(tp).seek(offset)
        handle._impl._in_rebalance = True
        caplog.set_level(logging.DEBUG, logger="kafka_sticky_plugin.aiokafka")
        await asyncio.wait_for(
            coordinator._on_join_prepare(c._subscription.subscription.assignment), 5
        )
        assert handle.owned == frozenset(tps(0, 1))  # COOPERATIVE: kept, nothing revoked
        await close(c)

    asyncio.run(scenario())
    ours = [r for r in caplog.records if r.name == "kafka_sticky_plugin.aiokafka"]
    lines = [r for r in ours if r.levelno >= logging.WARNING]
    assert [r.levelno for r in lines] == [logging.WARNING], [r.getMessage() for r in lines]
    message = lines[0].getMessage()
    assert lines[0].exc_info is None and "\n" not in message, message
    assert "group g:" in message and "of 2 partitions" in message, message
    assert "RebalanceInProgressError" in message, message
    assert any(r.levelno == logging.DEBUG and r.exc_info for r in ours), "traceback at DEBUG"


def test_commit_on_revoke_gives_up_with_false_and_one_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """aiokafka's commit fails (here: a consumer that was never started); the bounded
    commit returns False and logs one WARNING line, raising nothing; nothing to commit is
    True. The deadline is request_timeout_ms, at most half of max_poll_interval_ms."""
    from aiokafka import AIOKafkaConsumer

    from kafka_sticky_plugin.adapters.aiokafka.bounded_commit import commit_deadline_ms
    from kafka_sticky_plugin.aiokafka import commit_on_revoke

    async def scenario() -> None:
        c = AIOKafkaConsumer(
            group_id="g", bootstrap_servers="127.0.0.1:1", max_poll_interval_ms=10_000
        )
        try:
            assert commit_deadline_ms(c) == 5_000
            with caplog.at_level("WARNING", logger="kafka_sticky_plugin.aiokafka"):
                assert not await commit_on_revoke(c, {TopicPartition(T, 0): 5}, timeout_ms=500)
            assert len(caplog.records) == 1 and "delivered again" in caplog.records[0].message
            assert await commit_on_revoke(c, {})
        finally:
            await c.stop()

    asyncio.run(scenario())


@pytest.mark.parametrize("step", ["heartbeat", "sync"])
def test_fenced_from_aiokafka_015_is_lost_and_raised_once_per_try(step: str) -> None:
    """aiokafka 0.15 raises its own FencedInstanceIdError from Heartbeat and SyncGroup (it
    retried before). The hooks take it as JoinGroup's FENCED_INSTANCE_ID: the partitions are
    lost (no commit), the member id stays, and the user gets aiokafka's own class (so
    ``except aiokafka.errors.FencedInstanceIdError`` works), not a retry that takes the seat
    back."""
    import aiokafka.errors as errors

    native = getattr(errors, "FencedInstanceIdError", None)
    if native is None:
        pytest.skip("aiokafka < 0.15 has no FencedInstanceIdError (JoinGroup's case is above)")

    async def scenario() -> None:
        listener = Recorder()
        c, coordinator, handle = await hooked(
            [CooperativeStickyAssignor], listener, group_instance_id="i-1"
        )
        await joined(coordinator, 2, (T, 0), (T, 1), protocol="cooperative-sticky")
        coordinator._retry_backoff_ms = 1
        impl = handle._impl

        async def fenced(*_: Any) -> Any:
            raise native()

        if step == "heartbeat":
            impl._originals["_do_heartbeat"] = fenced
            with pytest.raises(native, match="FENCED_INSTANCE_ID"):
                await coordinator._do_heartbeat()
        else:
            from aiokafka.consumer.group_coordinator import CoordinatorGroupRebalance

            async def send(request: Any) -> Any:
                return JoinGroupResponse_v5(0, 0, 3, "cooperative-sticky", "m-0", "m-1", [])

            coordinator._send_req = send
            original = CoordinatorGroupRebalance._on_join_follower
            CoordinatorGroupRebalance._on_join_follower = fenced
            try:
                with pytest.raises(native, match="FENCED_INSTANCE_ID"):
                    await coordinator._do_rejoin_group(c._subscription.subscription)
            finally:
                CoordinatorGroupRebalance._on_join_follower = original
        assert listener.calls[-1] == ("lost", [(T, 0), (T, 1)])
        assert handle.owned == frozenset()
        assert coordinator.member_id == "m-1"
        await close(c)

    asyncio.run(scenario())
