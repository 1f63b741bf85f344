"""The rebalance metrics recorder: Java's meanings (KAFKA-8609) on a test clock."""

from __future__ import annotations

import math

import pytest

from kafka_sticky_plugin.metrics import (
    METRICS,
    LeaderRound,
    RebalanceMetrics,
    RebalanceMetricsSnapshot,
    SampledWindow,
)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def recorder(clock: Clock, assigned: int = 0) -> RebalanceMetrics:
    return RebalanceMetrics("g", "c", assigned=lambda: assigned, clock=clock)


def test_nothing_recorded_reads_as_java_reports_it() -> None:
    """Before any rebalance: totals 0, windowed avg/max NaN, last-rebalance -1."""
    snap = recorder(Clock()).snapshot()
    assert snap.rebalance_total == 0 and snap.failed_rebalance_total == 0
    assert math.isnan(snap.rebalance_latency_avg) and math.isnan(snap.rebalance_latency_max)
    assert snap.last_rebalance_seconds_ago == -1 and snap.rebalance_rate_per_hour == 0
    assert snap.generation == -1


def test_one_rebalance_is_counted_once_from_the_first_attempt() -> None:
    """Later JoinGroup attempts of the same rebalance do not move its start."""
    clock = Clock()
    m = recorder(clock, assigned=3)
    m.join_attempt()
    clock.now += 0.5
    m.join_attempt()
    clock.now += 0.25
    m.join_succeeded(7, added=3)
    snap = m.snapshot()
    assert snap.rebalance_total == 1
    assert snap.rebalance_latency_avg == pytest.approx(750.0)
    assert snap.rebalance_latency_total == pytest.approx(750.0)
    assert snap.generation == 7 and snap.assigned_partitions == 3
    assert snap.last_rebalance_partitions_added == 3


def test_a_failed_attempt_counts_failed_and_the_rebalance_goes_on() -> None:
    """A failure during a rebalance is one failed rebalance; the latency spans it."""
    clock = Clock()
    m = recorder(clock)
    m.join_attempt()
    clock.now += 1.0
    m.join_failed()
    m.join_attempt()
    clock.now += 1.0
    m.join_succeeded(2)
    snap = m.snapshot()
    assert snap.failed_rebalance_total == 1 and snap.rebalance_total == 1
    assert snap.rebalance_latency_max == pytest.approx(2000.0)


def test_a_failure_outside_a_rebalance_is_not_counted() -> None:
    """Java's maybeRecordRebalanceFailed: nothing under way, nothing counted."""
    m = recorder(Clock())
    m.join_failed()
    assert m.snapshot().failed_rebalance_total == 0


def test_windows_forget_after_two_samples_of_thirty_seconds() -> None:
    """avg/max cover the last 60 s; totals never forget."""
    clock = Clock()
    m = recorder(clock)
    m.join_attempt()
    clock.now += 0.1
    m.join_succeeded(1)
    clock.now += 61.5
    snap = m.snapshot()
    assert math.isnan(snap.rebalance_latency_avg) and snap.rebalance_total == 1
    assert snap.last_rebalance_seconds_ago == 61


def test_rate_per_hour_uses_at_least_one_window() -> None:
    """Two rebalances within a second: 2 per 30 s window = 240 per hour."""
    window = SampledWindow()
    window.record(0.0)
    window.record(1.0)
    assert window.rate_per_hour(1.0) == pytest.approx(240.0)
    assert window.rate_per_hour(45.0) == pytest.approx(2 / 45 * 3600)


def test_callbacks_are_timed_per_kind_and_lost_resets_the_generation() -> None:
    """Lost latency only from the lost callback; a loss forgets the generation."""
    clock = Clock()
    m = recorder(clock)
    m.join_attempt()
    m.join_succeeded(4)
    m.callback("assigned", 2, 0.002)
    m.callback("lost", 2, 0.004)
    snap = m.snapshot()
    assert snap.partition_assigned_latency_max == pytest.approx(2.0)
    assert snap.partition_lost_latency_avg == pytest.approx(4.0)
    assert math.isnan(snap.partition_revoked_latency_avg)
    assert snap.partitions_lost_total == 2 and snap.partitions_added_total == 2
    assert snap.generation == -1


def test_java_names_cover_every_documented_metric() -> None:
    """The snapshot's fields are exactly the table's rows, dashed names included."""
    snap = recorder(Clock()).snapshot()
    names = snap.as_java_names()
    assert set(names) == {info.java_name for info in METRICS}
    assert "rebalance-latency-avg" in names and "failed-rebalance-rate-per-hour" in names
    assert isinstance(snap, RebalanceMetricsSnapshot)


def test_the_docs_table_lists_every_metric_as_defined() -> None:
    """docs/metrics.md's table has one row per metric, with the names of the definition."""
    from pathlib import Path

    page = (Path(__file__).resolve().parents[1] / "docs" / "metrics.md").read_text()
    rows = [line for line in page.splitlines() if line.startswith("| `")]
    assert len(rows) == len(METRICS)
    for row, info in zip(rows, METRICS, strict=True):
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        assert cells[0] == f"`{info.java_name}`" and cells[2] == info.kind
        assert cells[4] == f"`{info.prometheus}`" and cells[5] == f"`{info.otel}`"


def test_leader_latency_includes_describing_the_round() -> None:
    """``leader-assign-latency-max`` is the whole hooked call: decode, reading the replica
    racks from the metadata, engine, encode and the metrics' own description of the round;
    the rack-local ratio is local over eligible."""
    counts = dict.fromkeys(
        ("partitions", "claims", "honoured", "moved", "stale", "contested", "invalid"), 0
    )
    round_ = LeaderRound(
        decode_s=0.001,
        engine_s=0.002,
        encode_s=0.003,
        describe_s=0.004,
        racks_s=0.005,
        members=2,
        unreadable=0,
        rack_local=1,
        rack_eligible=2,
        **counts,
    )
    m = recorder(Clock())
    m.leader_assigned(round_)
    snap = m.snapshot()
    assert snap.leader_assign_latency_max == pytest.approx(15.0)
    assert snap.leader_assign_encode_ms_total == pytest.approx(3.0)
    assert snap.rack_local_ratio == pytest.approx(0.5)
