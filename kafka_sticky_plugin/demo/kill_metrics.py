"""What killing one member costs, and which guarantee figures belong to which step (pure).

A run with a *kill step* (:func:`~kafka_sticky_plugin.demo.scenario.run_rolling_restart`
with ``kill_one``) first restarts members cleanly, then at ``t_kill`` SIGKILLs one member
(no LeaveGroup, no commit) and waits until the group is stable without it, at
``t_stable``. The kill step's window is ``[t_kill, t_stable]``; in it:

- *stable s* is ``t_stable - t_kill``: the broker only notices a member that vanished when
  its session times out, so this is about the session timeout plus one rebalance (and the
  quiet second :meth:`~kafka_sticky_plugin.groups.runner.ConsumerGroupRunner.wait_stable`
  asks for, as after every restart);
- the *paused partition-seconds* and their split into kept and moved partitions are
  :func:`~.bounce_metrics.bounce_figures`' and :func:`~.bounce_metrics.kept_moved_pause`'s
  over the window (the killed member's partitions are moved ones: nobody owns them from its
  ``killed`` event until the rebalance hands them over).

The run's guarantee figures are cut at ``t_kill`` into the restarts' and the kill's
(:func:`split_at`; the two parts add up to the whole run's):

- a *duplicate* (a delivery of a record delivered before) belongs to the step in which it
  was re-delivered: before ``t_kill`` the restarts', from ``t_kill`` on the kill's
  (including the final drain, when the killed member's uncommitted records come again);
- a *lost* record (acknowledged, never delivered) belongs to the restarts when some
  delivery before ``t_kill`` on its partition had a higher offset (the consumers had gone
  past it before the kill), and to the kill otherwise (it was still to come when the member
  died);
- a *two-owner overlap* belongs to the step in which its shared time began.

Duplicates after a kill are expected, not a broken guarantee: the killed member had
delivered records it never committed, and the partition's next owner starts from the last
commit (:func:`~kafka_sticky_plugin.groups.analysis.analyse_deliveries` calls such a
re-delivery *justified*). Lost records and two owners are broken guarantees in either step.
Deliveries the killed member made but whose report had not reached the parent when it died
are not in the log: their re-delivery then counts as a first delivery (the duplicate count
is a floor).

Invariant: nothing here reads a clock or a broker; the same inputs give the same figures.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..groups.analysis import Interval, Overlap
from ..groups.events import Delivery, Partition
from .bounce_metrics import KeptMoved, bounce_figures, kept_moved_pause

__all__ = ["KillFigures", "StepGuarantees", "kill_figures", "split_at"]


@dataclass(frozen=True)
class StepGuarantees:
    """Lost records, duplicate deliveries and two-owner overlaps of one step."""

    lost: int
    duplicates: int
    overlaps: int


def split_at(
    t_cut: float,
    deliveries: Sequence[Delivery],
    lost: Iterable[tuple[str, int, int]],
    overlaps: Iterable[Overlap],
) -> tuple[StepGuarantees, StepGuarantees]:
    """The guarantee figures before ``t_cut`` and from ``t_cut`` on (module docstring)."""
    seen: set[tuple[str, int, int]] = set()
    dups_before = dups_after = 0
    passed: dict[Partition, int] = {}
    for d in sorted(deliveries, key=lambda d: d.t):
        if d.t < t_cut:
            here = (d.topic, d.partition)
            passed[here] = max(passed.get(here, -1), d.offset)
        ident = (d.topic, d.partition, d.offset)
        if ident not in seen:
            seen.add(ident)
        elif d.t < t_cut:
            dups_before += 1
        else:
            dups_after += 1
    lost_before = lost_after = 0
    for topic, partition, offset in lost:
        if passed.get((topic, partition), -1) > offset:
            lost_before += 1
        else:
            lost_after += 1
    overlaps_before = overlaps_after = 0
    for overlap in overlaps:
        if max(overlap.first.start, overlap.second.start) < t_cut:
            overlaps_before += 1
        else:
            overlaps_after += 1
    return (
        StepGuarantees(lost_before, dups_before, overlaps_before),
        StepGuarantees(lost_after, dups_after, overlaps_after),
    )


@dataclass(frozen=True)
class KillFigures:
    """What the kill step cost (module docstring for the definitions)."""

    #: the killed incarnation (``m9#0``)
    killed: str
    stable_s: float
    paused_partition_s: float
    #: the same pause split by kept and moved partitions (``pause.moved``: partitions whose
    #: owner at ``t_stable`` is not the one at ``t_kill``)
    pause: KeptMoved
    #: lost, duplicated and doubly-owned records of the kill step (:func:`split_at`)
    guarantees: StepGuarantees


def kill_figures(
    killed: str,
    t_kill: float,
    t_stable: float,
    intervals: Sequence[Interval],
    partitions: Sequence[Partition],
    after: StepGuarantees,
) -> KillFigures:
    """The kill step's figures over ``[t_kill, t_stable]``; ``after``: the guarantee
    figures :func:`split_at` gave the kill."""
    return KillFigures(
        killed,
        t_stable - t_kill,
        bounce_figures(intervals, (), partitions, t_kill, t_stable).paused_partition_s,
        kept_moved_pause(intervals, partitions, t_kill, t_stable),
        after,
    )
