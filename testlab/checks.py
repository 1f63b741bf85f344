"""Assertions over a group run, raising :class:`~kafka_sticky_plugin.errors.InvariantViolation`
with a message that names the partition and members at fault.

- :func:`check_exclusive_ownership`: no partition had two owners at one instant, except
  overlaps explicitly exempted (a frozen member that does not yet know it was expelled is
  not a *live* owner);
- :func:`check_stable_assignment`: a stable generation covers every partition exactly once
  and is balanced (max - min <= 1 partitions per member);
- :func:`check_deliveries`: nothing acknowledged was lost, and every duplicate was a
  re-delivery of an offset still in flight (not yet committed).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from kafka_sticky_plugin.errors import InvariantViolation
from kafka_sticky_plugin.groups.analysis import (
    DeliveryReport,
    Overlap,
    find_overlaps,
    ownership_intervals,
)
from kafka_sticky_plugin.groups.events import OwnershipEvent, Partition
from kafka_sticky_plugin.groups.runner import StableGroup

__all__ = ["check_deliveries", "check_exclusive_ownership", "check_stable_assignment"]


def check_exclusive_ownership(
    events: Iterable[OwnershipEvent],
    end_t: float,
    exempt: Callable[[Overlap], bool] | None = None,
) -> list[Overlap]:
    """Raise if two incarnations owned a partition at once; return the exempted overlaps."""
    overlaps = find_overlaps(ownership_intervals(list(events), end_t))
    allowed = [o for o in overlaps if exempt is not None and exempt(o)]
    bad = [o for o in overlaps if o not in allowed]
    if bad:
        shown = "; ".join(str(o) for o in bad[:5])
        raise InvariantViolation(f"{len(bad)} ownership overlaps: {shown}")
    return allowed


def check_stable_assignment(stable: StableGroup, partitions: Iterable[Partition]) -> None:
    """Raise unless ``stable`` assigns every partition exactly once, balanced."""
    expected = set(partitions)
    seen: dict[Partition, str] = {}
    for member, parts in stable.assignment.items():
        for p in parts:
            if p in seen:
                raise InvariantViolation(f"{p} assigned to both {seen[p]} and {member}")
            if p not in expected:
                raise InvariantViolation(f"{member} was assigned unknown partition {p}")
            seen[p] = member
    missing = sorted(expected - set(seen))
    if missing:
        raise InvariantViolation(f"generation {stable.generation}: nobody owns {missing}")
    counts = {m: len(parts) for m, parts in stable.assignment.items()}
    if counts and max(counts.values()) - min(counts.values()) > 1:
        raise InvariantViolation(f"generation {stable.generation} is unbalanced: {counts}")


def check_deliveries(report: DeliveryReport) -> None:
    """Raise if a record was lost or a committed offset was delivered again."""
    if report.lost:
        raise InvariantViolation(
            f"{len(report.lost)} of {report.acknowledged} acknowledged records never delivered,"
            f" first: {list(report.lost[:5])}"
        )
    if report.unjustified_duplicates:
        raise InvariantViolation(
            f"{len(report.unjustified_duplicates)} re-deliveries below the committed offset,"
            f" first: {list(report.unjustified_duplicates[:5])}"
        )
