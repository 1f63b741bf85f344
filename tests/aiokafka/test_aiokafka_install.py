"""install_hooks on real AIOKafkaConsumer objects (no broker): assignor instances per
consumer, protocol selection, configuration errors, and the coordinator that ``start()``
creates getting the hooks before its first join."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Coroutine
from typing import Any

import pytest
from aio_support import close, consumer, coordinator_for
from aiokafka import AIOKafkaConsumer
from aiokafka.coordinator.assignors.range import RangePartitionAssignor
from aiokafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
from aiokafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor
from aiokafka.coordinator.protocol import ConsumerProtocolMemberAssignment

from kafka_sticky_plugin.aiokafka import (
    CooperativeStickyAssignor,
    RebalanceProtocol,
    StickyAssignor,
    install_hooks,
)
from kafka_sticky_plugin.codec import (
    Assignment,
    decode_subscription,
    encode_assignment,
)
from kafka_sticky_plugin.errors import ConfigurationError

HAS_CLIENT_RACK = "client_rack" in inspect.signature(AIOKafkaConsumer.__init__).parameters


def run(coro: Coroutine[Any, Any, None]) -> None:
    asyncio.run(coro)


def _assignment(*pairs: tuple[str, int]) -> bytes:
    return encode_assignment(Assignment(version=3, partitions=tuple(sorted(pairs))))


def test_each_consumer_claims_from_its_own_join_state() -> None:
    """aiokafka#1175 fixed: two consumers configured with the same class never share state
    (each hooked consumer's hooks own its join state; the assignors hold none)."""

    async def scenario() -> None:
        a = consumer("t", partition_assignment_strategy=[StickyAssignor])
        b = consumer("t", partition_assignment_strategy=[StickyAssignor])
        ha, hb = install_hooks(a), install_hooks(b)
        coordinator = await coordinator_for(a)
        coordinator.generation, coordinator.member_id = 4, "m-1"
        await coordinator._on_join_complete(4, "m-1", "sticky", _assignment(("t", 0), ("t", 1)))
        claim_a = decode_subscription(ha._impl.group_protocols({"t"})[0][1])
        claim_b = decode_subscription(hb._impl.group_protocols({"t"})[0][1])
        assert claim_a.owned_partitions == (("t", 0), ("t", 1)) and claim_a.generation_id == 4
        assert claim_b.owned_partitions == () and claim_b.generation_id == -1
        await close(a)
        await b.stop()

    run(scenario())


@pytest.mark.xfail(strict=True, reason="aiokafka#1175: StickyPartitionAssignor state is per class")
def test_aiokafka_sticky_shares_state_between_consumers() -> None:
    """The defect the per-consumer instances fix: aiokafka's own sticky assignor records the
    assignment on the class, so a second consumer claims the first one's partitions."""
    StickyPartitionAssignor.on_assignment(ConsumerProtocolMemberAssignment(0, [("t", [0, 1])], b""))
    try:
        other_consumers_claim = StickyPartitionAssignor.metadata({"t"}).user_data
        assert not other_consumers_claim, "a fresh consumer claims another's partitions"
    finally:
        StickyPartitionAssignor.member_assignment = None


def test_an_instance_shared_by_two_hooked_consumers_serves_both() -> None:
    """A settings dict shared by two consumers: both use the configured instance as it is
    (it holds no member state on the hooks path); each claims only its own join, with the
    instance's rack."""

    async def scenario() -> None:
        shared = CooperativeStickyAssignor(rack_id="r9")
        a = consumer("t", partition_assignment_strategy=[shared])
        b = consumer("t", partition_assignment_strategy=[shared])
        ha, hb = install_hooks(a), install_hooks(b)
        assert ha.assignors == hb.assignors == (shared,)
        coordinator = await coordinator_for(a)
        coordinator.generation, coordinator.member_id = 2, "m-1"
        await coordinator._on_join_complete(2, "m-1", "cooperative-sticky", _assignment(("t", 3)))
        mine = decode_subscription(ha._impl.group_protocols({"t"})[0][1])
        theirs = decode_subscription(hb._impl.group_protocols({"t"})[0][1])
        assert (mine.owned_partitions, mine.generation_id) == ((("t", 3),), 2)
        assert (theirs.owned_partitions, theirs.generation_id) == ((), -1)
        assert mine.rack_id == theirs.rack_id == "r9"
        assert shared.previous_assignment == () and shared.generation is None
        await close(a)
        await b.stop()

    run(scenario())


@pytest.mark.parametrize(
    ("strategy", "expected"),
    [
        ([CooperativeStickyAssignor], RebalanceProtocol.COOPERATIVE),
        ([StickyAssignor], RebalanceProtocol.EAGER),
        ([RangePartitionAssignor, CooperativeStickyAssignor], RebalanceProtocol.EAGER),
        ([CooperativeStickyAssignor, StickyAssignor], RebalanceProtocol.EAGER),
    ],
)
def test_protocol_selection(strategy: list[object], expected: RebalanceProtocol) -> None:
    async def scenario() -> None:
        c = consumer("t", partition_assignment_strategy=strategy)
        handle = install_hooks(c)
        assert handle.protocol is expected
        await c.stop()

    run(scenario())


def test_configuration_errors() -> None:
    async def scenario() -> None:
        no_group = consumer("t", group_id=None, partition_assignment_strategy=[StickyAssignor])
        with pytest.raises(ConfigurationError, match="group_id"):
            install_hooks(no_group)
        foreign = consumer("t", partition_assignment_strategy=[RoundRobinPartitionAssignor])
        with pytest.raises(ConfigurationError, match="none of the"):
            install_hooks(foreign)
        started = consumer("t", partition_assignment_strategy=[StickyAssignor])
        await coordinator_for(started)  # what start() does first
        with pytest.raises(ConfigurationError, match="before"):
            install_hooks(started)
        for c in (no_group, foreign, started):
            await c.stop()

    run(scenario())


def test_start_creates_a_hooked_coordinator() -> None:
    """The coordinator stored by start() gets the hooks at once; the consumer stays an
    AIOKafkaConsumer; a second install returns the same handle; client_rack (aiokafka 0.14+)
    is adopted."""

    async def scenario() -> None:
        rack = {"client_rack": "r1"} if HAS_CLIENT_RACK else {}
        c = consumer(partition_assignment_strategy=[CooperativeStickyAssignor], **rack)
        handle = install_hooks(c)
        assert install_hooks(c) is handle
        assert isinstance(c, AIOKafkaConsumer) and type(c).__name__ == "AIOKafkaConsumer"
        c.subscribe(["t"])  # topics may come after install_hooks
        coordinator = await coordinator_for(c)
        assert coordinator._assignors == handle.assignors
        for name in ("_on_join_prepare", "_do_rejoin_group", "_perform_assignment"):
            assert name in vars(coordinator), name
        subscription = decode_subscription(handle._impl.group_protocols({"t"})[0][1])
        assert subscription.version == 3
        if HAS_CLIENT_RACK:  # aiokafka 0.14 added client_rack
            assert subscription.rack_id == "r1"
            assert handle.assignors[0].rack_id is None, "passed by the hooks, never stored"
        await c.stop()

    run(scenario())


@pytest.mark.parametrize("cls", [StickyAssignor, CooperativeStickyAssignor])
def test_a_class_without_the_hooks_fails_with_one_clear_line(cls: Any) -> None:
    """Issue 24: aiokafka calls ``metadata``/``assign``/``on_assignment`` on what it was given;
    our class without install_hooks used to fail every start()/getmany() with ``TypeError:
    metadata() missing 1 required positional argument``; now each call says what to do."""

    async def scenario() -> None:
        c = consumer("t", partition_assignment_strategy=[cls])
        coordinator = await coordinator_for(c)  # what start() does first
        (assignor,) = coordinator._assignors
        assert assignor is cls, "aiokafka keeps the class as given"
        calls: list[Callable[[], object]] = [
            lambda: assignor.metadata({"t"}),  # GroupCoordinator.perform_group_join
            lambda: assignor.assign(coordinator._cluster, {}),  # _perform_assignment
            lambda: assignor.on_assignment(ConsumerProtocolMemberAssignment(0, [], b"")),
        ]
        for call in calls:
            with pytest.raises(
                ConfigurationError, match=rf"pass {cls.__name__}\(\) \(an instance\)"
            ):
                call()
        await c.stop()

    run(scenario())


def test_replica_racks_are_read_from_aiokafka_cluster_metadata() -> None:
    """The one client-free rack reader (assignor/racks.py, kafka-python's former copy) reads
    aiokafka's ClusterMetadata too: partition p's one replica is on broker p % 2."""
    from aio_support import know_topics

    from kafka_sticky_plugin.assignor.racks import partition_counts, replica_racks

    async def scenario() -> None:
        c = consumer("t")
        know_topics(c, {"t": 4, "u": 1}, racks=("r0", "r1"))
        cluster = c._client.cluster
        counts = partition_counts(cluster, ["u", "t", "missing"])
        assert counts == {"t": 4, "u": 1}
        racks = replica_racks(cluster, counts)
        assert racks is not None
        assert dict(racks) == {
            ("t", 0): ("r0",),
            ("t", 1): ("r1",),
            ("t", 2): ("r0",),
            ("t", 3): ("r1",),
            ("u", 0): ("r0",),
        }
        know_topics(c, {"t": 4}, racks=(None, None))
        assert replica_racks(c._client.cluster, {"t": 4}) is None
        await c.stop()

    run(scenario())
