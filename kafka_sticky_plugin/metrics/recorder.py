"""One consumer's rebalance metrics, recorded by the coordinator hooks, read as plain values.

The Java consumer's coordinator metrics (KAFKA-8609, ``consumer-coordinator-metrics``) with
the same names and meanings, plus what only an assignor plugin knows. The table of every
name, unit, type and meaning is :data:`kafka_sticky_plugin.metrics.names.METRICS` (and the
docs page built from it); the exporters read :meth:`RebalanceMetrics.snapshot` only.

When a rebalance starts, ends and fails, as Java's classic ``AbstractCoordinator`` counts:

- it **starts** at the first JoinGroup attempt of a rebalance (:meth:`join_attempt`; later
  attempts of the same rebalance do not move the start);
- it **succeeds** when the SyncGroup answer arrives (:meth:`join_succeeded`): one rebalance
  counted, its latency from the start above (failed attempts in between included);
- a JoinGroup or SyncGroup attempt that fails while a rebalance is under way counts one
  **failed rebalance** (:meth:`join_failed`), and the rebalance goes on (the next success
  ends it). A failure with no rebalance under way is not counted.
- listener latencies (``partition-revoked/assigned/lost-latency-*``) time the user's callback
  whenever the hooks invoke it, as Java times its ``ConsumerRebalanceListener``.

Windowed values (``*-avg``, ``*-max``, ``*-rate-per-hour``) use Java's default windows (2
samples of 30 s, :mod:`.windows`); ``*-total`` values count since the consumer was created.

Thread safety: the hooks record from the consumer's thread (or event loop) while an exporter
reads from its own thread; one lock guards every field. No I/O, no client import.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .leader_round import LeaderRound
from .names import MetricInfo
from .rdkafka_stats import RdkafkaGroupStats
from .windows import DEFAULT_SAMPLES, DEFAULT_WINDOW_S, SampledWindow

__all__ = ["CALLBACKS", "RebalanceMetrics", "RebalanceMetricsSnapshot", "recorder_of"]

#: The listener callbacks timed, by the name Java's metrics use.
CALLBACKS = ("revoked", "assigned", "lost")


@dataclass(frozen=True)
class RebalanceMetricsSnapshot:
    """Every metric at one instant (milliseconds and counts, as Java reports them).

    Field names are Java's metric names with ``-`` as ``_``; :meth:`as_java_names` gives the
    dashed names. ``nan``: no value in the window (Java's NaN); ``-1``: never (Java's -1).
    """

    group_id: str
    client_id: str
    rebalance_latency_avg: float
    rebalance_latency_max: float
    rebalance_latency_total: float
    rebalance_total: int
    rebalance_rate_per_hour: float
    failed_rebalance_total: int
    failed_rebalance_rate_per_hour: float
    last_rebalance_seconds_ago: float
    partition_revoked_latency_avg: float
    partition_revoked_latency_max: float
    partition_assigned_latency_avg: float
    partition_assigned_latency_max: float
    partition_lost_latency_avg: float
    partition_lost_latency_max: float
    assigned_partitions: int
    # -- what only the plugin knows ---------------------------------------------------------
    generation: int
    partitions_revoked_total: int
    partitions_lost_total: int
    partitions_added_total: int
    last_rebalance_partitions_revoked: int
    last_rebalance_partitions_added: int
    leader_assign_total: int
    leader_assign_decode_ms_total: float
    leader_assign_engine_ms_total: float
    leader_assign_encode_ms_total: float
    leader_assign_latency_max: float
    partitions_moved_total: int
    last_assign_partitions_moved: int
    claims_honoured_total: int
    claims_refused_stale_total: int
    claims_refused_contested_total: int
    claims_refused_invalid_total: int
    members_unreadable_total: int
    rack_local_ratio: float
    # -- librdkafka's statistics (confluent-kafka with statistics.interval.ms; else -1/"") ---
    rdkafka_rebalance_cnt: int = -1
    rdkafka_rebalance_age: float = -1.0
    rdkafka_assignment_size: int = -1
    rdkafka_group_up: int = -1
    rdkafka_state: str = ""
    rdkafka_join_state: str = ""
    rdkafka_rebalance_reason: str = ""

    def exports(self, info: MetricInfo) -> bool:
        """Whether exporters report ``info`` for this consumer: always, except librdkafka's
        rows before any statistics arrived (a kafka-python consumer never has them)."""
        return not info.rdkafka or self.rdkafka_rebalance_cnt >= 0

    def as_java_names(self) -> dict[str, float]:
        """``{"rebalance-latency-avg": ..., ...}``: every numeric field under its dashed name
        (the text fields, labels and librdkafka's strings, are left out)."""
        return {
            name.replace("_", "-"): float(value)
            for name, value in vars(self).items()
            if not isinstance(value, str)
        }


@dataclass
class _Callback:
    window: SampledWindow
    partitions: int = 0


@dataclass
class _Leader:
    rounds: int = 0
    decode_s: float = 0.0
    engine_s: float = 0.0
    encode_s: float = 0.0
    window: SampledWindow = field(default_factory=SampledWindow)
    moved: int = 0
    last_moved: int = 0
    honoured: int = 0
    stale: int = 0
    contested: int = 0
    invalid: int = 0
    unreadable: int = 0
    rack_local: int = 0
    rack_eligible: int = 0


class RebalanceMetrics:
    """The recorder one hooked consumer owns (see the module docstring).

    ``assigned``: returns the number of partitions assigned now (Java's
    ``assigned-partitions`` reads the subscription state the same way); ``clock``: monotonic
    seconds (tests pass their own). Invariant: ``_start`` is not ``None`` exactly while a
    rebalance is under way (between its first JoinGroup attempt and its SyncGroup answer).
    """

    def __init__(
        self,
        group_id: str,
        client_id: str = "",
        *,
        assigned: Callable[[], int] | None = None,
        clock: Callable[[], float] = time.monotonic,
        samples: int = DEFAULT_SAMPLES,
        window_s: float = DEFAULT_WINDOW_S,
    ) -> None:
        self.group_id = group_id
        self.client_id = client_id
        self._assigned = assigned
        self._clock = clock
        self._lock = threading.Lock()
        self._start: float | None = None
        self._last_end: float | None = None
        self._latency = SampledWindow(samples, window_s)
        self._latency_total_s = 0.0
        self._rebalances = 0
        self._rebalance_window = SampledWindow(samples, window_s)
        self._failed = SampledWindow(samples, window_s)
        self._failed_total = 0
        self._callbacks = {name: _Callback(SampledWindow(samples, window_s)) for name in CALLBACKS}
        self._generation = -1
        self._last_revoked = 0
        self._last_added = 0
        self._leader = _Leader(window=SampledWindow(samples, window_s))
        self._rdkafka: RdkafkaGroupStats | None = None

    # -- recording (the hooks) --------------------------------------------------------------
    def join_attempt(self) -> None:
        """A JoinGroup is about to be sent: the rebalance starts unless one is under way."""
        with self._lock:
            if self._start is None:
                self._start = self._clock()

    def join_failed(self) -> None:
        """A JoinGroup or SyncGroup attempt failed: one failed rebalance if one is under way."""
        with self._lock:
            if self._start is not None:
                self._failed_total += 1
                self._failed.record(self._clock())

    def join_succeeded(self, generation: int, *, added: int = 0, revoked: int = 0) -> None:
        """The SyncGroup answer arrived: one rebalance, with ``added`` partitions new to this
        member and ``revoked`` taken from it by this assignment (before the callbacks run).
        A rebalance whose start was not seen (librdkafka's cooperative rounds show only their
        end) is counted without a latency sample."""
        with self._lock:
            now = self._clock()
            if self._start is not None:
                latency_s = now - self._start
                self._latency.record(now, latency_s * 1000.0)
                self._latency_total_s += latency_s
            self._rebalance_window.record(now)
            self._rebalances += 1
            self._start = None
            self._last_end = now
            self._generation = generation
            self._last_added = added
            self._last_revoked = revoked

    def callback(self, name: str, partitions: int, seconds: float) -> None:
        """The user's ``on_partitions_<name>`` ran for ``seconds`` on ``partitions``."""
        with self._lock:
            entry = self._callbacks[name]
            entry.window.record(self._clock(), seconds * 1000.0)
            entry.partitions += partitions
            if name == "lost":
                self._generation = -1

    def timed_callback(self, name: str, partitions: int) -> _Timer:
        """``with metrics.timed_callback("revoked", n): listener(...)`` records its time."""
        return _Timer(self, name, partitions)

    def leader_assigned(self, round_: LeaderRound) -> None:
        """This member led a rebalance and computed ``round_``."""
        with self._lock:
            leader = self._leader
            leader.rounds += 1
            leader.decode_s += round_.decode_s
            leader.engine_s += round_.engine_s
            leader.encode_s += round_.encode_s
            steps_s = (
                round_.decode_s
                + round_.racks_s
                + round_.engine_s
                + round_.encode_s
                + round_.describe_s
            )
            total_ms = steps_s * 1000.0
            leader.window.record(self._clock(), total_ms)
            leader.moved += round_.moved
            leader.last_moved = round_.moved
            leader.honoured += round_.honoured
            leader.stale += round_.stale
            leader.contested += round_.contested
            leader.invalid += round_.invalid
            leader.unreadable += round_.unreadable
            leader.rack_local += round_.rack_local
            leader.rack_eligible += round_.rack_eligible

    def rdkafka_statistics(self, stats: RdkafkaGroupStats) -> None:
        """librdkafka emitted its statistics: keep their ``cgrp`` values (the latest wins)."""
        with self._lock:
            self._rdkafka = stats

    # -- reading (anyone) --------------------------------------------------------------------
    def snapshot(self) -> RebalanceMetricsSnapshot:
        """Every metric now (see :class:`RebalanceMetricsSnapshot`)."""
        assigned = self._assigned() if self._assigned is not None else 0
        with self._lock:
            now = self._clock()
            cb = self._callbacks
            leader = self._leader
            rd = self._rdkafka
            ago = -1.0 if self._last_end is None else float(math.floor(now - self._last_end))
            return RebalanceMetricsSnapshot(
                group_id=self.group_id,
                client_id=self.client_id,
                rebalance_latency_avg=self._latency.avg(now),
                rebalance_latency_max=self._latency.max(now),
                rebalance_latency_total=self._latency_total_s * 1000.0,
                rebalance_total=self._rebalances,
                rebalance_rate_per_hour=self._rebalance_window.rate_per_hour(now),
                failed_rebalance_total=self._failed_total,
                failed_rebalance_rate_per_hour=self._failed.rate_per_hour(now),
                last_rebalance_seconds_ago=ago,
                partition_revoked_latency_avg=cb["revoked"].window.avg(now),
                partition_revoked_latency_max=cb["revoked"].window.max(now),
                partition_assigned_latency_avg=cb["assigned"].window.avg(now),
                partition_assigned_latency_max=cb["assigned"].window.max(now),
                partition_lost_latency_avg=cb["lost"].window.avg(now),
                partition_lost_latency_max=cb["lost"].window.max(now),
                assigned_partitions=assigned,
                generation=self._generation,
                partitions_revoked_total=cb["revoked"].partitions,
                partitions_lost_total=cb["lost"].partitions,
                partitions_added_total=cb["assigned"].partitions,
                last_rebalance_partitions_revoked=self._last_revoked,
                last_rebalance_partitions_added=self._last_added,
                leader_assign_total=leader.rounds,
                leader_assign_decode_ms_total=leader.decode_s * 1000.0,
                leader_assign_engine_ms_total=leader.engine_s * 1000.0,
                leader_assign_encode_ms_total=leader.encode_s * 1000.0,
                leader_assign_latency_max=leader.window.max(now),
                partitions_moved_total=leader.moved,
                last_assign_partitions_moved=leader.last_moved,
                claims_honoured_total=leader.honoured,
                claims_refused_stale_total=leader.stale,
                claims_refused_contested_total=leader.contested,
                claims_refused_invalid_total=leader.invalid,
                members_unreadable_total=leader.unreadable,
                rack_local_ratio=(
                    leader.rack_local / leader.rack_eligible if leader.rack_eligible else math.nan
                ),
                **_rdkafka_fields(rd),
            )


def _rdkafka_fields(stats: RdkafkaGroupStats | None) -> dict[str, Any]:
    """The snapshot's ``rdkafka_*`` fields; none (their defaults) before any statistics."""
    if stats is None:
        return {}
    return {
        "rdkafka_rebalance_cnt": stats.rebalance_cnt,
        "rdkafka_rebalance_age": float(stats.rebalance_age_ms),
        "rdkafka_assignment_size": stats.assignment_size,
        "rdkafka_group_up": int(stats.state == "up"),
        "rdkafka_state": stats.state,
        "rdkafka_join_state": stats.join_state,
        "rdkafka_rebalance_reason": stats.rebalance_reason,
    }


class _Timer:
    """The context manager of :meth:`RebalanceMetrics.timed_callback`."""

    def __init__(self, metrics: RebalanceMetrics, name: str, partitions: int) -> None:
        self._metrics = metrics
        self._name = name
        self._partitions = partitions
        self._started = 0.0

    def __enter__(self) -> None:
        self._started = time.perf_counter()

    def __exit__(self, *exc: object) -> None:
        self._metrics.callback(self._name, self._partitions, time.perf_counter() - self._started)


def recorder_of(source: Any) -> RebalanceMetrics:
    """The recorder of ``source``: a :class:`RebalanceMetrics`, or any hooks handle with a
    ``metrics`` attribute (kafka-python's, aiokafka's, the confluent listener bridge)."""
    metrics = source if isinstance(source, RebalanceMetrics) else getattr(source, "metrics", None)
    if not isinstance(metrics, RebalanceMetrics):
        raise TypeError(
            f"expected the handle install_hooks returned (or its .metrics), got {source!r}"
        )
    return metrics
