"""Rebalance metrics with the Java consumer's names, for every consumer the hooks run on.

Read them as plain values from the hooks' handle (``install_hooks(consumer).metrics.snapshot()``),
or export them: :func:`kafka_sticky_plugin.metrics.prometheus.enable_prometheus` and
:func:`kafka_sticky_plugin.metrics.opentelemetry.enable_opentelemetry` (optional extras
``prometheus`` and ``opentelemetry``). The table of names is :data:`.names.METRICS`.
"""

from __future__ import annotations

from .leader_round import LeaderRound, leader_round
from .names import METRICS, MetricInfo
from .recorder import CALLBACKS, RebalanceMetrics, RebalanceMetricsSnapshot
from .windows import SampledWindow

__all__ = [
    "CALLBACKS",
    "METRICS",
    "LeaderRound",
    "MetricInfo",
    "RebalanceMetrics",
    "RebalanceMetricsSnapshot",
    "SampledWindow",
    "leader_round",
]
