"""The ownership timeline picture: one panel per strategy, one row per partition.

A bar means "this member owned the partition then" (one colour per logical member, the same
colour across its restarts); white gaps are pauses (nobody fetched the partition); dashed
vertical lines mark the start of each member restart, labelled with the member's name. Each
panel's title adds the members' own rebalance metrics (:mod:`.metrics_table`) in one line.
Drawn with matplotlib's Agg backend, so no display is needed.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .metrics_table import aggregate
from .scenario import StrategyResult

__all__ = ["write_timeline"]


def _metrics_line(result: StrategyResult) -> str:
    """The members' own rebalance metrics of ``result`` in one line (:mod:`.metrics_table`)."""
    row = aggregate(result.strategy, result.metrics)
    if not row.incarnations:
        return "members' metrics: none reported (no hooked member)"
    return (
        f"members' metrics: {row.rebalances} rebalances ({row.failed} failed joins), "
        f"latency avg {row.latency_avg_ms:.0f} ms / max {row.latency_max_ms:.0f} ms, "
        f"{row.revoked} partitions revoked, {row.assigns} leader assignments "
        f"(avg {row.assign_avg_ms:.2f} ms)"
    )


def write_timeline(results: Sequence[StrategyResult], path: Path) -> Path:
    """Draw ``results`` into a PNG at ``path`` (parents created) and return the path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    path.parent.mkdir(parents=True, exist_ok=True)
    members = sorted(
        {i.key.split("#")[0] for r in results for i in r.intervals}, key=lambda m: (len(m), m)
    )
    palette = plt.get_cmap("tab10")
    colour = {m: palette(index % 10) for index, m in enumerate(members)}
    partitions = max((len(r.partitions) for r in results), default=1)
    height = max(3.0, 0.16 * partitions + 1.6)
    figure, axes = plt.subplots(
        len(results), 1, figsize=(13, height * len(results)), squeeze=False, sharex=True
    )
    for axis, result in zip(axes[:, 0], results, strict=True):
        index_of = {p: n for n, p in enumerate(result.partitions)}
        for interval in result.intervals:
            row = index_of.get(interval.partition)
            if row is None:
                continue
            start = interval.start - result.t_origin
            axis.broken_barh(
                [(start, interval.end - interval.start)],
                (row - 0.4, 0.8),
                facecolors=colour[interval.key.split("#")[0]],
            )
        for restart in result.restarts:
            x = restart.t_start - result.t_origin
            axis.axvline(x, color="black", linestyle="--", linewidth=0.8)
            axis.text(
                x, len(result.partitions) - 0.3, f" {restart.member}", fontsize=8, va="bottom"
            )
        axis.set_ylim(-0.8, len(result.partitions) + 0.8)
        axis.set_ylabel("partition")
        axis.set_title(
            f"{result.strategy}: {len(result.restarts)} restarts, "
            f"{result.revoked_per_restart:.1f} revoked/restart from the others, "
            f"{result.pause.partition_seconds:.0f} partition-seconds paused "
            f"(longest {result.pause.longest_pause_s:.1f}s), "
            f"lost {len(result.deliveries.lost)}\n{_metrics_line(result)}",
            fontsize=10,
        )
        step = max(1, len(result.partitions) // 12)
        axis.set_yticks(range(0, len(result.partitions), step))
    axes[-1, 0].set_xlabel("seconds since the group started")
    figure.legend(
        handles=[Patch(color=colour[m], label=m) for m in members],
        loc="upper right",
        ncol=len(members),
        title="owner (white = nobody is fetching)",
        fontsize=8,
    )
    # The legend's room at the top: about half an inch, whatever the figure's height.
    figure.tight_layout(rect=(0, 0, 1, 1 - 0.55 / (height * len(results))))
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path
