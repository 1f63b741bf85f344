"""The report: Markdown tables and PNG charts from result rows (pandas, no JVM)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from kafka_sticky_plugin.simulate import cli
from kafka_sticky_plugin.simulate.batch import RESULT_COLUMNS, run_rows
from kafka_sticky_plugin.simulate.grid import parse_grid, scenario_rows
from kafka_sticky_plugin.simulate.report import CHARTS, load_results, write_report

GRID = {
    "seed": 1,
    "time_cap_s": 5,
    "families": [
        {
            "name": "r",
            "members": [3, 6],
            "topics": [2],
            "partitions_per_topic": [6],
            "shapes": ["homogeneous", "nested"],
            "events": {"count": 5},
        }
    ],
}


def frame_of(grid: dict[str, object]) -> pd.DataFrame:
    rows = list(run_rows(scenario_rows(parse_grid(grid))))
    return pd.DataFrame(rows, columns=[name for name, _ in RESULT_COLUMNS])


def test_report_tables_and_charts(tmp_path: Path) -> None:
    """The report names every strategy, every event kind seen, and links five small PNGs."""
    frame = frame_of(GRID)
    report = write_report(frame, tmp_path, {"engine": "test"})
    text = report.read_text()
    for strategy in set(frame["strategy"]):
        assert f"| {strategy} |" in text
    moves = text.split("## Partitions moved per event (mean)")[1].split("![moves]")[0]
    assert "Over the " in moves and "| initial |" in moves
    listed = {line.split("|")[1].strip() for line in moves.splitlines() if line.startswith("| ")}
    assert listed - {"event"} <= set(frame["event_kind"])
    for chart in CHARTS:
        path = tmp_path / "charts" / chart
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert path.stat().st_size < 200_000
        assert f"charts/{chart}" in text
    assert "## Invariant violations\n\nNone." in text


def test_report_lists_violations_and_baseline_errors(tmp_path: Path) -> None:
    """A violation and a baseline error in the rows both appear in the report."""
    frame = frame_of(GRID)
    frame.loc[frame.index[1], "violations"] = 1
    frame.loc[frame.index[1], "first_violation"] = "made-up violation for the test"
    last = frame.index[-1]
    frame.loc[last, ["status", "error"]] = ["baseline_error", "KeyError: (None, 'm1')"]
    text = write_report(frame, tmp_path, {}).read_text()
    assert "made-up violation for the test" in text
    assert "cut short by KeyError" in text


def test_cli_without_spark_writes_parquet_by_strategy(tmp_path: Path) -> None:
    """`simulate --no-spark` writes Parquet partitioned by strategy and the report."""
    grid = tmp_path / "g.json"
    grid.write_text(json.dumps(GRID))
    out = tmp_path / "out"
    assert cli.main([str(grid), "--out", str(out), "--no-spark", "--no-progress"]) == 0
    dirs = sorted(p.name for p in (out / "results").iterdir() if p.is_dir())
    assert dirs == sorted(f"strategy={s}" for s in parse_grid(GRID).strategies)
    results = load_results(out / "results")
    strategies = len(parse_grid(GRID).strategies)
    assert len(results) == 4 * strategies * 6  # scenarios x strategies x (events + initial)
    assert (out / "report.md").exists()


def test_cli_rejects_a_missing_grid(tmp_path: Path) -> None:
    """A grid that cannot be read is exit status 2, not a traceback."""
    assert cli.main([str(tmp_path / "nope.yaml"), "--out", str(tmp_path), "--no-spark"]) == 2
