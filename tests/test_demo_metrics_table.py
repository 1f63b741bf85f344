"""The demo's metrics table: snapshots travel through the harness's events (threads and the
child-process pipe) and are summed per strategy as its docstring says."""

from __future__ import annotations

import io
import math

from kafka_sticky_plugin.demo.metrics_table import aggregate, format_metrics_table
from kafka_sticky_plugin.groups.events import EventLog
from kafka_sticky_plugin.groups.member_config import MemberConfig
from kafka_sticky_plugin.groups.member_process import ProcessMember, _JsonLinesSink
from kafka_sticky_plugin.groups.metrics_events import (
    MetricsReporter,
    MetricsSample,
    metrics_samples,
)
from kafka_sticky_plugin.metrics import RebalanceMetrics

CONFIG = MemberConfig(bootstrap="127.0.0.1:9", group_id="g", topics=("t",), member="m0")


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class _Handle:
    """What the reporter needs of an ``install_hooks`` handle: ``.metrics``."""

    def __init__(self, metrics: object) -> None:
        self.metrics = metrics


def _two_rebalances(clock: _Clock) -> RebalanceMetrics:
    """A recorder that saw a 2 s rebalance, one failed attempt, then a 0.5 s rebalance."""
    metrics = RebalanceMetrics("g", "c", clock=clock)
    metrics.join_attempt()
    clock.now += 2.0
    metrics.join_succeeded(1, added=3)
    metrics.callback("revoked", 3, 0.001)
    metrics.join_attempt()
    metrics.join_failed()
    clock.now += 0.5
    metrics.join_succeeded(2, added=1)
    return metrics


def _sample(key: str, **values: float) -> MetricsSample:
    return MetricsSample(0.0, key, {name.replace("_", "-"): v for name, v in values.items()})


def test_a_snapshot_crosses_the_child_process_pipe_with_its_values() -> None:
    """Child side writes JSON lines, the parent's reader turns them back into events."""
    clock = _Clock()
    stream = io.StringIO()
    reporter = MetricsReporter(CONFIG, _JsonLinesSink(stream))
    reporter.attach(_Handle(_two_rebalances(clock)))
    reporter.final()
    log = EventLog()
    parent = ProcessMember(CONFIG, log)
    for line in stream.getvalue().splitlines():
        parent._handle(line)
    (sample,) = metrics_samples(log.events())
    assert sample.key == "m0#0"
    assert sample.values["rebalance-total"] == 2
    assert sample.values["failed-rebalance-total"] == 1
    assert sample.values["rebalance-latency-max"] == 2000.0
    assert sample.values["partitions-revoked-total"] == 3
    assert math.isnan(sample.values["partition-lost-latency-max"])


def test_the_reporter_waits_its_interval_and_reports_nothing_without_hooks() -> None:
    log = EventLog()
    silent = MetricsReporter(CONFIG, log)
    silent.final()  # no handle attached: a member without hooks has no metrics
    reporter = MetricsReporter(CONFIG, log)
    reporter.attach(_Handle(RebalanceMetrics("g")))
    start = reporter._last
    reporter.tick(start + reporter.interval_s / 2)
    assert metrics_samples(log.events()) == []
    reporter.tick(start + reporter.interval_s)
    reporter.tick(start + reporter.interval_s * 1.5)
    assert len(metrics_samples(log.events())) == 1


def test_a_failing_snapshot_is_skipped_and_the_member_goes_on() -> None:
    class Broken:
        def snapshot(self) -> object:
            raise RuntimeError("closed")

    log = EventLog()
    reporter = MetricsReporter(CONFIG, log)
    reporter.attach(_Handle(Broken()))
    reporter.final()
    assert log.events() == []


def test_counters_come_from_each_incarnations_latest_sample_and_are_summed() -> None:
    """Two samples of m0#0 (counters grew), one of m0#1: totals are 5 + 2, not 3 + 5 + 2."""
    samples = [
        _sample("m0#0", rebalance_total=3, rebalance_latency_total=3000, rebalance_latency_max=50),
        _sample("m0#0", rebalance_total=5, rebalance_latency_total=4000, rebalance_latency_max=9),
        _sample(
            "m0#1",
            rebalance_total=2,
            rebalance_latency_total=1000,
            rebalance_latency_max=math.nan,
            failed_rebalance_total=1,
            partitions_revoked_total=4,
            partitions_moved_total=6,
            leader_assign_total=2,
            leader_assign_decode_ms_total=1.0,
            leader_assign_engine_ms_total=2.0,
            leader_assign_encode_ms_total=1.0,
            leader_assign_latency_max=2.5,
        ),
    ]
    row = aggregate("sticky", reversed(samples))  # order does not matter
    assert row.incarnations == 2
    assert row.rebalances == 7
    assert row.failed == 1
    assert row.latency_avg_ms == 5000 / 7
    assert row.latency_max_ms == 50  # the largest any sample saw, not the latest
    assert (row.revoked, row.lost, row.moved) == (4, 0, 6)
    assert row.assigns == 2
    assert row.assign_avg_ms == 2.0
    assert row.assign_max_ms == 2.5


def test_nothing_measured_prints_dashes_and_zero_counts() -> None:
    row = aggregate("range", [])
    assert (row.incarnations, row.rebalances, row.assigns) == (0, 0, 0)
    assert math.isnan(row.latency_avg_ms) and math.isnan(row.assign_max_ms)
    table = format_metrics_table([row])
    header, _separator, line = table.splitlines()
    assert header.split("|")[3].strip() == "rebalances"
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[0] == "range"
    assert cells[4] == "-" and cells[-1] == "-"
    assert cells[2] == "0"


def test_the_table_has_one_line_per_strategy_with_its_figures() -> None:
    clock = _Clock()
    log = EventLog()
    reporter = MetricsReporter(CONFIG, log)
    reporter.attach(_Handle(_two_rebalances(clock)))
    reporter.final()
    rows = [aggregate(name, metrics_samples(log.events())) for name in ("a", "b")]
    lines = format_metrics_table(rows).splitlines()
    assert len(lines) == 4
    cells = [c.strip() for c in lines[2].strip("|").split("|")]
    assert cells[:6] == ["a", "1", "2", "1", "1250", "2000"]
