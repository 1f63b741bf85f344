"""Prompt heartbeats on a hooked kafka-python 3.0.x consumer (no broker): the heartbeat's
schedule is quicker only after a cooperative SyncGroup that asked for no rejoin, only for the
window, not for eager groups, not when turned off, and ``uninstall`` restores it."""

from __future__ import annotations

import time

import pytest
from hooks_support import IS_V3, join_complete, make_consumer

from kafka_sticky_plugin import CooperativeStickyAssignor, StickyAssignor
from kafka_sticky_plugin.hooks import install_hooks
from kafka_sticky_plugin.kafka_python import PromptHeartbeats

pytestmark = pytest.mark.skipif(not IS_V3, reason="prompt heartbeats: kafka-python 3.0.x")


def _delay(consumer: object) -> float:
    heartbeat = consumer._coordinator.heartbeat  # type: ignore[attr-defined]
    heartbeat.sent_heartbeat()  # as if one went just now
    return float(heartbeat.time_to_next_heartbeat())


def test_a_cooperative_join_opens_the_window_and_it_closes_again() -> None:
    consumer = make_consumer([CooperativeStickyAssignor], heartbeat_interval_ms=1000)
    handle = install_hooks(consumer, prompt_heartbeats=PromptHeartbeats(100, 300))
    try:
        consumer.subscribe(["t"])
        assert _delay(consumer) > 0.9
        join_complete(consumer, 1, "cooperative-sticky", [("t", 0)])
        assert _delay(consumer) <= 0.1
        time.sleep(0.35)
        assert _delay(consumer) > 0.9
        handle.uninstall()
        join_complete(consumer, 2, "cooperative-sticky", [("t", 0)])
        assert _delay(consumer) > 0.9
    finally:
        consumer.close()


@pytest.mark.parametrize(
    ("strategy", "policy"),
    [(StickyAssignor, PromptHeartbeats()), (CooperativeStickyAssignor, None)],
)
def test_eager_groups_and_off_keep_the_clients_schedule(
    strategy: object, policy: PromptHeartbeats | None
) -> None:
    consumer = make_consumer([strategy], heartbeat_interval_ms=1000)
    install_hooks(consumer, prompt_heartbeats=policy)
    try:
        consumer.subscribe(["t"])
        protocol = "sticky" if strategy is StickyAssignor else "cooperative-sticky"
        join_complete(consumer, 1, protocol, [("t", 0)])
        assert _delay(consumer) > 0.9
    finally:
        consumer.close()
