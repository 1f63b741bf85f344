"""KIP-881 on aiokafka: the hooked leader rebalances once when the racks of a subscribed
partition's replicas change, never for a broker that is only down, and never in a group where
no member has a rack. A real ``AIOKafkaConsumer`` and coordinator (no broker) lead; metadata
arrives through its real ``ClusterMetadata.update_metadata`` (which calls the listeners)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from aio_support import Recorder, close, consumer, coordinator_for
from aiokafka.protocol.group import JoinGroupResponse_v5
from aiokafka.protocol.metadata import MetadataResponse_v1

from kafka_sticky_plugin.aiokafka import CooperativeStickyAssignor, install_hooks
from kafka_sticky_plugin.codec import encode_subscription, subscription_of

T = "t"
RACKS = {1: "r0", 2: "r1", 3: "r2"}
PLACED = {0: [1, 2], 1: [2, 3], 2: [3, 1], 3: [1, 3]}
MOVED = {**PLACED, 0: [2, 3]}  # partition 0: rack r0 -> r2


def update(c: Any, brokers: Mapping[int, str], replicas: Mapping[int, Sequence[int]]) -> None:
    """A Metadata response with ``brokers`` online and topic ``t`` placed as ``replicas``."""
    leader = {p: next((b for b in ids if b in brokers), -1) for p, ids in replicas.items()}
    response = MetadataResponse_v1(
        [(b, "127.0.0.1", 9, r) for b, r in brokers.items()],
        min(brokers),
        [(0, T, False, [(0, p, leader[p], ids, ids) for p, ids in replicas.items()])],
    )
    c._client.cluster.update_metadata(response)
    c._client._topics = {T}
    c._client._md_update_fut = None


async def leading(member_racks: Sequence[str | None]) -> tuple[Any, Any]:
    """A hooked consumer that has just led one round with members of ``member_racks``."""
    c = consumer(partition_assignment_strategy=[CooperativeStickyAssignor])
    handle = install_hooks(c)
    c.subscribe([T], listener=Recorder())
    coordinator = await coordinator_for(c)
    update(c, RACKS, PLACED)
    handle._impl.group_protocols([T])  # the JoinGroup of the round
    members = [
        (f"m{i}", None, encode_subscription(subscription_of([T], rack_id=rack)))
        for i, rack in enumerate(member_racks)
    ]
    response = JoinGroupResponse_v5(0, 0, 6, "cooperative-sticky", "m0", "m0", members)
    plan = await coordinator._perform_assignment(response)
    assert sorted(plan) == sorted(m for m, _, _ in members)
    coordinator._rejoin_needed_fut = asyncio.get_running_loop().create_future()
    return c, coordinator


def test_bounces_never_rebalance_a_rack_move_rebalances_once() -> None:
    async def scenario() -> None:
        c, coordinator = await leading(["r0", None])
        for down in RACKS:
            update(c, {b: r for b, r in RACKS.items() if b != down}, PLACED)
            update(c, RACKS, PLACED)
            assert not coordinator._rejoin_needed_fut.done(), f"broker {down} bounced"
        update(c, RACKS, MOVED)
        assert coordinator._rejoin_needed_fut.done()
        coordinator._rejoin_needed_fut = asyncio.get_running_loop().create_future()
        update(c, RACKS, MOVED)
        assert not coordinator._rejoin_needed_fut.done()  # once
        await close(c)

    asyncio.run(scenario())


def test_no_member_rack_no_rebalance() -> None:
    async def scenario() -> None:
        c, coordinator = await leading([None, None])
        update(c, RACKS, MOVED)
        assert not coordinator._rejoin_needed_fut.done()
        await close(c)

    asyncio.run(scenario())
