"""Per-bounce figures of a rolling restart, from ownership intervals and deliveries (pure).

A rolling restart is cut into *bounce windows*: bounce ``i`` runs from restart ``i``'s start to
restart ``i + 1``'s start (the last one to the end of the rolling restart), so the windows tile
the rolling restart and every paused instant belongs to exactly one bounce. In a window:

- a partition's *gaps* are the instants no ownership interval covers (the pauses of
  :func:`~kafka_sticky_plugin.groups.analysis.pause_report`);
- *handovers* are ownership intervals that start in the window on a partition whose previous
  interval belonged to another incarnation (a partition revoked and given back to the same
  consumer is paused but not handed over);
- the *recovery time* is how long after the window's start the last paused partition delivered
  a record again: for every partition with a gap, the first delivery at or after its last gap's
  end; the largest of those, minus the window's start (0 when nothing paused). A paused
  partition that delivered nothing afterwards is left out: it had no record to deliver (keyed
  records need not reach every partition), which the caller's loss check (every acknowledged
  record delivered) establishes;
- a partition is *kept* when the incarnation that owned it at the window's start (the interval
  covering ``t0``) is the one that owns it at the window's end (the interval reaching ``t1``),
  and *moved* otherwise (another consumer, a successor incarnation, or nobody at one end); the
  paused partition-seconds split into those of kept and of moved partitions
  (:func:`kept_moved_pause`; the two add up to the window's paused partition-seconds). A kept
  partition pauses when its owner gives it up and gets it back (eager rebalancing revokes
  everything); under cooperative rebalancing it should not pause at all;
- a *staying member* is an incarnation that owned partitions at both ends of the window (not
  the restarted one, not its successor); the time it was *unable to consume* is the part of
  the window during which it owned no partition at all (:func:`unable_to_consume`). Both read
  ownership only, from the members' own rebalance callbacks: they take an owner to consume
  what it owns, which Java's and librdkafka's consumers and the hooked Python members do
  (a kafka-python 3.0 member without the hooks returns nothing while it rejoins, a stall
  that no callback shows; docs/hooks.md).

Invariant: nothing here reads a clock or a broker; the same inputs give the same figures.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise

from ..groups.analysis import Interval
from ..groups.events import Delivery, Partition

__all__ = [
    "BounceFigures",
    "KeptMoved",
    "bounce_figures",
    "bounce_windows",
    "gaps",
    "handovers",
    "kept_moved_pause",
    "unable_to_consume",
]


def bounce_windows(starts: Sequence[float], end: float) -> list[tuple[float, float]]:
    """``[(start_i, start_i+1), ..., (start_last, end)]`` for restart start times ``starts``."""
    edges = [*starts, end]
    return [(edges[i], edges[i + 1]) for i in range(len(starts))]


def gaps(
    intervals: Iterable[Interval], partition: Partition, t0: float, t1: float
) -> list[tuple[float, float]]:
    """The parts of ``[t0, t1]`` during which no interval covers ``partition``."""
    spans = sorted(
        (max(i.start, t0), min(i.end, t1))
        for i in intervals
        if i.partition == partition and min(i.end, t1) > max(i.start, t0)
    )
    found: list[tuple[float, float]] = []
    cursor = t0
    for start, end in spans:
        if start > cursor:
            found.append((cursor, start))
        cursor = max(cursor, end)
    if t1 > cursor:
        found.append((cursor, t1))
    return found


def handovers(intervals: Iterable[Interval], t0: float, t1: float) -> int:
    """Ownership intervals starting in ``[t0, t1)`` whose previous interval on the same
    partition belonged to another incarnation (module docstring)."""
    by_partition: dict[Partition, list[Interval]] = defaultdict(list)
    for interval in intervals:
        by_partition[interval.partition].append(interval)
    count = 0
    for items in by_partition.values():
        items.sort(key=lambda i: (i.start, i.end))
        for previous, current in pairwise(items):
            if t0 <= current.start < t1 and current.key != previous.key:
                count += 1
    return count


@dataclass(frozen=True)
class BounceFigures:
    """What one bounce cost (module docstring for the definitions)."""

    t0: float
    t1: float
    paused_partition_s: float
    recovery_s: float
    handovers: int


def bounce_figures(
    intervals: Sequence[Interval],
    deliveries: Sequence[Delivery],
    partitions: Iterable[Partition],
    t0: float,
    t1: float,
) -> BounceFigures:
    """The figures of the bounce window ``[t0, t1]``."""
    first_after: dict[Partition, list[float]] = defaultdict(list)
    for d in deliveries:
        if d.t >= t0:
            first_after[(d.topic, d.partition)].append(d.t)
    paused = 0.0
    recovery = 0.0
    for partition in partitions:
        found = gaps(intervals, partition, t0, t1)
        if not found:
            continue
        paused += sum(end - start for start, end in found)
        resumed = found[-1][1]
        later = [t for t in first_after.get(partition, []) if t >= resumed]
        if later:
            recovery = max(recovery, min(later) - t0)
    return BounceFigures(t0, t1, paused, recovery, handovers(intervals, t0, t1))


@dataclass(frozen=True)
class KeptMoved:
    """A window's paused partition-seconds split by kept and moved partitions (module
    docstring), and how many partitions were each."""

    kept_paused_s: float
    moved_paused_s: float
    kept: int
    moved: int


def _owner_at_start(items: Sequence[Interval], t0: float) -> str | None:
    return next((i.key for i in items if i.start <= t0 < i.end), None)


def _owner_at_end(items: Sequence[Interval], t1: float) -> str | None:
    return next((i.key for i in items if i.start < t1 <= i.end), None)


def kept_moved_pause(
    intervals: Iterable[Interval], partitions: Iterable[Partition], t0: float, t1: float
) -> KeptMoved:
    """The paused partition-seconds of ``[t0, t1]`` on kept and on moved partitions."""
    by_partition: dict[Partition, list[Interval]] = defaultdict(list)
    for interval in intervals:
        by_partition[interval.partition].append(interval)
    kept_s = moved_s = 0.0
    kept = moved = 0
    for partition in partitions:
        items = by_partition.get(partition, [])
        before, after = _owner_at_start(items, t0), _owner_at_end(items, t1)
        paused = sum(end - start for start, end in gaps(items, partition, t0, t1))
        if before is not None and before == after:
            kept, kept_s = kept + 1, kept_s + paused
        else:
            moved, moved_s = moved + 1, moved_s + paused
    return KeptMoved(kept_s, moved_s, kept, moved)


def unable_to_consume(intervals: Iterable[Interval], t0: float, t1: float) -> dict[str, float]:
    """Each staying member's seconds in ``[t0, t1]`` owning no partition (module docstring),
    by incarnation key."""
    by_key: dict[str, list[Interval]] = defaultdict(list)
    for interval in intervals:
        by_key[interval.key].append(interval)
    found: dict[str, float] = {}
    for key, items in by_key.items():
        at_start = any(i.start <= t0 < i.end for i in items)
        at_end = any(i.start < t1 <= i.end for i in items)
        if not (at_start and at_end):
            continue
        spans = sorted((max(i.start, t0), min(i.end, t1)) for i in items if i.end > t0)
        idle, cursor = 0.0, t0
        for start, end in spans:
            if start >= t1:
                break
            if start > cursor:
                idle += start - cursor
            cursor = max(cursor, end)
        found[key] = idle + max(0.0, t1 - cursor)
    return found
