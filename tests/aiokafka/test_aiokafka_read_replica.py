"""Closest-replica fetching (KIP-392) after a broker restart on aiokafka 0.14 and 0.15: alone it
never asks for fresh metadata when the preferred read replica is missing from its metadata (it
fetches from the leader, is sent back, and loops without records until the periodic refresh);
the hooks' fetcher patch (:mod:`kafka_sticky_plugin.adapters.aiokafka.read_replica`) requests
the update, as Java does (KAFKA-14379).

A real ``AIOKafkaConsumer`` and ``Fetcher`` (``client_rack`` set, no broker), a real
``ClusterMetadata`` fed a Metadata response in which broker 2 (just restarted) is absent, and
broker 2 cached as the preferred read replica (what the leader's fetch response set). The
client-alone test is ``xfail(strict=True)``: it flips the day aiokafka fixes this.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

import pytest
from aio_support import Recorder, close, consumer, coordinator_for
from aiokafka.protocol.metadata import MetadataResponse_v1
from aiokafka.structs import TopicPartition

from kafka_sticky_plugin.aiokafka import CooperativeStickyAssignor, install_hooks

TP = TopicPartition("t", 0)


async def after_restart(hooks: bool) -> tuple[Any, bool, Any]:
    """(node chosen, metadata update requested, hooks handle) for one fetch decision."""
    from aiokafka.consumer.fetcher import Fetcher

    if not hasattr(Fetcher, "_select_read_replica"):
        pytest.skip("this aiokafka has no closest-replica fetching (KIP-392)")
    c = consumer(partition_assignment_strategy=[CooperativeStickyAssignor], client_rack="r1")
    handle = install_hooks(c) if hooks else None
    c.subscribe(["t"], listener=Recorder())
    response = MetadataResponse_v1(
        [(1, "127.0.0.1", 9, "r0"), (3, "127.0.0.1", 9, "r2")],  # broker 2 absent
        1,
        [(0, "t", False, [(0, 0, 1, [1, 2, 3], [1, 3])])],
    )
    c._client.cluster.update_metadata(response)
    c._client._md_update_fut = None
    c._fetcher = Fetcher(c._client, c._subscription, client_rack="r1")
    await coordinator_for(c)  # the hooks attach here, as in start()
    try:
        c._fetcher._preferred_read_replica[TP] = (2, time.monotonic() + 300)
        node = c._fetcher._select_read_replica(TP)
        requested = c._client._md_update_fut is not None
        return node, requested, handle
    finally:
        with contextlib.suppress(asyncio.CancelledError):
            await c._fetcher.close()
        c._fetcher = None
        await close(c)


@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="aiokafka 0.14, 0.15.0rc1: a preferred read replica missing from the metadata does"
    " not request a metadata update (upstream report in docs/racks.md)",
)
def test_the_client_alone_asks_for_fresh_metadata() -> None:
    node, requested, _ = asyncio.run(after_restart(hooks=False))
    assert node == 1  # the leader
    assert requested


def test_the_hooked_client_asks_for_fresh_metadata() -> None:
    node, requested, handle = asyncio.run(after_restart(hooks=True))
    assert node == 1  # the client's own choice
    assert requested
    assert handle._impl.read_replica.refreshes == 1
