"""The hooks' coordinator lookup on kafka-python 3.0.x (issue 29): while no coordinator can be
found, lookups back off (``retry_backoff_ms`` doubling to ``retry_backoff_max_ms``) instead of
repeating every ``retry_backoff_ms`` from every ``poll()``, and nothing is raised out of
``poll()``. A real consumer whose bootstrap address refuses connections (loopback, nothing
listening): the same "no broker answers" a bounced cluster gives, without a broker."""

from __future__ import annotations

import time
from typing import Any

import pytest
from hooks_support import IS_V3, make_consumer

from kafka_sticky_plugin.kafka_python import StickyAssignor, install_hooks

pytestmark = pytest.mark.skipif(not IS_V3, reason="the lookup is replaced on kafka-python 3.0.x")

POLL_FOR_S = 3.0


def _count_lookups(consumer: Any) -> list[float]:
    """Record each FindCoordinator the consumer sends (the coordinator's own
    ``_send_group_coordinator_request``, whoever asked for the lookup)."""
    coordinator = consumer._coordinator
    original = coordinator._send_group_coordinator_request
    calls: list[float] = []

    async def counting() -> Any:
        calls.append(time.monotonic())
        return await original()

    vars(coordinator)["_send_group_coordinator_request"] = counting
    return calls


def _poll_for(consumer: Any, seconds: float) -> list[BaseException]:
    raised: list[BaseException] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            consumer.poll(timeout_ms=200)
        except Exception as exc:  # collected: the test asserts there is none
            raised.append(exc)
    return raised


@pytest.mark.parametrize("hooked", [False, True], ids=["plain", "hooked"])
def test_lookups_back_off_and_poll_raises_nothing(hooked: bool) -> None:
    consumer = make_consumer([StickyAssignor], api_version=(3, 0), retry_backoff_ms=100)
    try:
        if hooked:
            install_hooks(consumer)
        calls = _count_lookups(consumer)
        consumer.subscribe(["t"])
        raised = _poll_for(consumer, POLL_FOR_S)
    finally:
        consumer.close()
    print(f"{'hooked' if hooked else 'plain'}: {len(calls)} lookups in {POLL_FOR_S:.0f} s")
    assert not raised, f"poll() raised {raised[:2]}"
    if hooked:
        # 100, 200, 400, 800, 1000, 1000 ms... : at most 7 rounds in 3 s (the client's own
        # loop makes one every 100 ms: ~30).
        assert 1 <= len(calls) <= 7, f"{len(calls)} lookups in {POLL_FOR_S} s: no backoff"
    else:
        assert len(calls) >= 1


def test_commit_on_revoke_retries_until_the_deadline_then_reports_false() -> None:
    """No coordinator to be found: the revoke-time commit keeps trying for its whole budget
    (a single ``commit_async`` gives up at the first failure), then returns False, raising
    nothing into the rebalance."""
    from kafka.structs import OffsetAndMetadata, TopicPartition

    from kafka_sticky_plugin.kafka_python import commit_on_revoke

    consumer = make_consumer([StickyAssignor], api_version=(3, 0), retry_backoff_ms=100)
    try:
        install_hooks(consumer)
        calls = _count_lookups(consumer)
        offsets = {TopicPartition("t", 0): OffsetAndMetadata(5, "", -1)}
        started = time.monotonic()
        committed = consumer._coordinator._net.run(commit_on_revoke, consumer, offsets, 1500)
        took = time.monotonic() - started
    finally:
        consumer.close()
    print(f"commit_on_revoke: {committed} after {took:.1f} s, {len(calls)} lookups")
    assert committed is False
    assert took >= 1.4, f"gave up after {took:.2f} s, before its 1.5 s budget"
    assert len(calls) >= 2, "the coordinator was looked up only once: no retry"
