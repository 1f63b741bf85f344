"""The kill step of ``make bench-scale`` (issue 38, "one member killed"): its figures and how
the run's lost records, duplicates and two owners are cut between the restarts and the kill,
computed from synthetic event reports (the members' own callbacks, commits and deliveries,
turned into ownership intervals exactly as a real run's are), and where the killed member
runs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from kafka_sticky_plugin.demo.kill_metrics import kill_figures, split_at
from kafka_sticky_plugin.demo.scenario import (
    KillRecord,
    RestartRecord,
    StrategyResult,
    process_plan,
)
from kafka_sticky_plugin.groups.analysis import (
    analyse_deliveries,
    find_overlaps,
    ownership_intervals,
    pause_report,
)
from kafka_sticky_plugin.groups.events import Delivery, OwnershipEvent, Partition
from kafka_sticky_plugin.groups.runner import StableGroup
from testlab.bench_scale import ScaleRow, format_table, session_timeout_s
from testlab.rolling_compare import PEERS, measure

P = [("t", i) for i in range(6)]
COOPERATIVE = next(p for p in PEERS if p.key == "kafka-python/cooperative-sticky")
T_KILL, T_STABLE, END = 20.0, 32.0, 40.0


def _ev(
    t: float,
    member: str,
    kind: str,
    parts: Sequence[Partition] = (),
    inc: int = 0,
    offsets: tuple[int, ...] = (),
) -> OwnershipEvent:
    return OwnershipEvent(
        t=t, member=member, incarnation=inc, kind=kind, partitions=tuple(parts), offsets=offsets
    )


def _deliver(
    t0: float, member: str, partition: Partition, offsets: range, inc: int = 0
) -> list[Delivery]:
    return [
        Delivery(t0 + 0.01 * i, member, inc, partition[0], partition[1], offset, 0)
        for i, offset in enumerate(offsets)
    ]


def _run(eager_after_kill: bool = False) -> tuple[list[OwnershipEvent], list[Delivery]]:
    """m0, m1, m2 own two partitions each from t=0. m0 restarts at 10 (P0 to m1, P1 to m2,
    then m0#1 takes P0 back at 14.5). m2 (P1, P4, P5) is killed at 20 (its ``killed`` event
    at 20.5); at 31 the survivors take P1, P4, P5 (with ``eager_after_kill`` they first give
    up everything at 30 and get their own back at 31 too).

    Deliveries: P0 offset 3 delivered by m0#0 at 5 and again by m1#0 at 11.5 (the restart's
    one duplicate, offset 3 committed at 9.9: in flight); P4 0-9 by m2 before its commit of
    10 at 3, 10-14 at 19 (never committed), then 10-19 by m0#1 from 31.5: five duplicates
    of the kill."""
    events = [
        _ev(0.0, "m0", "assigned", P[0:2]),
        _ev(0.0, "m1", "assigned", P[2:4]),
        _ev(0.0, "m2", "assigned", P[4:6]),
        _ev(9.9, "m0", "committed", [P[0]], offsets=(3,)),
        _ev(3.0, "m2", "committed", [P[4]], offsets=(10,)),
        _ev(10.0, "m0", "revoked", P[0:2]),
        _ev(10.0, "m0", "closing"),
        _ev(10.1, "m0", "stopped"),
        _ev(11.0, "m1", "assigned", [P[0]]),
        _ev(11.0, "m2", "assigned", [P[1]]),
        _ev(14.0, "m1", "revoked", [P[0]]),
        _ev(14.5, "m0", "assigned", [P[0]], inc=1),
        _ev(T_KILL + 0.5, "m2", "killed"),
    ]
    if eager_after_kill:
        events += [
            _ev(30.0, "m0", "revoked", [P[0]], inc=1),
            _ev(30.0, "m1", "revoked", P[2:4]),
            _ev(31.0, "m0", "assigned", [P[0], P[4]], inc=1),
            _ev(31.0, "m1", "assigned", [P[1], *P[2:4], P[5]]),
        ]
    else:
        events += [
            _ev(31.0, "m0", "assigned", [P[4]], inc=1),
            _ev(31.0, "m1", "assigned", [P[1], P[5]]),
        ]
    deliveries = [
        *_deliver(5.0, "m0", P[0], range(3, 4)),
        *_deliver(11.5, "m1", P[0], range(3, 4)),
        *_deliver(2.0, "m2", P[4], range(0, 10)),
        *_deliver(19.0, "m2", P[4], range(10, 15)),
        *_deliver(31.5, "m0", P[4], range(10, 20), inc=1),
        *_deliver(1.0, "m1", P[2], range(0, 8)),
    ]
    return events, deliveries


def _stable(t: float, owners: dict[str, list[Partition]]) -> StableGroup:
    return StableGroup(1, t, {m: tuple(parts) for m, parts in owners.items()})


def _result(
    events: list[OwnershipEvent], deliveries: list[Delivery], acknowledged_extra: set[Delivery]
) -> StrategyResult:
    intervals = tuple(ownership_intervals(events, END))
    acknowledged: dict[Partition, set[int]] = {}
    for d in [*deliveries, *acknowledged_extra]:
        acknowledged.setdefault((d.topic, d.partition), set()).add(d.offset)
    before = _stable(0.0, {"m0": P[0:2], "m1": P[2:4], "m2": P[4:6]})
    rolled = _stable(15.5, {"m0": [P[0]], "m1": P[2:4], "m2": [P[1], *P[4:6]]})
    restart = RestartRecord("m0", "m0#0", 10.0, 15.5, before, rolled, 0, 2, 12.0, 13.0)
    after = _stable(T_STABLE, {"m0": [P[0], P[4]], "m1": [P[1], *P[2:4], P[5]]})
    return StrategyResult(
        strategy="s",
        group_id="g",
        topic="t",
        partitions=tuple(P),
        t_origin=0.0,
        t_end=END,
        restarts=(restart,),
        pause=pause_report(list(intervals), P, 10.0, 16.0),
        deliveries=analyse_deliveries(acknowledged, deliveries, events),
        intervals=intervals,
        overlaps=len(find_overlaps(intervals)),
        rounds=2,
        produced=sum(len(v) for v in acknowledged.values()),
        window=(10.0, 16.0),
        delivery_log=tuple(sorted(deliveries, key=lambda d: d.t)),
        kill=KillRecord("m2", "m2#0", T_KILL, T_STABLE, rolled, after),
    )


def test_a_cooperative_kill_pauses_only_the_killed_members_partitions() -> None:
    events, deliveries = _run()
    intervals = ownership_intervals(events, END)
    _, after = split_at(T_KILL, deliveries, (), find_overlaps(intervals))
    kill = kill_figures("m2#0", T_KILL, T_STABLE, intervals, P, after)
    assert kill.stable_s == 12.0
    # P1, P4, P5 had nobody from m2's killed event (20.5) to 31: 10.5 s each.
    assert abs(kill.paused_partition_s - 3 * 10.5) < 1e-9
    assert kill.pause.kept_paused_s == 0.0 and abs(kill.pause.moved_paused_s - 3 * 10.5) < 1e-9
    assert kill.pause.moved == 3
    assert (kill.guarantees.lost, kill.guarantees.duplicates, kill.guarantees.overlaps) == (0, 5, 0)


def test_an_eager_kill_also_pauses_the_partitions_that_kept_their_owner() -> None:
    events, _ = _run(eager_after_kill=True)
    intervals = ownership_intervals(events, END)
    kill = kill_figures("m2#0", T_KILL, T_STABLE, intervals, P, split_at(T_KILL, [], (), ())[1])
    # P0, P2, P3 were given up at 30 and back to the same consumers at 31: kept, 1 s each.
    assert (kill.pause.kept_paused_s, kill.pause.moved) == (3.0, 3)
    assert abs(kill.paused_partition_s - (3.0 + 3 * 10.5)) < 1e-9


def test_the_guarantee_figures_are_cut_at_the_kill_and_add_up_to_the_run() -> None:
    events, deliveries = _run()
    # P2 offset 5 was skipped before the kill (6 and 7 came); P4 offset 25 was still to
    # come when m2 died and never came; an overlap after the kill (m1 takes P4 at 33 while
    # m0#1 owns it).
    lost = [("t", 2, 5), ("t", 4, 25)]
    deliveries = [d for d in deliveries if (d.partition, d.offset) != (2, 5)]
    events.append(_ev(33.0, "m1", "assigned", [P[4]]))
    overlaps = find_overlaps(ownership_intervals(events, END))
    before, after = split_at(T_KILL, deliveries, lost, overlaps)
    assert (before.lost, before.duplicates, before.overlaps) == (1, 1, 0)
    assert (after.lost, after.duplicates, after.overlaps) == (1, 5, 1)
    whole = analyse_deliveries({}, deliveries, events)
    assert before.duplicates + after.duplicates == whole.duplicates
    assert before.overlaps + after.overlaps == len(overlaps)


def test_the_row_reports_the_restarts_and_the_kill_apart_and_kill_duplicates_break_nothing() -> (
    None
):
    events, deliveries = _run()
    row = measure(COOPERATIVE, _result(events, deliveries, set()))
    assert (row.duplicates, row.lost, row.overlaps) == (1, 0, 0)  # the restart's only
    assert row.kill is not None and row.kill.killed == "m2#0"
    assert (
        row.kill.guarantees.duplicates,
        row.kill.guarantees.lost,
        row.kill.guarantees.overlaps,
    ) == (5, 0, 0)
    assert row.problems == ()  # re-deliveries from the last commit are justified
    # the restart window [10, 16] ends before the kill: m2's partitions' pause is not in it
    assert row.paused_ps_per_bounce < 10.0


def test_a_record_lost_through_the_kill_is_a_broken_guarantee_of_the_kill() -> None:
    events, deliveries = _run()
    never = Delivery(0.0, "-", 0, "t", 4, 25, 0)  # acknowledged, never delivered
    row = measure(COOPERATIVE, _result(events, deliveries, {never}))
    assert row.lost == 0 and row.kill is not None and row.kill.guarantees.lost == 1
    assert row.problems == ("1 acknowledged records never delivered",)


def _scale(kill: bool) -> ScaleRow:
    events, deliveries = _run()
    result = _result(events, deliveries, set())
    if not kill:
        result = replace(result, kill=None)
    row = measure(COOPERATIVE, result)
    return ScaleRow(10, 6, row, 2.5, 0.5, 1.0, 2.0, 0.7, 5.0, session_timeout_s("classic"))


def test_the_table_has_the_kill_columns() -> None:
    lines = format_table([_scale(True), _scale(False)]).splitlines()
    header = [c.strip() for c in lines[0].split("|")]
    killed = dict(zip(header, (c.strip() for c in lines[2].split("|")), strict=True))
    assert killed["kill: stable s (session s)"] == "12.0 (10)"
    assert killed["kill: paused p*s"] == "31.5"
    assert killed["kill: kept + moved p*s"] == "0.0 + 31.5"
    assert killed["kill: lost / dups / two owners"] == "0 / 5 / 0"
    assert (killed["lost"], killed["dups"], killed["two owners"]) == ("0", "1", "0")
    plain = dict(zip(header, (c.strip() for c in lines[3].split("|")), strict=True))
    assert plain["kill: stable s (session s)"] == "n/a" and plain["dups"] == "6"


def test_the_session_timeout_bounding_the_kill_follows_the_protocol() -> None:
    assert session_timeout_s("classic") == 10.0
    assert session_timeout_s("consumer") == 6.0  # the lab broker's KIP-848 setting


def test_the_killed_member_runs_alone_in_its_own_process() -> None:
    names = [f"m{i}" for i in range(12)]
    assert process_plan(names, 5, kill_one=True) == [
        names[0:5],
        names[5:10],
        ["m10"],
        ["m11"],
    ]
    assert process_plan(names, 12, kill_one=True) == [names[:11], ["m11"]]
    assert process_plan(names, 0, kill_one=True) == [["m11"]]  # the others: threads/JVMs
    assert process_plan(names, 5, kill_one=False) == [names[0:5], names[5:10], names[10:]]
    assert process_plan(names, 0, kill_one=False) == []
