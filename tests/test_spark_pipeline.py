"""One real Spark run of a tiny grid: Parquet partitioned by strategy, and the report.

The job runs on a real standalone cluster (a master and a worker started on 127.0.0.1 from
the pyspark package's own ``bin/spark-class``); if they cannot start, on ``local[2]`` (the
reason is printed). Either way it is the same job the CLI runs, start-up included.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from kafka_sticky_plugin.errors import ConfigurationError
from kafka_sticky_plugin.simulate import cli
from kafka_sticky_plugin.simulate.report import CHARTS, load_results
from kafka_sticky_plugin.simulate.standalone import standalone_cluster
from kafka_sticky_plugin.simulate.strategies import STRATEGY_NAMES

pytestmark = [pytest.mark.spark, pytest.mark.timeout(240)]

GRID = {
    "name": "spark-test",
    "seed": 5,
    "time_cap_s": 5,
    "size_caps": {"kafka-python-sticky": 5000, "kafka-python-cooperative-sticky": 5000},
    "families": [
        {
            "name": "tiny",
            "members": [3, 12],
            "topics": [2],
            "partitions_per_topic": [10, 300],
            "shapes": ["homogeneous", "random"],
            "events": {"count": 4},
        }
    ],
}
SCENARIOS = 2 * 2 * 2


@pytest.fixture(scope="module")
def master(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    workdir = tmp_path_factory.mktemp("spark-standalone")
    try:
        with standalone_cluster(workdir, cores=2, memory="2g") as url:
            yield url
            return
    except ConfigurationError as exc:
        print(f"standalone cluster unavailable, using local[2]: {exc}")
    yield "local[2]"


def test_spark_job_writes_parquet_by_strategy_and_report(master: str, tmp_path: Path) -> None:
    """The CLI on Spark: one Parquet directory per strategy with one row per event, our
    strategies without violations, the capped baseline rows marked, and the report."""
    grid = tmp_path / "grid.json"
    grid.write_text(json.dumps(GRID))
    out = tmp_path / "out"
    argv = [str(grid), "--out", str(out), "--master", master, "--executor-memory", "1g"]
    assert cli.main([*argv, "--no-progress", "--tasks", "6"]) == 0

    results = out / "results"
    assert (results / "_SUCCESS").exists()
    assert sorted(p.name for p in results.iterdir() if p.is_dir()) == sorted(
        f"strategy={s}" for s in STRATEGY_NAMES
    )
    frame = load_results(results)
    assert len(frame) == SCENARIOS * len(STRATEGY_NAMES) * (4 + 1)
    counts = frame.groupby("strategy")["scenario_id"].nunique()
    assert set(counts) == {SCENARIOS}
    ours = frame[frame["strategy"].isin(["sticky", "cooperative-sticky"])]
    assert (ours["status"] == "ok").all() and ours["violations"].sum() == 0
    baseline = frame[frame["strategy"] == "kafka-python-sticky"]
    over_cap = baseline["group_partitions"] * baseline["group_size"] > 5000
    assert set(baseline[over_cap]["status"]) == {"time_cap_exceeded"}
    assert "ok" in set(baseline[~over_cap]["status"])
    assert frame["worker_max_rss_mb"].max() > 0

    report = (out / "report.md").read_text()
    assert "Spark" in report and master.split("[")[0] in report
    for chart in CHARTS:
        assert (out / "charts" / chart).stat().st_size > 1000
