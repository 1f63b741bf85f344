"""Periodic ``commit_on_revoke`` commits of a poll loop while the group rebalances (issue 39):
the broker refuses them (REBALANCE_IN_PROGRESS, ILLEGAL_GENERATION), many times per rebalance
with a loop that commits after every ``getmany``. That is one WARNING line per rebalance saying
what is really at stake (nothing, for kept partitions and revoked ones committed in
``on_partitions_revoked``), not one line per refused commit each saying that records "will be
delivered again". The commit guard is on (its refusals while the member has no generation are
the same rebalance, and never an exception out of ``commit_on_revoke``). About 25 s: member a
alone, b joins, b leaves.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer
from aiokafka.structs import OffsetAndMetadata

from kafka_sticky_plugin.aiokafka import (
    CooperativeStickyAssignor,
    commit_on_revoke,
    guard_commits,
    install_hooks,
)
from kafka_sticky_plugin.groups.admin import create_topic, unique_name

SAID_ONCE = "commits refused while the group rebalances"


async def _member(
    bootstrap: str, topic: str, group: str, stop: asyncio.Event, results: list[bool]
) -> None:
    consumer = AIOKafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        group_id=group,
        partition_assignment_strategy=[CooperativeStickyAssignor],
        enable_auto_commit=False,
        session_timeout_ms=6000,
        heartbeat_interval_ms=1000,
        max_poll_interval_ms=10000,
    )
    install_hooks(consumer)
    guard_commits(consumer)  # refuse mode: a commit while not in a generation is refused too
    await consumer.start()
    try:
        while not stop.is_set():
            await consumer.getmany(timeout_ms=50)
            offsets = {
                tp: OffsetAndMetadata(await consumer.position(tp), "")
                for tp in consumer.assignment()
            }
            if offsets:  # the periodic commit docs/aiokafka.md recommends
                results.append(await commit_on_revoke(consumer, offsets))
    finally:
        await consumer.stop()


async def _scenario(bootstrap: str) -> tuple[list[bool], list[bool]]:
    topic, group = unique_name("t-commitwarn"), unique_name("g-commitwarn")
    create_topic(bootstrap, topic, 4)
    a_results: list[bool] = []
    b_results: list[bool] = []
    stop_a, stop_b = asyncio.Event(), asyncio.Event()
    a = asyncio.create_task(_member(bootstrap, topic, group, stop_a, a_results))
    await asyncio.sleep(8)
    b = asyncio.create_task(_member(bootstrap, topic, group, stop_b, b_results))
    await asyncio.sleep(10)
    stop_b.set()
    await b
    await asyncio.sleep(6)
    stop_a.set()
    await a
    return a_results, b_results


@pytest.mark.timeout(120)
def test_refused_periodic_commits_are_one_warning_per_rebalance(
    broker: Any, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG, logger="kafka_sticky_plugin.aiokafka"):
        a_results, b_results = asyncio.run(_scenario(broker.bootstrap))
    ours = [r for r in caplog.records if r.name == "kafka_sticky_plugin.aiokafka"]
    warnings = [r.getMessage() for r in ours if r.levelno == logging.WARNING]
    refused = a_results.count(False) + b_results.count(False)
    print(f"commits: {len(a_results) + len(b_results)}, refused {refused}; warnings {warnings}")
    assert a_results.count(True) > 0 and refused > 0, "no commit was refused by a rebalance"
    said_once = [w for w in warnings if SAID_ONCE in w]
    # b joining and b leaving: two rebalances (each cooperative change may take two rounds)
    assert 1 <= len(said_once) <= 4, warnings
    assert len(said_once) < refused or refused == 1, (refused, warnings)
    assert not [w for w in warnings if "delivered again" in w and SAID_ONCE not in w], warnings
    assert all("nothing is lost by it" in w for w in said_once), said_once
