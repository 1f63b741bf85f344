"""Cut (scenario, strategy) rows into Spark tasks of similar cost.

Scenario costs span six orders of magnitude (3 members x 8 partitions up to 1,000 members
x 100,000 partitions), so rows are packed greedily, largest first, into the bucket with the
least cost so far (LPT scheduling), and buckets are returned largest first so that the
longest tasks start first. Invariant: every row lands in exactly one bucket.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["row_cost", "split_tasks"]

#: Seconds of simulation per member x partition x event for our eager engine (measured on
#: this project's 2-core machine at 1,000 members x 100,000 partitions, checks included).
_SECONDS_PER_UNIT = 6e-9
#: Fixed seconds per event (small groups: Python overhead dominates).
_SECONDS_PER_EVENT = 2e-3
#: Cost relative to our eager engine (measured: kafka-python's sticky assignors take about
#: 100x our engine's time on the same shape; cooperative runs two or more rounds).
_STRATEGY_WEIGHT = {
    "sticky": 1.0,
    "cooperative-sticky": 1.7,
    "kafka-python-range": 0.8,
    "kafka-python-roundrobin": 0.9,
    "kafka-python-sticky": 100.0,
    "kafka-python-cooperative-sticky": 150.0,
}


def row_cost(row: Mapping[str, Any]) -> float:
    """Estimated seconds for one row; a baseline above its size cap is not run (~0 s), one
    with a time cap runs at most about that long."""
    events = float(row["events"])
    size = float(row["size"])
    size_cap = row.get("size_cap")
    if size_cap is not None and size_cap == size_cap and size > float(size_cap):
        return _SECONDS_PER_EVENT
    weight = _STRATEGY_WEIGHT.get(str(row["strategy"]), 1.0)
    seconds = events * (_SECONDS_PER_EVENT + size * _SECONDS_PER_UNIT * weight)
    cap = row.get("time_cap_s")
    if cap is not None and cap == cap:
        seconds = min(seconds, 1.5 * float(cap))
    return seconds


def split_tasks(rows: Sequence[Mapping[str, Any]], tasks: int) -> list[list[Mapping[str, Any]]]:
    """``rows`` packed into at most ``tasks`` non-empty buckets, costliest bucket first."""
    tasks = max(1, min(tasks, len(rows)))
    heap: list[tuple[float, int]] = [(0.0, i) for i in range(tasks)]
    buckets: list[list[Mapping[str, Any]]] = [[] for _ in range(tasks)]
    totals = [0.0] * tasks
    for row in sorted(rows, key=row_cost, reverse=True):
        total, index = heapq.heappop(heap)
        buckets[index].append(row)
        totals[index] = total + row_cost(row)
        heapq.heappush(heap, (totals[index], index))
    order = sorted(range(tasks), key=lambda i: -totals[i])
    return [buckets[i] for i in order if buckets[i]]
