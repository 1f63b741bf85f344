"""Rebalance metrics for Prometheus (extra ``prometheus``): one collector per registry.

::

    from prometheus_client import start_http_server
    from kafka_sticky_plugin.metrics.prometheus import enable_prometheus

    enable_prometheus(install_hooks(consumer))  # the one line; then serve the registry
    start_http_server(9464, addr="127.0.0.1")

Names, units and types are :data:`~kafka_sticky_plugin.metrics.names.METRICS`' Prometheus
column (seconds, counters ending in ``_total``); every sample carries the labels ``group``
and ``client_id`` and nothing else (no member ids: their cardinality grows with every
restart). NaN windows (no rebalance in the last minute) are exported as NaN, as Java's JMX
reporter does.

Invariant: a registry holds at most one :class:`RebalanceCollector` (kept on the registry
object itself), which reads every enabled consumer's recorder at each scrape through a weak
reference: a consumer that was closed and collected simply stops being reported.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from typing import Any

from ..extras import missing
from .names import METRICS
from .recorder import RebalanceMetrics, recorder_of

try:
    from prometheus_client import REGISTRY, CollectorRegistry
    from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
    from prometheus_client.registry import Collector
except ImportError as exc:  # pragma: no cover - exercised by tests/test_metrics_exporters.py
    raise missing(exc, "kafka_sticky_plugin.metrics.prometheus", "prometheus") from exc

__all__ = ["RebalanceCollector", "enable_prometheus"]

_ATTRIBUTE = "_kafka_sticky_plugin_rebalance_collector"
_LABELS = ("group", "client_id")


class RebalanceCollector(Collector):
    """Reports every added recorder at each scrape (see the module docstring)."""

    def __init__(self) -> None:
        self._recorders: list[weakref.ref[RebalanceMetrics]] = []

    def add(self, metrics: RebalanceMetrics) -> None:
        """Report ``metrics`` from now on (adding one twice reports it once)."""
        live = [ref for ref in self._recorders if ref() is not None]
        if not any(ref() is metrics for ref in live):
            live.append(weakref.ref(metrics))
        self._recorders = live

    def describe(self) -> list[Metric]:
        """The families' names, for the registry's duplicate check (no samples)."""
        return list(self._families().values())

    def collect(self) -> Iterator[Metric]:
        families = self._families()
        for ref in self._recorders:
            metrics = ref()
            if metrics is None:
                continue
            snap = metrics.snapshot()
            labels = [snap.group_id, snap.client_id]
            for info in METRICS:
                if not snap.exports(info):
                    continue
                value = float(getattr(snap, info.field)) * info.scale
                families[info.prometheus].add_metric(labels, value)
        yield from families.values()

    @staticmethod
    def _families() -> dict[str, CounterMetricFamily | GaugeMetricFamily]:
        out: dict[str, CounterMetricFamily | GaugeMetricFamily] = {}
        for info in METRICS:
            text = f"{info.meaning} ({info.export_unit or info.unit})"
            if info.kind == "counter":
                out[info.prometheus] = CounterMetricFamily(info.prometheus, text, labels=_LABELS)
            else:
                out[info.prometheus] = GaugeMetricFamily(info.prometheus, text, labels=_LABELS)
        return out


def enable_prometheus(source: Any, registry: CollectorRegistry | None = None) -> RebalanceCollector:
    """Export the rebalance metrics of ``source`` (the handle ``install_hooks`` returns, or a
    :class:`RebalanceMetrics`) through ``registry`` (default: prometheus_client's global
    one). Returns the registry's collector; calling it again for another consumer adds that
    consumer to the same collector."""
    chosen = REGISTRY if registry is None else registry
    collector = getattr(chosen, _ATTRIBUTE, None)
    if not isinstance(collector, RebalanceCollector):
        collector = RebalanceCollector()
        chosen.register(collector)
        setattr(chosen, _ATTRIBUTE, collector)
    collector.add(recorder_of(source))
    return collector
