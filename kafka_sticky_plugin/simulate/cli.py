"""``python -m kafka_sticky_plugin simulate GRID --out DIR [--master URL]``.

Loads the grid, runs the Spark job (or, with ``--no-spark``, the same batches in this
process), aggregates the Parquet results into ``DIR/report.md`` and ``DIR/charts/*.png``, and
prints timing and memory. Exit status: 0 when our strategies broke no invariant, 1 when
they did, 2 on bad arguments or input, 4 when the ``simulate`` extra is missing.
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from ..command_line import command_parser
from ..errors import ConfigurationError, MissingExtraError, StickyPluginError
from ..extras import EXIT_MISSING_EXTRA, require
from .grid import Grid, load_grid, scenario_rows
from .strategies import STRATEGY_NAMES, check_strategy_names, is_baseline, is_kip848

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = command_parser(
        "simulate",
        "Simulate rebalances of a grid of consumer groups under several strategies.",
    )
    parser.add_argument("grid", type=Path, help="scenario grid (.yaml, .yml or .json)")
    parser.add_argument("--out", type=Path, required=True, help="output directory")
    parser.add_argument("--master", default="local[*]", help="Spark master URL (default: local[*])")
    parser.add_argument("--tasks", type=int, default=None, help="Spark tasks (default: auto)")
    parser.add_argument(
        "--executor-memory", default="2g", help="spark.executor.memory and spark.driver.memory"
    )
    parser.add_argument(
        "--strategies",
        default=None,
        help=f"comma-separated subset of {','.join(STRATEGY_NAMES)} (default: the grid's)",
    )
    parser.add_argument(
        "--no-spark",
        action="store_true",
        help="run the simulator in this process (no JVM); same output",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser


def _run_local(grid: Grid, out_dir: Path, progress: bool) -> dict[str, Any]:
    import pandas as pd

    from .batch import RESULT_COLUMNS, run_rows
    from .progress import ProgressBar

    rows = scenario_rows(grid)
    bar = ProgressBar("simulating", unit="scenario runs", enabled=progress)
    out: list[dict[str, Any]] = []
    start = time.perf_counter()
    for index, row in enumerate(rows):
        out.extend(run_rows([row]))
        bar.update(index + 1, len(rows))
    bar.finish(len(rows))
    frame = pd.DataFrame(out, columns=[name for name, _ in RESULT_COLUMNS])
    results = out_dir / "results"
    if results.exists():
        shutil.rmtree(results)  # to_parquet adds files to a partitioned directory
    frame.to_parquet(results, partition_cols=["strategy"])
    return {
        "engine": "in-process (no Spark)",
        "simulate (s)": round(time.perf_counter() - start, 1),
    }


def _run_spark(grid: Grid, out_dir: Path, args: argparse.Namespace) -> dict[str, Any]:
    from .spark_job import run_job

    stats = run_job(
        grid,
        out_dir,
        master=args.master,
        tasks=args.tasks,
        executor_memory=args.executor_memory,
        progress=not args.no_progress,
    )
    facts: dict[str, Any] = {
        "engine": f"Spark {stats.spark_version} on {stats.master}",
        "tasks": stats.tasks,
        "default parallelism": stats.default_parallelism,
        "session start (s)": round(stats.session_start_s, 1),
        "simulate and write (s)": round(stats.simulate_s, 1),
        "memory per executor (JVM heap)": (
            f"{stats.driver_memory} (local mode: the executor runs in the driver JVM)"
            if stats.master.startswith("local")
            else stats.executor_memory
        ),
        "spark.executor.memory": stats.executor_memory,
        "spark.driver.memory": stats.driver_memory,
    }
    for executor, memory in stats.jvm_executors.items():
        facts[f"JVM storage memory, block manager {executor}"] = memory
    return facts


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    started = time.perf_counter()
    try:
        grid = load_grid(args.grid)
        if args.strategies:
            chosen = tuple(s.strip() for s in args.strategies.split(",") if s.strip())
            try:
                check_strategy_names(chosen)
            except ConfigurationError as exc:
                print(f"--strategies: {exc}", file=sys.stderr)
                return 2
            grid = dataclasses.replace(grid, strategies=chosen)
    except (OSError, StickyPluginError, ValueError) as exc:
        print(f"cannot load grid {args.grid}: {exc}", file=sys.stderr)
        return EXIT_MISSING_EXTRA if isinstance(exc, MissingExtraError) else 2
    needed = ["pandas", "pyarrow", "matplotlib"] + ([] if args.no_spark else ["pyspark"])
    if any(is_baseline(name) and not is_kip848(name) for name in grid.strategies):
        needed.append("kafka")  # kafka-python's assignors (the KIP-848 models need nothing)
    try:
        require(needed, "simulate", "the simulation")
    except StickyPluginError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_MISSING_EXTRA
    out_dir: Path = args.out
    out_dir.mkdir(parents=True, exist_ok=True)
    print(
        f"grid {grid.name}: {len(grid.scenarios)} scenarios x {len(grid.strategies)} strategies",
        file=sys.stderr,
    )
    if args.no_spark:
        facts = _run_local(grid, out_dir, not args.no_progress)
    else:
        facts = _run_spark(grid, out_dir, args)

    from .report import load_results, write_report

    frame = load_results(out_dir / "results")
    workers = frame.groupby("worker_pid")["worker_max_rss_mb"].max()
    facts["Python workers"] = len(workers)
    facts["memory per Python worker (peak RSS, MiB, max)"] = round(float(workers.max()), 1)
    per_strategy = frame.drop_duplicates(["scenario_id", "strategy"]).groupby("strategy")[
        "scenario_wall_s"
    ]
    for strategy, seconds in per_strategy.sum().items():
        facts[f"simulation time, {strategy} (s, summed over scenarios)"] = round(seconds, 1)
    command = [
        "python -m kafka_sticky_plugin simulate",
        *(argv if argv is not None else sys.argv[2:]),
    ]
    facts["command"] = f"`{' '.join(command)}`"
    facts["grid"] = str(args.grid)
    facts["total wall time (s)"] = round(time.perf_counter() - started, 1)
    report = write_report(frame, out_dir, facts, title=f"Rebalance simulation: {grid.name}")
    for key, value in facts.items():
        print(f"{key}: {value}", file=sys.stderr)
    print(f"report: {report}", file=sys.stderr)
    ours = frame[~frame["strategy"].map(is_baseline)]
    violations = int(ours["violations"].sum())
    if violations:
        print(f"our strategies broke {violations} invariant(s): see the report", file=sys.stderr)
        return 1
    return 0
