"""The split of a restart's pause into kept and moved partitions, and the time a staying
member owned nothing (issue 38), computed from synthetic event reports: the members' own
rebalance callbacks, turned into ownership intervals exactly as a real run's are."""

from __future__ import annotations

from kafka_sticky_plugin.demo.bounce_metrics import (
    bounce_figures,
    kept_moved_pause,
    unable_to_consume,
)
from kafka_sticky_plugin.groups.analysis import ownership_intervals
from kafka_sticky_plugin.groups.events import OwnershipEvent, Partition

P = [("t", i) for i in range(4)]


def _ev(t: float, member: str, kind: str, parts: list[Partition], inc: int = 0) -> OwnershipEvent:
    return OwnershipEvent(t=t, member=member, incarnation=inc, kind=kind, partitions=tuple(parts))


def _start() -> list[OwnershipEvent]:
    """m0 owns t-0 and t-1, m1 owns t-2 and t-3, from t=0."""
    return [_ev(0.0, "m0", "assigned", P[:2]), _ev(0.0, "m1", "assigned", P[2:])]


def test_eager_round_pauses_kept_partitions_and_stalls_the_staying_member() -> None:
    # m0 restarts at 10: eager, m1 gives up everything at 10.5 and gets t-2, t-3 back at 12
    # (kept, 1.5 s each) plus t-0 (moved: 2 s, from m0's stop at 10 to 12); t-1 goes to
    # m0's successor m0#1 at 13 (moved: 3 s).
    events = [
        *_start(),
        _ev(10.0, "m0", "revoked", P[:2]),
        _ev(10.0, "m0", "stopped", []),
        _ev(10.5, "m1", "revoked", P[2:]),
        _ev(12.0, "m1", "assigned", [P[0], *P[2:]]),
        _ev(13.0, "m0", "assigned", [P[1]], inc=1),
    ]
    intervals = ownership_intervals(events, 20.0)
    split = kept_moved_pause(intervals, P, 10.0, 20.0)
    assert (split.kept, split.moved) == (2, 2)
    assert abs(split.kept_paused_s - 3.0) < 1e-9
    assert abs(split.moved_paused_s - 5.0) < 1e-9
    whole = bounce_figures(intervals, [], P, 10.0, 20.0).paused_partition_s
    assert abs(split.kept_paused_s + split.moved_paused_s - whole) < 1e-9
    # m1 stays and owned nothing from 10.5 to 12; m0 (restarted) and m0#1 (its successor)
    # are not staying members.
    assert unable_to_consume(intervals, 10.0, 20.0) == {"m1#0": 1.5}


def test_cooperative_round_keeps_partitions_without_pause() -> None:
    # m1 keeps t-2 and t-3 throughout; m0 stops at 10.5 (after the window's start: it owned
    # partitions then, but not at the end, so it is no staying member); t-0 goes to m1 and
    # t-1 to m0's successor at 11 (moved, paused 0.5 s each).
    events = [
        *_start(),
        _ev(10.5, "m0", "revoked", P[:2]),
        _ev(10.5, "m0", "stopped", []),
        _ev(11.0, "m1", "assigned", [P[0]]),
        _ev(11.0, "m0", "assigned", [P[1]], inc=1),
    ]
    intervals = ownership_intervals(events, 20.0)
    split = kept_moved_pause(intervals, P, 10.0, 20.0)
    assert (split.kept, split.moved, split.kept_paused_s) == (2, 2, 0.0)
    assert abs(split.moved_paused_s - 1.0) < 1e-9
    assert unable_to_consume(intervals, 10.0, 20.0) == {"m1#0": 0.0}


def test_revoked_and_given_back_to_the_same_consumer_is_kept_and_partial_loss_is_not_idle() -> None:
    # m1 gives t-3 up at 12 and gets it back at 12.5 (kept, 0.5 s); it still owned t-2, so it
    # was never unable to consume; t-0 moves from m0 to m1 without a gap (not paused).
    events = [
        *_start(),
        _ev(12.0, "m1", "revoked", [P[3]]),
        _ev(12.5, "m1", "assigned", [P[3]]),
        _ev(14.0, "m0", "revoked", [P[0]]),
        _ev(14.0, "m1", "assigned", [P[0]]),
    ]
    intervals = ownership_intervals(events, 20.0)
    split = kept_moved_pause(intervals, P, 10.0, 20.0)
    assert (split.kept, split.moved) == (3, 1)
    assert abs(split.kept_paused_s - 0.5) < 1e-9 and split.moved_paused_s == 0.0
    assert unable_to_consume(intervals, 10.0, 20.0) == {"m0#0": 0.0, "m1#0": 0.0}
