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

from .strategies import is_baseline, is_cooperative

__all__ = ["row_cost", "split_tasks"]

#: Simulated seconds per protocol round of our eager engine, checks included, measured on this
#: project's 2-core machine: about ``1e-3 + 3e-6 * partitions + 3e-9 * members * partitions``
#: (0.6 s at 1,000 members x 100,000 partitions, 0.012 s at 100 x 5,000), doubled for a
#: machine shared with other work (as measured during a full default-grid run).
_ROUND_FIXED_S = 6e-4
_ROUND_PER_PARTITION_S = 6e-6
_ROUND_PER_MEMBER_PARTITION_S = 6e-9
#: kafka-python's sticky assignors: about 1.7e-6 s per member x partition per round, doubled.
_KAFKA_PYTHON_STICKY_S = 3.4e-6
#: Rounds per event (rolling restarts and pauses run several rebalances; cooperative ones
#: run two or more rounds each).
_ROUNDS_PER_EVENT = {"eager": 1.8, "cooperative": 3.5}


def row_cost(row: Mapping[str, Any]) -> float:
    """Estimated seconds for one row; a baseline above its size cap is not run (~0 s), one
    with a time cap runs at most about that long."""
    strategy = str(row["strategy"])
    events = float(row["events"])
    size = float(row["size"])
    partitions = float(row["partitions"])
    size_cap = row.get("size_cap")
    if size_cap is not None and size_cap == size_cap and size > float(size_cap):
        return _ROUND_FIXED_S * events
    per_round = (
        _ROUND_FIXED_S + _ROUND_PER_PARTITION_S * partitions + _ROUND_PER_MEMBER_PARTITION_S * size
    )
    if is_baseline(strategy) and strategy.endswith("sticky"):
        per_round += _KAFKA_PYTHON_STICKY_S * size
    rounds = _ROUNDS_PER_EVENT["cooperative" if is_cooperative(strategy) else "eager"]
    seconds = events * rounds * per_round
    cap = row.get("time_cap_s")
    if cap is not None and cap == cap:
        seconds = min(seconds, float(cap) + per_round)
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
