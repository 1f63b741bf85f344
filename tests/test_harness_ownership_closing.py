"""Two owners only when two members could deliver or commit one partition at once
(``kafka_sticky_plugin/groups/analysis.py``, the ``closing`` event), and a run's problem line
naming the first of them (``demo/report.py``), without a broker.

The events are those of the 50-member aiokafka row of ``make bench-scale`` that reported 12
"two owners" (commit 61c7a63, 2026-12-04): at the end of the run member m7 made its last
commit, then ``stop()`` sent its LeaveGroup, the group went on without it and m47 was
assigned m7's partition 8 ms later, while m7's ``stopped`` was stamped only once ``stop()``
had returned (another 27 ms). m7 delivered nothing after 19.213 and committed nothing after
19.946, so nobody held the partition twice. Times below are those of the run, minus 13600 s.
"""

from __future__ import annotations

from kafka_sticky_plugin.demo.report import broken_guarantees
from kafka_sticky_plugin.demo.scenario import StrategyResult
from kafka_sticky_plugin.groups.analysis import (
    DeliveryReport,
    PauseReport,
    current_ownership,
    find_overlaps,
    ownership_intervals,
)
from kafka_sticky_plugin.groups.events import OwnershipEvent, Partition

P: Partition = ("demo", 11)
Q: Partition = ("demo", 12)


def _event(t: float, member: str, kind: str, *parts: Partition) -> OwnershipEvent:
    return OwnershipEvent(t=t, member=member, incarnation=0, kind=kind, partitions=parts)


def _handover(closing_at: float | None) -> list[OwnershipEvent]:
    """m7 owns P from 1.805 and leaves cleanly; m47 is assigned P at 19.954; m7's ``stopped``
    is at 19.981. ``closing_at``: when m7 reported ``closing`` (None: it did not)."""
    events = [
        _event(1.805, "m7", "assigned", P, Q),
        _event(19.9455, "m7", "committed", P, Q),
        _event(19.9541, "m47", "assigned", P),
        _event(19.9807, "m7", "stopped"),
    ]
    if closing_at is not None:
        events.append(_event(closing_at, "m7", "closing", P, Q))
    return events


def test_a_clean_stop_stamped_after_the_leave_is_one_owner_once_closing_is_reported() -> None:
    """Ending m7's ownership at ``stopped`` counts the hand-over as two owners (the old
    measure: 1 overlap on P); its ``closing`` (after its last commit, before the LeaveGroup)
    ends it where it really ended: none."""
    without = find_overlaps(ownership_intervals(_handover(None), 30.0))
    assert [(o.partition, o.first.key, o.second.key) for o in without] == [(P, "m7#0", "m47#0")]
    intervals = ownership_intervals(_handover(19.9460), 30.0)
    assert find_overlaps(intervals) == []
    m7 = {i.partition: (i.start, i.end) for i in intervals if i.key == "m7#0"}
    assert m7 == {P: (1.805, 19.9460), Q: (1.805, 19.9460)}


def test_a_new_owner_before_the_old_ones_closing_is_still_two_owners() -> None:
    """``closing`` moves the end of the old owner's interval, nothing more: when m47 is
    assigned P while m7 can still deliver it (m7's ``closing`` comes later), that is counted."""
    overlaps = find_overlaps(ownership_intervals(_handover(19.9600), 30.0))
    assert [(o.partition, o.first.key, o.second.key) for o in overlaps] == [(P, "m7#0", "m47#0")]
    assert overlaps[0].first.end == 19.9600


def test_an_assignment_completed_while_closing_opens_nothing() -> None:
    """A rebalance the closing consumer completes inside ``stop()`` reports ``assigned``, but
    its loop is gone: it delivers nothing, so it owns nothing (and is no live owner)."""
    events = [
        _event(1.0, "m7", "assigned", P),
        _event(5.0, "m7", "closing", P),
        _event(5.1, "m7", "assigned", P, Q),
        _event(5.2, "m47", "assigned", Q),
        _event(5.3, "m7", "stopped"),
        _event(5.2, "m47", "assigned", P),
    ]
    intervals = ownership_intervals(events, 10.0)
    assert find_overlaps(intervals) == []
    assert [(i.key, i.partition, i.start, i.end) for i in intervals if i.key == "m7#0"] == [
        ("m7#0", P, 1.0, 5.0)
    ]
    assert "m7#0" not in current_ownership(events)


def test_current_ownership_leaves_a_closing_member_out() -> None:
    """Between ``closing`` and ``stopped`` the member is no live owner any more."""
    events = [
        OwnershipEvent(1.0, "m1", 0, "assigned", (P,), owned_after=(P,)),
        OwnershipEvent(1.0, "m2", 0, "assigned", (Q,), owned_after=(Q,)),
        OwnershipEvent(2.0, "m1", 0, "closing", (P,), owned_after=(P,)),
    ]
    assert current_ownership(events) == {"m2#0": (Q,)}


def test_the_problem_line_names_the_first_overlap() -> None:
    """A run with two owners says which partition, which incarnations and when (so a bench
    row's "two owners" can be looked into without re-running it)."""
    intervals = tuple(ownership_intervals(_handover(19.9600), 30.0))
    result = StrategyResult(
        strategy="s",
        group_id="g",
        topic="demo",
        partitions=(P, Q),
        t_origin=0.0,
        t_end=30.0,
        restarts=(),
        pause=PauseReport(0.0, 0.0, 0.0, 0),
        deliveries=DeliveryReport(0, 0, 0, (), ()),
        intervals=intervals,
        overlaps=len(find_overlaps(intervals)),
        rounds=0,
        produced=0,
    )
    assert broken_guarantees(result) == [
        "1 times a partition had two owners at once (first: ('demo', 11) owned by m7#0"
        " [1.805, 19.960) and m47#0 [19.954, 30.000))"
    ]
