"""Run a batch of (scenario, strategy) rows: the work one Spark task does, also usable alone.

Input rows carry ``scenario_json``, ``strategy`` and the caps; output rows are the
:class:`~kafka_sticky_plugin.simulate.model.EventResult` fields plus the scenario's family,
shape and initial size, and what the run cost the worker process (wall seconds for the whole
scenario, the process id and its peak resident memory). Column order and types are
:data:`RESULT_COLUMNS`, which the Spark schema is built from.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict
from typing import Any

from .model import Scenario
from .simulator import simulate
from .strategies import get_strategy

__all__ = ["RESULT_COLUMNS", "run_batch", "run_rows"]

#: Output columns and their types (``str``, ``int``, ``float``, ``bool``).
RESULT_COLUMNS: tuple[tuple[str, str], ...] = (
    ("scenario_id", "str"),
    ("strategy", "str"),
    ("family", "str"),
    ("shape", "str"),
    ("group_size", "int"),
    ("group_partitions", "int"),
    ("event_index", "int"),
    ("event_kind", "str"),
    ("members", "int"),
    ("partitions", "int"),
    ("rebalances", "int"),
    ("rounds", "int"),
    ("moved", "int"),
    ("fresh_assigned", "int"),
    ("revoked", "int"),
    ("paused_partition_rounds", "int"),
    ("orphaned_during_timeout", "int"),
    ("max_min_load", "int"),
    ("topic_spread", "int"),
    ("compute_s", "float"),
    ("max_compute_s", "float"),
    ("violations", "int"),
    ("first_violation", "str"),
    ("error", "str"),
    ("converged", "bool"),
    ("status", "str"),
    ("scenario_wall_s", "float"),
    ("worker_pid", "int"),
    ("worker_max_rss_mb", "float"),
)


def _max_rss_mb() -> float:
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / (1024.0 * 1024.0) if sys.platform == "darwin" else rss / 1024.0


def run_rows(rows: Iterable[Mapping[str, Any]]) -> Iterator[dict[str, Any]]:
    """Simulate each input row; yield one output row per event."""
    for row in rows:
        scenario = Scenario.from_json(json.loads(str(row["scenario_json"])))
        strategy = get_strategy(str(row["strategy"]))
        cap = row.get("time_cap_s")
        size_cap = row.get("size_cap")
        start = time.perf_counter()
        results = simulate(
            scenario,
            strategy,
            time_cap_s=None if cap is None or cap != cap else float(cap),  # NaN means none
            size_cap=None if size_cap is None or size_cap != size_cap else float(size_cap),
        )
        wall = time.perf_counter() - start
        rss = _max_rss_mb()
        for result in results:
            out = asdict(result)
            out.update(
                family=scenario.family,
                shape=scenario.shape,
                group_size=scenario.members,
                group_partitions=scenario.partitions,
                scenario_wall_s=wall,
                worker_pid=os.getpid(),
                worker_max_rss_mb=rss,
            )
            yield {name: out[name] for name, _ in RESULT_COLUMNS}


def run_batch(frames: Iterable[Any]) -> Iterator[Any]:
    """The ``mapInPandas`` function: pandas frames of input rows in, result frames out."""
    import pandas as pd

    columns = [name for name, _ in RESULT_COLUMNS]
    for frame in frames:
        out = list(run_rows(frame.to_dict("records")))
        yield pd.DataFrame(out, columns=columns)
