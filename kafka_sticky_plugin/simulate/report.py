"""Aggregate result rows into a Markdown report and PNG charts.

Reads the job's Parquet output (any frame with :data:`.batch.RESULT_COLUMNS`) and writes:

- ``report.md``: run facts (timing, memory), per-strategy totals, a head-to-head table (each
  baseline against ours on the scenarios both ran completely), moves and pauses per event
  kind and per group size, leader compute time, time caps and baseline errors, violations;
- ``charts/moves_by_event.png``, ``charts/pauses_by_event.png``,
  ``charts/compute_vs_partitions.png``, ``charts/strategy_vs_strategy.png``,
  ``charts/moves_by_group_size.png``, ``charts/head_to_head.png``.

Only rows with status ``ok`` enter the averages; capped and failed rows are counted apart.
Per-strategy averages are over the rows each strategy completed, so their scenario sets differ
when baselines were capped or failed; the head-to-head table and the strategy-against-strategy
chart compare like with like (same scenarios, complete runs only).
pandas and matplotlib are imported here only (the pure simulator needs neither).
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..assignor.strategies import COOPERATIVE_STICKY, STICKY, STRATEGIES
from .model import STATUS_BASELINE_ERROR, STATUS_OK, STATUS_TIME_CAP
from .strategies import STRATEGY_NAMES, ours_counterpart

__all__ = ["CHARTS", "load_results", "write_report"]

CHARTS = (
    "moves_by_event.png",
    "pauses_by_event.png",
    "compute_vs_partitions.png",
    "strategy_vs_strategy.png",
    "moves_by_group_size.png",
    "head_to_head.png",
)

_SIZE_BINS = (0, 10, 100, 1000, 10**9)
_SIZE_LABELS = ("<10", "10-99", "100-999", ">=1000")


def load_results(results_dir: Path) -> Any:
    """The Parquet results as one pandas frame (``strategy`` back as a plain column)."""
    import pandas as pd

    frame = pd.read_parquet(results_dir)
    frame["strategy"] = frame["strategy"].astype(str)
    return frame


def _strategies(frame: Any) -> list[str]:
    present = set(frame["strategy"])
    return [s for s in STRATEGY_NAMES if s in present] + sorted(present - set(STRATEGY_NAMES))


def _cell(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, numbers.Number):
        return str(value)
    if isinstance(value, numbers.Integral):
        return f"{int(value):,}"
    number = float(value)  # type: ignore[arg-type]
    if number != number:
        return ""
    if number == int(number) and abs(number) >= 1:
        return f"{int(number):,}"
    if abs(number) >= 100:
        return f"{number:,.0f}"
    return f"{number:.3g}"


def _md_table(frame: Any, index_name: str) -> str:
    columns = [index_name, *[str(c) for c in frame.columns]]
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for index, row in frame.iterrows():
        cells = [str(index), *(_cell(value) for value in row)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _totals(frame: Any, order: Sequence[str]) -> Any:
    import pandas as pd

    ok = frame[frame["status"] == STATUS_OK]
    grouped = frame.groupby("strategy")
    out = pd.DataFrame(
        {
            "scenarios": grouped["scenario_id"].nunique(),
            "events ok": ok.groupby("strategy").size(),
            "events time-capped": frame[frame["status"] == STATUS_TIME_CAP]
            .groupby("strategy")
            .size(),
            "events baseline error": frame[frame["status"] == STATUS_BASELINE_ERROR]
            .groupby("strategy")
            .size(),
            "moved / event": ok.groupby("strategy")["moved"].mean(),
            "revoked / event": ok.groupby("strategy")["revoked"].mean(),
            "paused partition-rounds / event": ok.groupby("strategy")[
                "paused_partition_rounds"
            ].mean(),
            "rounds / rebalance": ok.groupby("strategy")["rounds"].sum()
            / ok.groupby("strategy")["rebalances"].sum().clip(lower=1),
            "max-min load (mean)": ok.groupby("strategy")["max_min_load"].mean(),
            "leader compute p50 (s)": ok.groupby("strategy")["max_compute_s"].median(),
            "leader compute max (s)": ok.groupby("strategy")["max_compute_s"].max(),
            "violations": ok.groupby("strategy")["violations"].sum(),
        }
    )
    out = out.reindex([s for s in order if s in out.index]).fillna(0)
    counts = ("scenarios", "events ok", "events time-capped", "events baseline error", "violations")
    for column in counts:
        out[column] = out[column].astype(int)
    return out


def _pivot(frame: Any, index: str, value: str, order: Sequence[str]) -> Any:
    ok = frame[frame["status"] == STATUS_OK]
    table = ok.pivot_table(
        index=index, columns="strategy", values=value, aggfunc="mean", observed=True
    )
    return table.reindex(columns=[s for s in order if s in table.columns])


def _complete_runs(frame: Any) -> Any:
    """Rows of the (scenario, strategy) runs whose every event has status ok."""
    complete = frame.groupby(["scenario_id", "strategy"])["status"].transform(
        lambda statuses: bool((statuses == STATUS_OK).all())
    )
    return frame[complete.astype(bool)]


def _comparable(frame: Any, order: Sequence[str]) -> tuple[Any, list[str], int]:
    """The rows of the scenarios that every "broad" strategy ran completely, where broad means
    it completed at least half the grid (so one narrow baseline does not shrink the set to
    nothing). Returns those rows (broad strategies only), the broad strategies and the
    number of scenarios."""
    complete = _complete_runs(frame)
    total = max(1, frame["scenario_id"].nunique())
    done = complete.groupby("strategy")["scenario_id"].unique()
    broad = [s for s in order if s in done.index and len(done[s]) * 2 >= total]
    common: set[str] = set(done[broad[0]]) if broad else set()
    for strategy in broad[1:]:
        common &= set(done[strategy])
    rows = complete[complete["strategy"].isin(broad) & complete["scenario_id"].isin(common)]
    return rows, broad, len(common)


def _head_to_head(frame: Any, order: Sequence[str]) -> Any:
    """Each baseline against ours of the same protocol family, and our eager sticky against
    our cooperative-sticky, on the scenarios both ran completely: totals and other / ours."""
    import pandas as pd

    complete = _complete_runs(frame)
    totals = complete.groupby(["scenario_id", "strategy"])[
        ["moved", "revoked", "paused_partition_rounds"]
    ].sum()
    pairs = [(other, ours_counterpart(other)) for other in order if other not in STRATEGIES]
    pairs.append((STICKY, COOPERATIVE_STICKY))  # what the cooperative protocol saves
    rows = {}
    for other, ours in pairs:
        try:
            a = totals.xs(ours, level="strategy")
            b = totals.xs(other, level="strategy")
        except KeyError:
            continue
        common = a.index.intersection(b.index)
        if len(common) == 0:
            continue
        a, b = a.loc[common].sum(), b.loc[common].sum()
        rows[f"{other} vs {ours}"] = {
            "scenarios": len(common),
            "moved (ours)": int(a["moved"]),
            "moved (other)": int(b["moved"]),
            "moved other/ours": b["moved"] / max(a["moved"], 1),
            "paused (ours)": int(a["paused_partition_rounds"]),
            "paused (other)": int(b["paused_partition_rounds"]),
            "paused other/ours": b["paused_partition_rounds"]
            / max(a["paused_partition_rounds"], 1),
        }
    return pd.DataFrame.from_dict(rows, orient="index")


def _head_to_head_chart(table: Any, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4), dpi=80)
    if len(table):
        labels = [
            f"{name}\n({n} scenarios)"
            for name, n in zip(table.index, table["scenarios"], strict=True)
        ]
        ratios = table[["moved other/ours", "paused other/ours"]].set_axis(labels)
        ratios.columns = ["partitions moved", "paused partition-rounds"]
        ratios.plot.barh(ax=ax, logx=True, width=0.75)
        ax.axvline(1.0, color="grey", linewidth=0.8)
    ax.set_xlabel("other strategy / ours, same scenarios (log; right of 1: ours is better)")
    ax.set_title("Other strategy / ours on the same scenarios")
    ax.tick_params(axis="y", labelsize=7)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def _bar_chart(table: Any, title: str, ylabel: str, path: Path, log: bool) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 4.2), dpi=80)
    table.plot.bar(ax=ax, width=0.8, logy=log)
    ax.set_title(title)
    ax.set_ylabel(ylabel)
    ax.set_xlabel("")
    # A fixed corner: matplotlib warns when its "best" placement takes over a second, which
    # it does for eight strategies' bars on a loaded machine (and tests treat warnings as
    # errors).
    ax.legend(fontsize=7, ncol=2, loc="upper left")
    ax.tick_params(axis="x", labelrotation=30, labelsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def _compute_chart(frame: Any, order: Sequence[str], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    ok = frame[(frame["status"] == STATUS_OK) & (frame["max_compute_s"] > 0)]
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=80)
    for strategy in order:
        rows = ok[ok["strategy"] == strategy]
        if len(rows) == 0:
            continue
        bins = (np.log10(rows["partitions"].clip(lower=1)) * 4).round() / 4  # 4 per decade
        per_size = rows.groupby(bins)["max_compute_s"].median()
        ax.plot(10**per_size.index, per_size.values, marker="o", markersize=3, label=strategy)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("partitions in the group")
    ax.set_ylabel("leader compute per round, median (s)")
    ax.set_title("Leader compute time against partitions")
    ax.legend(fontsize=7)
    ax.grid(True, which="major", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def _versus_chart(frame: Any, order: Sequence[str], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ok = _complete_runs(frame)  # whole scenarios only: a cut-short run is not comparable
    per_scenario = ok.pivot_table(
        index="scenario_id", columns="strategy", values="moved", aggfunc="sum"
    )
    fig, ax = plt.subplots(figsize=(6, 5), dpi=80)
    ours = STICKY if STICKY in per_scenario.columns else None
    if ours is not None:
        for other in order:
            if other == ours or other not in per_scenario.columns:
                continue
            both = per_scenario[[ours, other]].dropna()
            ax.scatter(both[other] + 1, both[ours] + 1, s=6, alpha=0.5, label=other)
        top = float(per_scenario.max().max()) + 1
        ax.plot([1, top], [1, top], color="grey", linewidth=0.8, label="equal")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("partitions moved per scenario, other strategy (+1)")
    ax.set_ylabel("partitions moved per scenario, ours: sticky (+1)")
    ax.set_title("Strategy against strategy (below the line: ours moves fewer)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def write_report(
    frame: Any, out_dir: Path, facts: Mapping[str, Any], *, title: str = "Rebalance simulation"
) -> Path:
    """Write ``report.md`` and the charts under ``out_dir``; return the report's path."""
    import pandas as pd

    charts = out_dir / "charts"
    charts.mkdir(parents=True, exist_ok=True)
    order = _strategies(frame)
    frame = frame.copy()
    frame["group size"] = pd.cut(
        frame["group_size"], bins=list(_SIZE_BINS), labels=list(_SIZE_LABELS), right=False
    )
    comparable, broad, common = _comparable(frame, order)
    moves = _pivot(comparable, "event_kind", "moved", broad)
    pauses = _pivot(comparable, "event_kind", "paused_partition_rounds", broad)
    narrow = [s for s in order if s not in broad]
    scope = f"Over the {common:,} scenarios that {', '.join(broad)} all ran completely" + (
        f" ({', '.join(narrow)}: too few complete runs, see the head-to-head table)."
        if narrow
        else "."
    )
    by_size = _pivot(_complete_runs(frame), "group size", "moved", order)
    _bar_chart(
        moves, "Partitions moved per event", "mean per event (log)", charts / CHARTS[0], True
    )
    _bar_chart(
        pauses,
        "Paused partition-rounds per event",
        "mean per event (log)",
        charts / CHARTS[1],
        True,
    )
    head_to_head = _head_to_head(frame, order)
    _head_to_head_chart(head_to_head, charts / CHARTS[5])
    _compute_chart(frame, order, charts / CHARTS[2])
    _versus_chart(frame, order, charts / CHARTS[3])
    _bar_chart(
        by_size, "Partitions moved per event by group size", "mean (log)", charts / CHARTS[4], True
    )

    violations = frame[(frame["violations"] > 0) & (frame["status"] == STATUS_OK)]
    failed = frame[frame["error"] != ""].copy()
    failed["error kind"] = failed["error"].str.split(":").str[0]
    errors = failed.drop_duplicates(["strategy", "error kind"])
    lines = [f"# {title}", "", "## Run", ""]
    lines += [f"- {key}: {value}" for key, value in facts.items()]
    lines += [
        f"- scenarios: {frame['scenario_id'].nunique():,}; result rows: {len(frame):,}",
        "",
        "## Strategies",
        "",
        _md_table(_totals(frame, order), "strategy"),
        "",
        "Averages are over the events each strategy completed (capped and failed runs are",
        "left out, so the sets differ); the next table compares like with like.",
        "",
        "## Head to head",
        "",
        "Same scenarios, complete runs only; eager baselines against sticky, cooperative ones",
        "against cooperative-sticky, and our eager sticky against our cooperative-sticky.",
        "",
        _md_table(head_to_head, "comparison") if len(head_to_head) else "No common scenarios.",
        "",
        f"![head to head](charts/{CHARTS[5]})",
        "",
        "## Partitions moved per event (mean)",
        "",
        scope,
        "",
        _md_table(moves, "event"),
        "",
        f"![moves](charts/{CHARTS[0]})",
        "",
        "## Paused partition-rounds per event (mean)",
        "",
        scope,
        "",
        _md_table(pauses, "event"),
        "",
        f"![pauses](charts/{CHARTS[1]})",
        "",
        "## Partitions moved per event by group size (mean)",
        "",
        "Each strategy over the scenarios it ran completely (blank: none of that size).",
        "",
        _md_table(by_size, "group size"),
        "",
        f"![by size](charts/{CHARTS[4]})",
        "",
        "## Leader compute time",
        "",
        f"![compute](charts/{CHARTS[2]})",
        "",
        "## Strategy against strategy",
        "",
        f"![versus](charts/{CHARTS[3]})",
        "",
        "## Invariant violations",
        "",
    ]
    if len(violations) == 0:
        lines.append("None.")
    else:
        shown = violations.groupby("strategy").first()[["scenario_id", "first_violation"]]
        lines.append(_md_table(shown, "strategy"))
    lines += ["", "## Baseline errors (kafka-python raised)", ""]
    if len(errors) == 0:
        lines.append("None.")
    else:
        counts = failed.groupby(["strategy", "error kind"])["scenario_id"].nunique()
        for _, row in errors.iterrows():
            cut = counts.get((row["strategy"], row["error kind"]), 0)
            lines.append(
                f"- {row['strategy']}: {cut} scenario(s) cut short by {row['error kind']}, "
                f"e.g. in {row['scenario_id']} at event {row['event_index']}: `{row['error']}`"
            )
    report = out_dir / "report.md"
    report.write_text("\n".join(lines) + "\n")
    return report
