"""The kafka-python 3.x Processor's revoke-time commit survives a coordinator move: it is
retried (``commit_on_revoke``) for the revocation budget, where one ``commit_async`` gave up
at the first failure and the next owner processed the finished records again."""

from __future__ import annotations

import time
from typing import Any

import pytest
from hooks_support import IS_V3, make_consumer

pytestmark = pytest.mark.skipif(not IS_V3, reason="the Processor is for kafka-python 3.0.x")

BUDGET_MS = 1500  # min(request_timeout_ms, max_poll_interval_ms / 2)


def test_revoke_commit_is_retried_while_no_coordinator_answers() -> None:
    from kafka.structs import TopicPartition

    from kafka_sticky_plugin.kafka_python import (
        CooperativeStickyAssignor,
        Processor,
        install_hooks,
    )

    consumer = make_consumer(
        [CooperativeStickyAssignor],
        api_version=(3, 0),
        retry_backoff_ms=100,
        max_poll_interval_ms=2 * BUDGET_MS,
        session_timeout_ms=2000,
        heartbeat_interval_ms=500,
    )
    committed: list[dict[Any, int]] = []
    try:
        install_hooks(consumer)
        processor = Processor(consumer, lambda record: None, revoke_wait_s=0.1)
        tp = TopicPartition("t", 0)
        ledger = processor._core._ledger  # one finished record at offset 5: commit point 6
        ledger.offer(tp, [(5, "record")])
        (task,) = ledger.start()
        ledger.finish(task)
        listener = processor.listener()
        processor._core._on_commit = committed.append
        started = time.monotonic()
        consumer._coordinator._net.run(listener.on_partitions_revoked, {tp})
        took = time.monotonic() - started
    finally:
        consumer.close()
    print(f"revoke commit gave up after {took:.1f} s (budget {BUDGET_MS} ms)")
    assert took >= 0.9 * BUDGET_MS / 1000, f"gave up after {took:.2f} s: not retried"
    assert committed == [], "reported a commit that never landed"
