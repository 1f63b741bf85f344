"""One assignor instance given to two consumers (one settings dict for both), on the real
broker: with ``install_hooks`` each consumer's hooks own its join state and pass it to the
shared instance (which holds none on that path), so when a third member joins the first two
keep what balance allows (2 of their 3 partitions each), as with separate instances. Eager
``StickyAssignor`` was the case that broke when a member's claims came from its assignor's
memory: a shared instance made both claim the same partitions (measured then: each kept 1
of 3, twice in two runs).

Without the hooks the instance is the member's memory (issue 24 measured partition 4 owned by two
members for ~8 s): the second consumer's assignment through the shared instance is refused
with ``ConfigurationError`` raised from ``poll``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from kafka import KafkaConsumer

from kafka_sticky_plugin import CooperativeStickyAssignor, StickyAssignor
from kafka_sticky_plugin.errors import ConfigurationError
from kafka_sticky_plugin.hooks import install_hooks

PARTITIONS = 6
SETTINGS: dict[str, Any] = {
    "session_timeout_ms": 6000,
    "heartbeat_interval_ms": 1000,
    "max_poll_interval_ms": 10000,
    "enable_auto_commit": False,
    "auto_offset_reset": "earliest",
}


class Polling:
    """A consumer polled in its own thread; ``owned()`` is its current assignment."""

    def __init__(self, consumer: Any) -> None:
        self.consumer = consumer
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._owned: frozenset[int] = frozenset()
        self.error: Exception | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.consumer.poll(timeout_ms=200)
            except Exception as exc:  # the test reads it; the consumer stops polling
                self.error = exc
                return
            with self._lock:
                self._owned = frozenset(tp.partition for tp in self.consumer.assignment())

    def owned(self) -> frozenset[int]:
        with self._lock:
            return self._owned

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=30)
        self.consumer.close()


def _wait_for(members: list[Polling], sizes: list[int], timeout_s: float) -> list[frozenset[int]]:
    """Wait until the members own disjoint sets of the given sizes covering every partition,
    unchanged for 3 s; return them."""
    deadline = time.monotonic() + timeout_s
    stable_since, last = time.monotonic(), None
    while time.monotonic() < deadline:
        now = [m.owned() for m in members]
        covered = frozenset().union(*now)
        good = sorted(len(o) for o in now) == sorted(sizes) and len(covered) == PARTITIONS
        if now != last:
            stable_since, last = time.monotonic(), now
        elif good and time.monotonic() - stable_since >= 3:
            return now
        time.sleep(0.2)
    raise AssertionError(f"group not stable with sizes {sizes}: {last}")


@pytest.fixture
def members(broker: Any) -> Iterator[Callable[..., Polling]]:
    made: list[Polling] = []

    def make(group: str, topic: str, strategy: list[Any], hooks: bool = True) -> Polling:
        consumer = KafkaConsumer(
            bootstrap_servers=broker.bootstrap,
            group_id=group,
            partition_assignment_strategy=strategy,
            **SETTINGS,
        )
        if hooks:
            install_hooks(consumer)
        consumer.subscribe([topic])
        polling = Polling(consumer)
        made.append(polling)
        return polling

    yield make
    for polling in made:
        polling.close()


@pytest.mark.timeout(120)
def test_two_consumers_sharing_one_instance_stay_sticky_when_a_third_joins(
    topic_factory: Callable[[int], str], group_id: str, members: Callable[..., Polling]
) -> None:
    topic = topic_factory(PARTITIONS)
    shared = StickyAssignor()
    first = members(group_id, topic, [shared])
    second = members(group_id, topic, [shared])
    before = _wait_for([first, second], [3, 3], 60)
    third = members(group_id, topic, [StickyAssignor])
    after = _wait_for([first, second, third], [2, 2, 2], 60)
    kept = [len(after[i] & before[i]) for i in range(2)]
    print(f"before {before}, after {after}, kept {kept} of 2 each")
    assert kept == [2, 2], "a member gave up a partition balance did not require"
    assert shared.previous_assignment == (), "the shared instance kept member state"


@pytest.mark.timeout(120)
@pytest.mark.parametrize("cls", [StickyAssignor, CooperativeStickyAssignor])
def test_two_consumers_sharing_one_instance_without_the_hooks_are_refused(
    cls: Any, topic_factory: Callable[[int], str], group_id: str, members: Callable[..., Polling]
) -> None:
    topic = topic_factory(PARTITIONS)
    shared = cls()
    pair = [members(group_id, topic, [shared], hooks=False) for _ in range(2)]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not any(m.error for m in pair):
        time.sleep(0.2)
    errors = [m.error for m in pair if m.error is not None]
    print(f"errors: {errors}")
    assert errors, "two consumers drove one instance for 60 s and nothing refused it"
    assert all(isinstance(e, ConfigurationError) for e in errors), errors
    assert "used by two consumers without install_hooks" in str(errors[0])
