"""The demo's second table: the members' own rebalance metrics, summed per strategy (pure).

Every hooked member incarnation reports snapshots of its
:mod:`kafka_sticky_plugin.metrics` (:mod:`kafka_sticky_plugin.groups.metrics_events`);
:func:`aggregate` folds one strategy's samples into one row:

- ``rebalances``, ``failed``: ``rebalance-total`` and ``failed-rebalance-total`` summed over
  the incarnations (each member counts each rebalance it completes, so one group rebalance of
  four members counts four; as Java counts, a JoinGroup attempt the broker answers with an
  error, such as a new member's first ``MEMBER_ID_REQUIRED`` (KIP-394), is a failed one);
- ``latency avg ms``: ``rebalance-latency-total / rebalance-total`` over all incarnations
  (the mean since start, not Java's 1-minute window); ``latency max ms``: the largest
  ``rebalance-latency-max`` any sample saw;
- ``revoked``, ``lost``: partitions the members' listeners were told to revoke / had lost
  (``partitions-revoked-total``, ``partitions-lost-total``, summed; a member that closes
  revokes its own partitions, and that counts too: kafka-python and confluent-kafka do,
  aiokafka does not);
- ``moved``: partitions the leaders' plans gave a new owner (``partitions-moved-total``);
- ``assigns``: leader assignments computed by the plugin (``leader-assign-total``);
  ``assign avg ms``: their decode + engine + encode time per assignment; ``assign max ms``:
  the largest ``leader-assign-latency-max`` seen.

An incarnation's counters are taken from its largest value (they only grow, so that is its
latest sample); ``nan`` where nothing was measured (printed as ``-``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..groups.metrics_events import MetricsSample
from .report import markdown_table

__all__ = ["METRICS_LEGEND", "StrategyMetrics", "aggregate", "format_metrics_table"]

#: Printed under the table: what each column means.
METRICS_LEGEND = """\
members' own rebalance metrics (kafka_sticky_plugin.metrics), summed over every member:
rebalances/failed: rebalance-total, failed-rebalance-total (one per member per rebalance;
  as in Java, a retried JoinGroup counts as failed, e.g. a new member's MEMBER_ID_REQUIRED)
latency avg/max ms: rebalance-latency (JoinGroup to SyncGroup), mean and longest
revoked/lost: partitions the listeners revoked (a closing member's own too)/lost;
  moved: partitions the leaders' plans took from their owner
assigns: leader assignments; assign avg/max ms: their decode + engine + encode time"""

_COUNTERS = (
    "rebalance-total",
    "failed-rebalance-total",
    "rebalance-latency-total",
    "partitions-revoked-total",
    "partitions-lost-total",
    "partitions-moved-total",
    "leader-assign-total",
    "leader-assign-decode-ms-total",
    "leader-assign-engine-ms-total",
    "leader-assign-encode-ms-total",
)

_HEADERS = (
    "strategy",
    "members",
    "rebalances",
    "failed",
    "latency avg ms",
    "latency max ms",
    "revoked",
    "lost",
    "moved",
    "assigns",
    "assign avg ms",
    "assign max ms",
)


@dataclass(frozen=True)
class StrategyMetrics:
    """One strategy's row (module docstring for each figure)."""

    strategy: str
    incarnations: int
    rebalances: int
    failed: int
    latency_avg_ms: float
    latency_max_ms: float
    revoked: int
    lost: int
    moved: int
    assigns: int
    assign_avg_ms: float
    assign_max_ms: float


def _largest(values: Iterable[float]) -> float:
    present = [v for v in values if not math.isnan(v)]
    return max(present) if present else math.nan


def aggregate(strategy: str, samples: Iterable[MetricsSample]) -> StrategyMetrics:
    """Fold ``samples`` (any order, any number per incarnation) into one row."""
    counters: dict[str, dict[str, float]] = {}
    latency_max: list[float] = []
    assign_max: list[float] = []
    for sample in samples:
        mine = counters.setdefault(sample.key, {})
        for name in _COUNTERS:
            value = sample.values.get(name, math.nan)
            if not math.isnan(value):
                mine[name] = max(mine.get(name, 0.0), value)
        latency_max.append(sample.values.get("rebalance-latency-max", math.nan))
        assign_max.append(sample.values.get("leader-assign-latency-max", math.nan))

    def total(name: str) -> float:
        return sum(mine.get(name, 0.0) for mine in counters.values())

    rebalances = total("rebalance-total")
    assigns = total("leader-assign-total")
    assign_ms = sum(
        total(f"leader-assign-{part}-ms-total") for part in ("decode", "engine", "encode")
    )
    return StrategyMetrics(
        strategy=strategy,
        incarnations=len(counters),
        rebalances=int(rebalances),
        failed=int(total("failed-rebalance-total")),
        latency_avg_ms=total("rebalance-latency-total") / rebalances if rebalances else math.nan,
        latency_max_ms=_largest(latency_max),
        revoked=int(total("partitions-revoked-total")),
        lost=int(total("partitions-lost-total")),
        moved=int(total("partitions-moved-total")),
        assigns=int(assigns),
        assign_avg_ms=assign_ms / assigns if assigns else math.nan,
        assign_max_ms=_largest(assign_max),
    )


def _ms(value: float, digits: int) -> str:
    return "-" if math.isnan(value) else f"{value:.{digits}f}"


def _row(row: StrategyMetrics) -> tuple[str, ...]:
    return (
        row.strategy,
        str(row.incarnations),
        str(row.rebalances),
        str(row.failed),
        _ms(row.latency_avg_ms, 0),
        _ms(row.latency_max_ms, 0),
        str(row.revoked),
        str(row.lost),
        str(row.moved),
        str(row.assigns),
        _ms(row.assign_avg_ms, 2),
        _ms(row.assign_max_ms, 2),
    )


def format_metrics_table(rows: Sequence[StrategyMetrics]) -> str:
    """The rows as an aligned Markdown table (plain text too), one line per strategy;
    ``members``: incarnations that reported (each restart is a new one)."""
    return markdown_table([_HEADERS, *(_row(r) for r in rows)])
