"""Turn an event log into facts: who owned what when, pauses, rounds, and delivery guarantees.

Definitions (used by the tests and printed by the demo):

- an *ownership interval* of incarnation K on partition P starts at K's ``assigned`` event
  that includes P and ends at K's ``revoked``/``lost`` event that includes P, or at its
  ``closing``/``stopped``/``killed`` event, or at ``end_t`` if still open; after K's
  ``closing`` (its loop ended, its last commit done: it delivers and commits nothing more)
  an ``assigned`` of K opens nothing (a rebalance its consumer completes while it leaves);
- two intervals *overlap* when they belong to different incarnations and share an instant:
  both members could deliver or commit the partition then. A member's ``stopped`` is stamped
  after its consumer's close returned, which is after its LeaveGroup let the others take its
  partitions over; a member whose close neither delivers nor commits (aiokafka's ``stop()``)
  therefore reports ``closing`` before it, or every clean stop would look like two owners;
- a partition's *paused time* in a window is the part of the window no interval covers
  (nobody fetches it); ``partition-seconds`` sums it over partitions;
- a *rebalance round* is a generation id first reported (``generation`` event) in a window;
- a delivery is *lost* if the broker acknowledged the offset and no member delivered it; a
  *duplicate* is any delivery of an already-delivered offset; it is *justified* when its
  offset is at or after the last commit for that partition made before it was re-delivered
  (the previous owner was still processing it: "in flight").
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from .events import Delivery, OwnershipEvent, Partition

__all__ = [
    "DeliveryReport",
    "Interval",
    "Overlap",
    "PauseReport",
    "analyse_deliveries",
    "current_ownership",
    "find_overlaps",
    "ownership_intervals",
    "pause_report",
    "rebalance_rounds",
    "revoked_partitions",
]

_ENDS = ("revoked", "lost")
_LIFE_ENDS = ("closing", "stopped", "killed")


@dataclass(frozen=True)
class Interval:
    """Incarnation ``key`` owned ``partition`` during ``[start, end)``."""

    key: str
    partition: Partition
    start: float
    end: float


@dataclass(frozen=True)
class Overlap:
    """Two incarnations owned one partition at the same time."""

    partition: Partition
    first: Interval
    second: Interval

    def __str__(self) -> str:
        return (
            f"{self.partition} owned by {self.first.key} [{self.first.start:.3f},"
            f" {self.first.end:.3f}) and {self.second.key} [{self.second.start:.3f},"
            f" {self.second.end:.3f})"
        )


def ownership_intervals(events: Iterable[OwnershipEvent], end_t: float) -> list[Interval]:
    """Every ownership interval in ``events`` (see module docstring), sorted by start."""
    open_since: dict[tuple[str, Partition], float] = {}
    out: list[Interval] = []
    closed: set[str] = set()
    for event in sorted(events, key=lambda e: e.t):
        key = event.key
        if event.kind == "closing":
            closed.add(key)
        if event.kind == "assigned" and key not in closed:
            for p in event.partitions:
                open_since.setdefault((key, p), event.t)
        elif event.kind in _ENDS:
            for p in event.partitions:
                start = open_since.pop((key, p), None)
                if start is not None:
                    out.append(Interval(key, p, start, event.t))
        elif event.kind in _LIFE_ENDS:
            for k, p in [kp for kp in open_since if kp[0] == key]:
                out.append(Interval(k, p, open_since.pop((k, p)), event.t))
    for (k, p), start in open_since.items():
        out.append(Interval(k, p, start, end_t))
    return sorted(out, key=lambda i: (i.start, i.key, i.partition))


def find_overlaps(intervals: Sequence[Interval]) -> list[Overlap]:
    """Pairs of intervals of different incarnations that share an instant on one partition."""
    by_partition: dict[Partition, list[Interval]] = defaultdict(list)
    for interval in intervals:
        by_partition[interval.partition].append(interval)
    found: list[Overlap] = []
    for partition, items in sorted(by_partition.items()):
        items.sort(key=lambda i: i.start)
        for index, first in enumerate(items):
            for second in items[index + 1 :]:
                if second.start >= first.end:
                    break
                if second.key != first.key:
                    found.append(Overlap(partition, first, second))
    return found


def current_ownership(events: Iterable[OwnershipEvent]) -> dict[str, tuple[Partition, ...]]:
    """Each live incarnation's last reported assignment (closing, stopped and killed ones are
    left out)."""
    owned: dict[str, tuple[Partition, ...]] = {}
    ended: set[str] = set()
    for event in sorted(events, key=lambda e: e.t):
        if event.key in ended:
            continue
        if event.kind in ("assigned", "revoked", "lost"):
            owned[event.key] = event.owned_after
        elif event.kind == "started":
            owned.setdefault(event.key, ())
        elif event.kind in _LIFE_ENDS:
            owned.pop(event.key, None)
            ended.add(event.key)
    return owned


@dataclass(frozen=True)
class PauseReport:
    """Unowned time of every partition in a window."""

    window_s: float
    partition_seconds: float
    longest_pause_s: float
    paused_partitions: int
    per_partition_s: dict[Partition, float] = field(default_factory=dict)


def pause_report(
    intervals: Sequence[Interval], partitions: Iterable[Partition], t0: float, t1: float
) -> PauseReport:
    """How long each partition had no owner within ``[t0, t1]``."""
    by_partition: dict[Partition, list[tuple[float, float]]] = defaultdict(list)
    for i in intervals:
        start, end = max(i.start, t0), min(i.end, t1)
        if end > start:
            by_partition[i.partition].append((start, end))
    total = 0.0
    longest = 0.0
    per: dict[Partition, float] = {}
    for p in sorted(partitions):
        cursor = t0
        paused = 0.0
        for start, end in sorted(by_partition.get(p, [])):
            if start > cursor:
                paused += start - cursor
                longest = max(longest, start - cursor)
            cursor = max(cursor, end)
        if t1 > cursor:
            paused += t1 - cursor
            longest = max(longest, t1 - cursor)
        per[p] = paused
        total += paused
    return PauseReport(
        window_s=t1 - t0,
        partition_seconds=total,
        longest_pause_s=longest,
        paused_partitions=sum(1 for v in per.values() if v > 0),
        per_partition_s=per,
    )


def rebalance_rounds(events: Iterable[OwnershipEvent], t0: float, t1: float) -> list[int]:
    """Generation ids first reported by any member within ``[t0, t1]``, ascending."""
    first_seen: dict[int, float] = {}
    for e in events:
        if e.kind == "generation" and e.generation >= 0:
            first_seen[e.generation] = min(first_seen.get(e.generation, e.t), e.t)
    return sorted(g for g, t in first_seen.items() if t0 <= t <= t1)


def revoked_partitions(
    events: Iterable[OwnershipEvent], t0: float, t1: float, exclude_keys: Iterable[str] = ()
) -> int:
    """Partitions revoked (or lost) within ``[t0, t1]`` by incarnations not in ``exclude_keys``."""
    skip = set(exclude_keys)
    return sum(
        len(e.partitions)
        for e in events
        if e.kind in _ENDS and t0 <= e.t <= t1 and e.key not in skip
    )


@dataclass(frozen=True)
class DeliveryReport:
    """What happened to every acknowledged record."""

    acknowledged: int
    consumed: int
    duplicates: int
    lost: tuple[tuple[str, int, int], ...]
    unjustified_duplicates: tuple[tuple[str, int, int], ...]
    stale: int = 0

    @property
    def ok(self) -> bool:
        """Nothing lost and every duplicate justified."""
        return not self.lost and not self.unjustified_duplicates


def analyse_deliveries(
    acknowledged: Mapping[Partition, set[int]],
    deliveries: Sequence[Delivery],
    events: Iterable[OwnershipEvent],
    stale: Callable[[Delivery], bool] | None = None,
) -> DeliveryReport:
    """Compare what the broker acknowledged with what members delivered (module docstring).

    ``stale`` marks deliveries by a member that was no longer a live owner (a frozen member
    draining records it fetched before the group expelled it): they are counted in
    ``stale`` and otherwise ignored, so they can neither hide a loss nor count as duplicates.
    """
    stale_count = 0
    if stale is not None:
        kept = [d for d in deliveries if not stale(d)]
        stale_count = len(deliveries) - len(kept)
        deliveries = kept
    commits: dict[Partition, list[tuple[float, int]]] = defaultdict(list)
    for e in events:
        if e.kind == "committed":
            for p, offset in zip(e.partitions, e.offsets, strict=True):
                commits[p].append((e.t, offset))
    for entries in commits.values():
        entries.sort()
    seen: set[tuple[str, int, int]] = set()
    duplicates = 0
    unjustified: list[tuple[str, int, int]] = []
    for d in sorted(deliveries, key=lambda d: d.t):
        ident = (d.topic, d.partition, d.offset)
        if ident not in seen:
            seen.add(ident)
            continue
        duplicates += 1
        previous = [off for t, off in commits.get((d.topic, d.partition), []) if t <= d.t]
        if previous and d.offset < previous[-1]:
            unjustified.append(ident)
    lost = tuple(
        sorted(
            (topic, partition, offset)
            for (topic, partition), offsets in acknowledged.items()
            for offset in offsets
            if (topic, partition, offset) not in seen
        )
    )
    return DeliveryReport(
        acknowledged=sum(len(v) for v in acknowledged.values()),
        consumed=len(seen),
        duplicates=duplicates,
        lost=lost,
        unjustified_duplicates=tuple(unjustified),
        stale=stale_count,
    )
