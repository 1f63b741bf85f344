"""A member's rebalance metrics, carried through the harness's events as plain values.

A hooked member (its ``install_hooks`` handle has ``.metrics``) reports a ``metrics`` event:
every :attr:`MetricsReporter.interval_s` seconds from its loop and once more when its consumer
has closed (before its ``stopped`` event). The event's ``detail`` is the snapshot's
:meth:`~kafka_sticky_plugin.metrics.RebalanceMetricsSnapshot.as_java_names` as JSON (Java's
dashed names; ``NaN`` where the window is empty), so it crosses the child-process pipe of
:mod:`.member_process` like every other event. :func:`metrics_samples` reads them back.

Why periodically too: the ``*-max`` and ``*-avg`` values are windowed (Java keeps each value
at least 30 s, :mod:`kafka_sticky_plugin.metrics.windows`); a snapshot every 10 s sees every
value while it is retained, so the largest ``*-max`` over an incarnation's samples is its
true maximum. ``*-total`` values only grow: an incarnation's latest sample holds them.

Invariant: reporting never raises into the member loop (a snapshot that fails is skipped:
metrics are an observation, not part of what the member does).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .events import OwnershipEvent
from .member_config import EventSink, MemberConfig, member_event

__all__ = ["METRICS_KIND", "MetricsReporter", "MetricsSample", "metrics_samples"]

#: The event kind that carries a snapshot.
METRICS_KIND = "metrics"


@dataclass(frozen=True)
class MetricsSample:
    """One snapshot of one member incarnation (``key``: ``member#incarnation``)."""

    t: float
    key: str
    values: Mapping[str, float]


class MetricsReporter:
    """Reports ``handle``'s metrics snapshots for one member incarnation (module docstring).

    ``attach`` the handle ``install_hooks`` returned; until then (and for a member without
    hooks) :meth:`tick` and :meth:`final` report nothing.
    """

    interval_s = 10.0

    def __init__(self, config: MemberConfig, sink: EventSink) -> None:
        self._config = config
        self._sink = sink
        self._metrics: Any = None
        self._last = time.monotonic()

    def attach(self, handle: object) -> None:
        """Read snapshots from ``handle.metrics`` from now on."""
        self._metrics = getattr(handle, "metrics", None)

    def tick(self, now: float) -> None:
        """Report a snapshot if :attr:`interval_s` has passed since the last one."""
        if now - self._last >= self.interval_s:
            self._last = now
            self._report()

    def final(self) -> None:
        """Report the last snapshot (after the consumer closed)."""
        self._report()

    def _report(self) -> None:
        if self._metrics is None:
            return
        try:
            values = self._metrics.snapshot().as_java_names()
        except Exception:  # an observation only: the member goes on (module invariant)
            return
        self._sink.add(member_event(self._config, METRICS_KIND, detail=json.dumps(values)))


def metrics_samples(events: Iterable[OwnershipEvent]) -> list[MetricsSample]:
    """Every ``metrics`` event of ``events`` as a :class:`MetricsSample`, in event order
    (a malformed one, which no member writes, raises ``ValueError``)."""
    found: list[MetricsSample] = []
    for event in events:
        if event.kind != METRICS_KIND:
            continue
        raw = json.loads(event.detail)
        if not isinstance(raw, dict):
            raise ValueError(f"metrics event of {event.key} is not an object: {event.detail!r}")
        values = {str(k): float(v) if v is not None else math.nan for k, v in raw.items()}
        found.append(MetricsSample(event.t, event.key, values))
    return found
