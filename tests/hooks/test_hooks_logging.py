"""What the hooks log: one INFO line per rebalance with counts (partition lists only at DEBUG,
they are megabytes at scale), and a listener's exception reported once, not twice."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from hooks_support import IS_V3, RecordingListener, join_complete, make_consumer

from kafka_sticky_plugin import CooperativeStickyAssignor
from kafka_sticky_plugin.hooks import install_hooks

COOP = "cooperative-sticky"
pytestmark = pytest.mark.timeout(30)


@pytest.fixture
def consumer() -> Any:
    made = make_consumer([CooperativeStickyAssignor])
    install_hooks(made)
    yield made
    made.close()


def _hook_records(caplog: pytest.LogCaptureFixture, level: int) -> list[logging.LogRecord]:
    return [
        r for r in caplog.records if r.name == "kafka_sticky_plugin.hooks" and r.levelno == level
    ]


def test_one_info_line_per_rebalance_with_counts_lists_at_debug(
    consumer: Any, caplog: pytest.LogCaptureFixture
) -> None:
    consumer.subscribe(["t1"], listener=RecordingListener(consumer))
    caplog.set_level(logging.DEBUG, logger="kafka_sticky_plugin.hooks")
    join_complete(consumer, 3, COOP, [("t1", p) for p in range(50)])
    caplog.clear()
    join_complete(consumer, 4, COOP, [("t1", p) for p in range(1, 51)])
    info = [r.getMessage() for r in _hook_records(caplog, logging.INFO)]
    assert info == ["group unit-hooks generation 4: assigned 50 partitions (added 1, revoked 1)"]
    debug = " ".join(r.getMessage() for r in _hook_records(caplog, logging.DEBUG))
    assert "TopicPartition(topic='t1', partition=50)" in debug
    assert "TopicPartition(topic='t1', partition=0)" in debug


class _FailingListener(RecordingListener):
    def on_partitions_assigned(self, assigned: Any) -> None:
        raise ValueError("listener bug")


@pytest.mark.skipif(not IS_V3, reason="kafka-python 3.x re-raises listener errors from poll()")
def test_a_listener_error_is_raised_from_poll_and_logged_without_a_second_traceback(
    consumer: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """3.x: the exception comes out of the coordinator (poll()) chained to a KafkaError, and
    the hooks' log line names it without printing its traceback a second time."""
    import kafka.errors

    consumer.subscribe(["t1"], listener=_FailingListener(consumer))
    caplog.set_level(logging.INFO, logger="kafka_sticky_plugin.hooks")
    with pytest.raises(kafka.errors.KafkaError) as caught:
        join_complete(consumer, 3, COOP, [("t1", 0)])
    assert isinstance(caught.value.__cause__, ValueError)
    errors = _hook_records(caplog, logging.ERROR)
    assert len(errors) == 1
    assert "on_partitions_assigned" in errors[0].getMessage()
    assert "listener bug" in errors[0].getMessage()
    assert errors[0].exc_info is None
    assert consumer.assignment() == {_tp("t1", 0)}, "bookkeeping completed before the raise"


def _tp(topic: str, partition: int) -> Any:
    from kafka.structs import TopicPartition

    return TopicPartition(topic, partition)


@pytest.mark.parametrize(
    ("poll_ms", "expected"),
    [(None, 5000), (0, 5000), (100, 5000), (8000, 8000)],
)
def test_the_commit_before_a_rejoin_is_not_bounded_by_the_poll(
    poll_ms: int | None, expected: int
) -> None:
    """request_timeout_ms, at most half the rebalance timeout, never less than the poll's
    remainder (kafka-python 2.2+ gave it only the poll's remainder: none for poll(0))."""
    from kafka_sticky_plugin.adapters.kafka_python.hooks.common import (
        pre_rebalance_commit_timeout_ms,
    )

    config = {"request_timeout_ms": 30000, "max_poll_interval_ms": 10000}
    assert pre_rebalance_commit_timeout_ms(config, poll_ms) == expected
    config = {"request_timeout_ms": 3000, "max_poll_interval_ms": 300000}
    assert pre_rebalance_commit_timeout_ms(config, poll_ms) == max(3000, poll_ms or 0)
