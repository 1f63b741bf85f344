"""In-process kafka-python members for the metrics tier, and what the test itself saw.

Each :class:`Member` runs one hooked ``KafkaConsumer`` in its own thread (the consumer is
only touched there) with a listener that records every callback; the test compares those
records, and the group's stable assignments, with what the member's
:class:`~kafka_sticky_plugin.metrics.RebalanceMetrics` report. :class:`JoinFailures` counts
the JoinGroup/SyncGroup failures the client logs for one group (each failed attempt logs one
line), the harness's view of failed rebalances.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import pytest
from kafka import ConsumerRebalanceListener, KafkaConsumer

from kafka_sticky_plugin.kafka_python import CooperativeStickyAssignor, install_hooks
from kafka_sticky_plugin.metrics import RebalanceMetrics

Partition = tuple[str, int]


@pytest.fixture
def apache_kafka_only(broker: Any) -> None:
    """The metrics tier runs on the reference broker; elsewhere its tests skip with one line.
    (Use: ``from metrics_harness import apache_kafka_only`` and
    ``pytest.mark.usefixtures("apache_kafka_only")``.)"""
    if broker.profile.name != "apache-kafka":
        pytest.skip("the metrics tier runs on Apache Kafka (KAFKA_STICKY_BROKER=kafka)")


#: kafka-python's log lines for a failed JoinGroup/SyncGroup attempt (one per attempt).
_FAILURE_PREFIXES = (
    "Attempt to join group",
    "Received member id",
    "SyncGroup for group",
)


class JoinFailures(logging.Handler):
    """Counts the failed join attempts kafka-python logs for ``group_id`` (a context manager
    that attaches itself to the ``kafka.coordinator`` logger)."""

    def __init__(self, group_id: str) -> None:
        super().__init__(logging.INFO)
        self._group_id = group_id
        self.count = 0
        self._logger = logging.getLogger("kafka.coordinator")
        self._level = self._logger.level

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if self._group_id in message and message.startswith(_FAILURE_PREFIXES):
            self.count += 1

    def __enter__(self) -> JoinFailures:
        self._logger.addHandler(self)
        self._logger.setLevel(logging.INFO)
        return self

    def __exit__(self, *exc: object) -> None:
        self._logger.removeHandler(self)
        self._logger.setLevel(self._level)


@dataclass
class Seen:
    """The listener's record: every call's partitions, per callback."""

    assigned: list[set[Partition]] = field(default_factory=list)
    revoked: list[set[Partition]] = field(default_factory=list)
    lost: list[set[Partition]] = field(default_factory=list)
    #: revoked by ``close()`` (the member leaves), not by a rebalance
    revoked_on_close: list[set[Partition]] = field(default_factory=list)


class _Listener(ConsumerRebalanceListener):  # type: ignore[misc]
    def __init__(self, seen: Seen, lock: threading.Lock, closing: threading.Event) -> None:
        self._seen = seen
        self._lock = lock
        self._closing = closing

    def _add(self, into: list[set[Partition]], partitions: Iterable[Any]) -> None:
        with self._lock:
            into.append({(tp.topic, tp.partition) for tp in partitions})

    def on_partitions_assigned(self, assigned: Any) -> None:
        self._add(self._seen.assigned, assigned)

    def on_partitions_revoked(self, revoked: Any) -> None:
        closing = self._closing.is_set()
        self._add(self._seen.revoked_on_close if closing else self._seen.revoked, revoked)

    def on_partitions_lost(self, lost: Any) -> None:
        self._add(self._seen.lost, lost)


class Member:
    """One hooked kafka-python consumer polling in its own thread."""

    def __init__(self, name: str, bootstrap: str, group_id: str, topic: str, **config: Any) -> None:
        self.name = name
        self._lock = threading.Lock()
        self._seen = Seen()
        self._stop = threading.Event()
        self._pause_s = 0.0
        self._error: BaseException | None = None
        self._ready = threading.Event()
        self._owned: set[Partition] = set()
        self.metrics: RebalanceMetrics | None = None
        self._args = (bootstrap, group_id, topic, config)
        self._thread = threading.Thread(target=self._run, name=f"member-{name}", daemon=True)

    def start(self) -> Member:
        self._thread.start()
        if not self._ready.wait(30):
            raise RuntimeError(f"member {self.name} did not start")
        return self

    def _run(self) -> None:
        bootstrap, group_id, topic, config = self._args
        consumer = KafkaConsumer(
            bootstrap_servers=bootstrap,
            group_id=group_id,
            client_id=self.name,
            partition_assignment_strategy=[CooperativeStickyAssignor],
            enable_auto_commit=False,
            session_timeout_ms=10000,
            heartbeat_interval_ms=500,
            **config,
        )
        try:
            self.metrics = install_hooks(consumer).metrics
            listener = _Listener(self._seen, self._lock, self._stop)
            consumer.subscribe([topic], listener=listener)
            self._ready.set()
            while not self._stop.is_set():
                consumer.poll(timeout_ms=100)
                with self._lock:
                    self._owned = {(tp.topic, tp.partition) for tp in consumer.assignment()}
                    pause, self._pause_s = self._pause_s, 0.0
                if pause:
                    time.sleep(pause)
        except BaseException as exc:  # reported by check()
            self._error = exc
            self._ready.set()
        finally:
            consumer.close()

    def pause(self, seconds: float) -> None:
        """Stop polling for ``seconds`` once (longer than max_poll_interval_ms: a loss)."""
        with self._lock:
            self._pause_s = seconds

    def check(self) -> None:
        if self._error is not None:
            raise AssertionError(f"member {self.name} failed") from self._error

    def owned(self) -> set[Partition]:
        with self._lock:
            return set(self._owned)

    def seen(self) -> Seen:
        with self._lock:
            seen = self._seen
            return Seen(
                list(seen.assigned),
                list(seen.revoked),
                list(seen.lost),
                list(seen.revoked_on_close),
            )

    def recorder(self) -> RebalanceMetrics:
        if self.metrics is None:
            raise AssertionError(f"member {self.name} has no hooks handle")
        return self.metrics

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(30)


def wait_stable(
    members: list[Member], partitions: set[Partition], timeout_s: float = 60.0
) -> dict[Partition, str]:
    """Wait until ``members`` own ``partitions`` exactly once between them, unchanged for
    a second and with no rebalance under way; return the owner of each partition."""
    deadline = time.monotonic() + timeout_s
    previous: dict[Partition, str] | None = None
    since = time.monotonic()
    while time.monotonic() < deadline:
        for member in members:
            member.check()
        owner: dict[Partition, str] = {}
        clash = False
        for member in members:
            for tp in member.owned():
                clash |= tp in owner
                owner[tp] = member.name
        if not clash and set(owner) == partitions and owner == previous:
            if time.monotonic() - since >= 1.5:
                return owner
        else:
            since = time.monotonic()
        previous = owner
        time.sleep(0.1)
    raise AssertionError(f"group not stable within {timeout_s} s: {previous}")
