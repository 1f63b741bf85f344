"""The commit guard on aiokafka (issue 25): a ``commit()`` accepted while its partitions were
assigned but still waiting for the commit lock when they are revoked (a commit racing a
revocation; the auto-commit of a revoked assignment takes the same path) is refused for them
when it is finally sent, and the new owner's committed offsets do not move. Without the
guard aiokafka sends it with the member's current generation and the broker accepts it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer
from hooks_harness import create_topics, unique

from kafka_sticky_plugin.aiokafka import (
    CommitRefusedError,
    CooperativeStickyAssignor,
    guard_commits,
    install_hooks,
)

pytestmark = [pytest.mark.timeout(180), pytest.mark.kafka_only()]

PARTITIONS = 4
NEW_OWNER_OFFSET = 5
ZOMBIE_OFFSET = 999


def _member(bootstrap: str, group: str, topic: str) -> AIOKafkaConsumer:
    consumer = AIOKafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        group_id=group,
        enable_auto_commit=False,
        partition_assignment_strategy=[CooperativeStickyAssignor],
        session_timeout_ms=6000,
        heartbeat_interval_ms=500,
    )
    install_hooks(consumer)
    guard_commits(consumer)
    return consumer


async def _until(done: Callable[[], bool], timeout_s: float = 40) -> None:
    deadline = time.monotonic() + timeout_s
    while not done():
        assert time.monotonic() < deadline, "the group did not settle"
        await asyncio.sleep(0.1)


async def _scenario(bootstrap: str, group: str, topic: str) -> dict[int, Any]:
    a = _member(bootstrap, group, topic)
    b = _member(bootstrap, group, topic)
    await a.start()
    try:
        await _until(lambda: len(a.assignment()) == PARTITIONS)
        everything = set(a.assignment())
        lock = a._coordinator._commit_lock
        await lock.acquire()  # a commit in flight elsewhere holds it: ours must wait
        racing = asyncio.create_task(a.commit({tp: ZOMBIE_OFFSET for tp in everything}))
        await asyncio.sleep(0.2)
        await b.start()
        await _until(
            lambda: (
                len(a.assignment()) == 2
                and len(b.assignment()) == 2
                and not set(a.assignment()) & set(b.assignment())
            )
        )
        moved = set(b.assignment())
        for _ in range(50):  # until b's cooperative follow-up round is over
            try:
                await b.commit({tp: NEW_OWNER_OFFSET for tp in moved})
                break
            except Exception:
                await asyncio.sleep(0.2)
        lock.release()
        with pytest.raises(CommitRefusedError) as refused:
            await racing
        assert sorted(p for _t, p in refused.value.refused) == sorted(tp.partition for tp in moved)
        return {tp.partition: await b.committed(tp) for tp in everything} | {
            -1: sorted(tp.partition for tp in moved)
        }
    finally:
        await a.stop()
        await b.stop()


def test_a_commit_racing_a_revocation_is_refused_for_the_revoked_partitions(broker: Any) -> None:
    topic, group = unique("t-guard"), unique("g-guard")
    create_topics(broker.bootstrap, {topic: PARTITIONS})
    seen = asyncio.run(_scenario(broker.bootstrap, group, topic))
    moved = seen.pop(-1)
    assert {seen[p] for p in moved} == {NEW_OWNER_OFFSET}, seen
    assert {seen[p] for p in seen if p not in moved} == {ZOMBIE_OFFSET}, seen  # owned part landed
