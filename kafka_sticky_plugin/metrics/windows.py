"""Java's sampled statistics (``org.apache.kafka.common.metrics.stats``) on explicit times.

Pure: every call takes ``now`` (seconds on one monotonic clock); nothing reads a clock.

:class:`SampledWindow` keeps the values recorded within the last ``samples * window_s``
seconds, as Java's ``SampledStat`` keeps ``metrics.num.samples`` (default 2) windows of
``metrics.sample.window.ms`` (default 30 000 ms) each. Java starts a sample window at its first
record and drops a window once it is older than all the windows together; here each value is
dropped individually once it is that old, which gives the same answers for the
few-events-per-minute rates of rebalances (a simplification stated once, here).

- :meth:`SampledWindow.avg` and :meth:`SampledWindow.max`: ``nan`` when no value is retained
  (Java's ``Avg`` and ``Max`` report NaN for an empty window);
- :meth:`SampledWindow.rate_per_hour`: retained count divided by the elapsed window, which is
  measured from the oldest retained value and is never shorter than ``(samples - 1) *
  window_s`` (Java's ``Rate.windowSize``), converted to per hour; ``0.0`` when empty.
"""

from __future__ import annotations

import math
from collections import deque

__all__ = ["DEFAULT_SAMPLES", "DEFAULT_WINDOW_S", "SampledWindow"]

#: Java's ``metrics.num.samples`` default.
DEFAULT_SAMPLES = 2
#: Java's ``metrics.sample.window.ms`` default, in seconds.
DEFAULT_WINDOW_S = 30.0


class SampledWindow:
    """Values recorded at known times, read as Java's windowed avg, max and hourly rate.

    Invariant: ``_values`` holds ``(time, value)`` pairs in recording order (times never
    decrease: callers record on one monotonic clock); values older than the horizon are
    dropped on every record and every read.
    """

    def __init__(self, samples: int = DEFAULT_SAMPLES, window_s: float = DEFAULT_WINDOW_S) -> None:
        if samples < 1 or window_s <= 0:
            raise ValueError(f"need samples >= 1 and window_s > 0, got {samples}, {window_s}")
        self._samples = samples
        self._window_s = window_s
        self._values: deque[tuple[float, float]] = deque()

    @property
    def horizon_s(self) -> float:
        """How long a value counts: ``samples * window_s``."""
        return self._samples * self._window_s

    def record(self, now: float, value: float = 1.0) -> None:
        """Add ``value`` recorded at ``now``."""
        self._purge(now)
        self._values.append((now, value))

    def _purge(self, now: float) -> None:
        oldest = now - self.horizon_s
        values = self._values
        while values and values[0][0] <= oldest:
            values.popleft()

    def avg(self, now: float) -> float:
        """The mean of the retained values; ``nan`` when none."""
        self._purge(now)
        if not self._values:
            return math.nan
        return sum(v for _, v in self._values) / len(self._values)

    def max(self, now: float) -> float:
        """The largest retained value; ``nan`` when none."""
        self._purge(now)
        if not self._values:
            return math.nan
        return max(v for _, v in self._values)

    def rate_per_hour(self, now: float) -> float:
        """Retained count per hour over the elapsed window (see the module docstring)."""
        self._purge(now)
        if not self._values:
            return 0.0
        elapsed = max(now - self._values[0][0], (self._samples - 1) * self._window_s)
        return len(self._values) / elapsed * 3600.0 if elapsed > 0 else 0.0
