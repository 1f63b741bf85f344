"""Real aiokafka objects without a broker, for the aiokafka hooks' fast tests.

- :func:`consumer`: a real ``AIOKafkaConsumer`` pointed at a closed loopback port (nothing
  connects until ``start()``, which these tests never call);
- :func:`coordinator_for`: the ``GroupCoordinator`` that ``start()`` would create, stored the
  way ``start()`` stores it (so the hooks attach), with its coordination task stopped so the
  test drives the rebalance steps itself, and no metadata update left in flight;
- :func:`metadata_response`: a real ``MetadataResponse`` for the consumer's cluster view.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping, Sequence
from typing import Any

from aiokafka import AIOKafkaConsumer
from aiokafka.abc import ConsumerRebalanceListener
from aiokafka.consumer.group_coordinator import GroupCoordinator
from aiokafka.protocol.metadata import MetadataResponse_v1

CLOSED_PORT = "127.0.0.1:9"


def consumer(*topics: str, group_id: str | None = "g", **settings: Any) -> AIOKafkaConsumer:
    """A consumer that never connects (call inside a running event loop)."""
    return AIOKafkaConsumer(*topics, bootstrap_servers=CLOSED_PORT, group_id=group_id, **settings)


async def coordinator_for(c: AIOKafkaConsumer) -> GroupCoordinator:
    """The coordinator ``start()`` would make, with its background task stopped."""
    coordinator = GroupCoordinator(
        c._client,
        c._subscription,
        group_id=c._group_id,
        assignors=c._partition_assignment_strategy,
        enable_auto_commit=False,
        group_instance_id=c._group_instance_id,
    )
    c._coordinator = coordinator
    # Nothing answers here: no metadata update stays in flight (the hooks wait for one before
    # a JoinGroup, as aiokafka's leader does before it assigns).
    c._client._md_update_fut = None
    coordinator._coordination_task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await coordinator._coordination_task
    return coordinator


def metadata_response(
    partitions: Mapping[str, int], racks: Sequence[str | None] = (None,)
) -> MetadataResponse_v1:
    """Brokers ``0..len(racks)-1`` (with those racks); partition ``p`` of every topic is led
    by broker ``p % len(racks)`` with that one replica."""
    brokers = [(i, "127.0.0.1", 9, rack) for i, rack in enumerate(racks)]
    topics = [
        (
            0,
            topic,
            False,
            [(0, p, p % len(racks), [p % len(racks)], [p % len(racks)]) for p in range(n)],
        )
        for topic, n in partitions.items()
    ]
    return MetadataResponse_v1(brokers, 0, topics)


def know_topics(c: AIOKafkaConsumer, partitions: Mapping[str, int], **kw: Any) -> None:
    """Give the consumer's cluster view ``partitions`` as if a metadata update had arrived."""
    c._client.cluster.update_metadata(metadata_response(partitions, **kw))
    c._client._topics = set(partitions)
    c._client._md_update_fut = None


class Recorder(ConsumerRebalanceListener):  # type: ignore[misc]  # aiokafka is untyped
    """A listener with async methods that records every call as ``(name, sorted pairs)``."""

    def __init__(self, *, with_lost: bool = True) -> None:
        self.calls: list[tuple[str, list[tuple[str, int]]]] = []
        if not with_lost:
            self.on_partitions_lost = None  # type: ignore[assignment]

    def _record(self, name: str, partitions: Any) -> None:
        self.calls.append((name, sorted((tp.topic, tp.partition) for tp in partitions)))

    async def on_partitions_revoked(self, revoked: Any) -> None:
        self._record("revoked", revoked)

    async def on_partitions_assigned(self, assigned: Any) -> None:
        self._record("assigned", assigned)

    async def on_partitions_lost(self, lost: Any) -> None:
        self._record("lost", lost)


async def close(c: AIOKafkaConsumer) -> None:
    """Stop the consumer after letting the tasks the steps started run once (a task
    cancelled before its first step raises ``CancelledError`` into ``stop()``)."""
    await asyncio.sleep(0)
    await c.stop()
