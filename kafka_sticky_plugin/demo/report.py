"""The demo's end-of-run table: one row per strategy, the same columns for each.

Columns:

- ``restarts``: member restarts performed (members x bounces);
- ``revoked/restart``: mean partitions revoked from members that were *not* restarting
  (the restarting member always gives up its own partitions when it closes);
- ``moved/restart``: mean partitions whose owner changed across a restart;
- ``paused p*s``: partition-seconds during which a partition had no owner (nobody fetched
  it), over the whole rolling restart; ``longest``: the longest single such pause;
- ``rounds``: rebalance generations during the rolling restart;
- ``consumed``, ``dups``, ``lost``: distinct acknowledged records delivered, re-deliveries,
  and acknowledged records never delivered (must be 0).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..groups.analysis import find_overlaps
from .scenario import StrategyResult

__all__ = ["LEGEND", "broken_guarantees", "format_table", "markdown_table", "problems"]

#: Printed under the table: what each column means.
LEGEND = """\
revoked/restart: partitions taken from members that were NOT restarting, per restart
moved/restart:   partitions whose owner changed across a restart
paused p*s:      partition-seconds with no owner (nobody fetching) during the rolling restart
longest s:       the longest single such pause; rounds: rebalance generations it took
consumed/dups/lost: distinct records delivered, re-deliveries (in flight), never delivered"""

_HEADERS = (
    "strategy",
    "restarts",
    "revoked/restart",
    "moved/restart",
    "paused p*s",
    "longest s",
    "rounds",
    "consumed",
    "dups",
    "lost",
)


def _row(result: StrategyResult) -> tuple[str, ...]:
    return (
        result.strategy,
        str(len(result.restarts)),
        f"{result.revoked_per_restart:.1f}",
        f"{result.moved_per_restart:.1f}",
        f"{result.pause.partition_seconds:.1f}",
        f"{result.pause.longest_pause_s:.1f}",
        str(result.rounds),
        str(result.deliveries.consumed),
        str(result.deliveries.duplicates),
        str(len(result.deliveries.lost)),
    )


def markdown_table(rows: Sequence[Sequence[str]], left: int = 1) -> str:
    """``rows`` (the first is the header) as an aligned Markdown table, readable as plain
    text too: the first ``left`` columns left-aligned, the rest right-aligned (numbers)."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]

    def line(cells: Sequence[str]) -> str:
        pairs = enumerate(zip(cells, widths, strict=True))
        padded = [c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in pairs]
        return "| " + " | ".join(padded) + " |"

    separator = (
        "|"
        + "|".join(
            ("-" * (w + 2)) if i < left else ("-" * (w + 1) + ":") for i, w in enumerate(widths)
        )
        + "|"
    )
    return "\n".join([line(rows[0]), separator, *(line(r) for r in rows[1:])])


def format_table(results: Sequence[StrategyResult]) -> str:
    """A Markdown table (readable as plain text too) of ``results``."""
    return markdown_table([_HEADERS, *(_row(r) for r in results)])


def problems(result: StrategyResult) -> list[str]:
    """What went wrong in a run (empty: every guarantee held), each line naming the strategy."""
    return [f"[{result.strategy}] {text}" for text in broken_guarantees(result)]


def broken_guarantees(result: StrategyResult) -> list[str]:
    """The run's errors, lost records, re-deliveries of committed offsets and double
    ownership (naming the first overlap: partition, both incarnations and their intervals),
    one line each (empty: every guarantee held)."""
    found = list(result.errors)
    if result.deliveries.lost:
        found.append(f"{len(result.deliveries.lost)} acknowledged records never delivered")
    if result.deliveries.unjustified_duplicates:
        found.append(
            f"{len(result.deliveries.unjustified_duplicates)} re-deliveries of committed offsets"
        )
    if result.overlaps:
        first = find_overlaps(result.intervals)
        where = f" (first: {first[0]})" if first else ""
        found.append(f"{result.overlaps} times a partition had two owners at once{where}")
    return found
