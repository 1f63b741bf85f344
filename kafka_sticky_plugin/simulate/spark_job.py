"""The Spark job: scenarios become rows, executors run the simulator, Parquet comes out.

Steps: (1) every (scenario, strategy) pair of the grid is one row; rows are packed into tasks
of similar estimated cost (:mod:`.tasks`), one Spark partition per task, costliest first;
(2) ``mapInPandas`` runs :func:`.batch.run_batch` on each partition (Arrow-based transfer);
(3) results are written as Parquet partitioned by strategy under ``OUT/results``.

This is the only module that imports pyspark at module level. It works unchanged on
``local[N]`` and on a standalone cluster (``spark://host:7077``); for a non-local master the
package is shipped to the executors as a zip (``addPyFile``); kafka-python must be installed
on the executors for the baselines (the same ``requirements/`` as here).
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
import time
import zipfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql.types import (
    BooleanType,
    DoubleType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from .batch import RESULT_COLUMNS, run_batch
from .grid import Grid, scenario_rows
from .progress import ProgressBar
from .tasks import split_tasks

__all__ = ["JobStats", "result_schema", "run_job", "spark_session"]

_TYPES = {"str": StringType(), "int": LongType(), "float": DoubleType(), "bool": BooleanType()}

_INPUT_SCHEMA = StructType(
    [
        StructField("scenario_id", StringType()),
        StructField("strategy", StringType()),
        StructField("size", LongType()),
        StructField("partitions", LongType()),
        StructField("events", LongType()),
        StructField("time_cap_s", DoubleType()),
        StructField("size_cap", DoubleType()),
        StructField("scenario_json", StringType()),
    ]
)


@dataclass
class JobStats:
    """What the job measured about itself (printed and put in the report)."""

    master: str = ""
    spark_version: str = ""
    default_parallelism: int = 0
    tasks: int = 0
    rows_in: int = 0
    session_start_s: float = 0.0
    simulate_s: float = 0.0
    executor_memory: str = ""
    driver_memory: str = ""
    jvm_executors: dict[str, str] = field(default_factory=dict)


def result_schema() -> StructType:
    return StructType([StructField(n, _TYPES[t]) for n, t in RESULT_COLUMNS])


def _is_local(master: str) -> bool:
    return master.startswith("local")


def spark_session(
    master: str, *, executor_memory: str = "2g", driver_memory: str = "2g"
) -> SparkSession:
    """A session on ``master`` with Arrow on, the UI off and loopback networking for local
    masters; the workers run this interpreter (``PYSPARK_PYTHON``) unless told otherwise."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    if _is_local(master) or "127.0.0.1" in master or "localhost" in master:
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = (
        SparkSession.builder.master(master)
        .appName("kafka-sticky-plugin-simulate")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", driver_memory)
        .config("spark.executor.memory", executor_memory)
        .config("spark.sql.shuffle.partitions", "8")
        .config("spark.python.worker.reuse", "true")
    )
    if _is_local(master) or "127.0.0.1" in master:
        builder = builder.config("spark.driver.host", "127.0.0.1").config(
            "spark.driver.bindAddress", "127.0.0.1"
        )
    session: SparkSession = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session


def _ship_package(session: SparkSession, workdir: Path) -> None:
    """Zip this package and add it to the executors' Python path (non-local masters)."""
    root = Path(__file__).resolve().parents[1]
    archive = workdir / "kafka_sticky_plugin.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for path in sorted(root.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                zf.write(path, Path("kafka_sticky_plugin") / path.relative_to(root))
    session.sparkContext.addPyFile(str(archive))


def _flatten(bucket: list[Mapping[str, Any]]) -> Iterator[tuple[Any, ...]]:
    for row in bucket:
        yield tuple(row[f.name] for f in _INPUT_SCHEMA.fields)


def _jvm_memory(session: SparkSession) -> dict[str, str]:
    """Per executor (host:port): the JVM's storage memory (max / remaining), in MiB."""
    out: dict[str, str] = {}
    try:
        status = session.sparkContext._jsc.sc().getExecutorMemoryStatus()
        iterator = status.iterator()
        while iterator.hasNext():
            entry = iterator.next()
            total, free = entry._2()._1(), entry._2()._2()
            out[str(entry._1())] = f"{total / 2**20:.0f} MiB max, {free / 2**20:.0f} MiB free"
    except Exception as exc:  # py4j internals: report, never fail the job on a statistic
        out["unavailable"] = f"{type(exc).__name__}: {exc}"
    return out


def _watch(session: SparkSession, bar: ProgressBar, done: threading.Event) -> None:
    tracker = session.sparkContext.statusTracker()
    while not done.wait(1.0):
        total = finished = 0
        for stage_id in tracker.getActiveStageIds():
            info = tracker.getStageInfo(stage_id)
            if info is not None:
                total += info.numTasks
                finished += info.numCompletedTasks
        if total:
            bar.update(finished, total)


def run_job(
    grid: Grid,
    out_dir: Path,
    *,
    master: str = "local[*]",
    tasks: int | None = None,
    executor_memory: str = "2g",
    progress: bool = True,
    session: SparkSession | None = None,
) -> JobStats:
    """Simulate every (scenario, strategy) of ``grid`` on Spark; write
    ``out_dir/results`` (Parquet partitioned by ``strategy``). Returns what it measured."""
    stats = JobStats(master=master)
    start = time.perf_counter()
    own_session = session is None
    spark = session or spark_session(master, executor_memory=executor_memory)
    stats.session_start_s = time.perf_counter() - start
    stats.spark_version = spark.version
    context = spark.sparkContext
    stats.master = str(context.master)
    stats.default_parallelism = context.defaultParallelism
    stats.executor_memory = str(context.getConf().get("spark.executor.memory", "1g"))
    stats.driver_memory = str(context.getConf().get("spark.driver.memory", "1g"))
    try:
        with tempfile.TemporaryDirectory() as workdir:
            if not _is_local(stats.master):
                _ship_package(spark, Path(workdir))
            rows = scenario_rows(grid)
            stats.rows_in = len(rows)
            buckets = split_tasks(rows, tasks or max(8, 24 * stats.default_parallelism))
            stats.tasks = len(buckets)
            rdd = context.parallelize(buckets, len(buckets)).flatMap(_flatten)
            frame = spark.createDataFrame(rdd, _INPUT_SCHEMA)
            results = frame.mapInPandas(run_batch, result_schema())
            bar = ProgressBar("simulating", enabled=progress)
            done = threading.Event()
            watcher = threading.Thread(target=_watch, args=(spark, bar, done), daemon=True)
            watcher.start()
            sim_start = time.perf_counter()
            try:
                results.write.mode("overwrite").partitionBy("strategy").parquet(
                    str(out_dir / "results")
                )
            finally:
                done.set()
                watcher.join()
            bar.finish(stats.tasks)
            stats.simulate_s = time.perf_counter() - sim_start
            stats.jvm_executors = _jvm_memory(spark)
    finally:
        if own_session:
            spark.stop()
    return stats
