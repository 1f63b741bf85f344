"""Rebalance metrics as OpenTelemetry observable instruments (extra ``opentelemetry``).

::

    from kafka_sticky_plugin.metrics.opentelemetry import enable_opentelemetry

    enable_opentelemetry(install_hooks(consumer))  # the one line (global MeterProvider)

Instrument names are :data:`~kafka_sticky_plugin.metrics.names.METRICS`' OpenTelemetry
column (``kafka.consumer.*``; durations in seconds, unit ``s``): counters are observable
counters, the rest observable gauges. Every point carries the messaging semantic
conventions' attributes ``messaging.system`` (``kafka``), ``messaging.consumer.group.name``
and ``messaging.client.id``; nothing of higher cardinality. Windowed values with no data
(NaN) are not reported.

Invariant: a meter provider gets the instruments once (the shared state is kept on the
provider object); each call adds one consumer's recorder, read through a weak reference at
every collection.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable, Iterable
from typing import Any

from ..extras import missing
from .names import METRICS, MetricInfo
from .recorder import RebalanceMetrics, recorder_of

try:
    from opentelemetry import metrics as otel_metrics
    from opentelemetry.metrics import CallbackOptions, MeterProvider, Observation
except ImportError as exc:  # pragma: no cover - exercised by tests/test_metrics_exporters.py
    raise missing(exc, "kafka_sticky_plugin.metrics.opentelemetry", "opentelemetry") from exc

__all__ = ["enable_opentelemetry"]

_ATTRIBUTE = "_kafka_sticky_plugin_rebalance_recorders"
_SCOPE = "kafka_sticky_plugin"


def _callback(
    info: MetricInfo, recorders: list[weakref.ref[RebalanceMetrics]]
) -> Callable[[CallbackOptions], Iterable[Observation]]:
    def observe(options: CallbackOptions) -> Iterable[Observation]:
        out: list[Observation] = []
        for ref in recorders:
            metrics = ref()
            if metrics is None:
                continue
            snap = metrics.snapshot()
            if not snap.exports(info):
                continue
            value = float(getattr(snap, info.field)) * info.scale
            if math.isnan(value):
                continue
            attributes = {
                "messaging.system": "kafka",
                "messaging.consumer.group.name": snap.group_id,
                "messaging.client.id": snap.client_id,
            }
            out.append(Observation(value, attributes))
        return out

    return observe


def enable_opentelemetry(source: Any, meter_provider: MeterProvider | None = None) -> None:
    """Report the rebalance metrics of ``source`` (the handle ``install_hooks`` returns, or
    a :class:`RebalanceMetrics`) through ``meter_provider`` (default: the global one)."""
    provider = otel_metrics.get_meter_provider() if meter_provider is None else meter_provider
    metrics = recorder_of(source)
    recorders: list[weakref.ref[RebalanceMetrics]] | None = getattr(provider, _ATTRIBUTE, None)
    if recorders is None:
        recorders = []
        setattr(provider, _ATTRIBUTE, recorders)
        meter = provider.get_meter(_SCOPE)
        for info in METRICS:
            create = (
                meter.create_observable_counter
                if info.kind == "counter"
                else meter.create_observable_gauge
            )
            create(
                info.otel,
                callbacks=[_callback(info, recorders)],
                unit=info.export_unit or "{" + info.unit + "}",
                description=info.meaning,
            )
    recorders[:] = [ref for ref in recorders if ref() is not None]
    if not any(ref() is metrics for ref in recorders):
        recorders.append(weakref.ref(metrics))
