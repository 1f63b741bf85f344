"""The pure rebalance simulator: protocol rounds, metrics, invariants, caps (no JVM)."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Mapping, Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import scenarios

from kafka_sticky_plugin.assignor.strategies import STRATEGIES
from kafka_sticky_plugin.core import sticky_assign
from kafka_sticky_plugin.simulate.checks import specs_of
from kafka_sticky_plugin.simulate.group import Member
from kafka_sticky_plugin.simulate.model import (
    EVENT_KINDS,
    STATUS_BASELINE_ERROR,
    STATUS_OK,
    STATUS_TIME_CAP,
    Event,
    EventResult,
    Scenario,
)
from kafka_sticky_plugin.simulate.simulator import build_group, simulate
from kafka_sticky_plugin.simulate.strategies import STRATEGY_NAMES, Plan, Strategy, get_strategy

OURS = tuple(STRATEGIES)


def scenario(
    events: Sequence[Event],
    *,
    members: int = 4,
    topics: Sequence[tuple[str, int]] = (("a", 6), ("b", 5)),
    shape: str = "homogeneous",
    seed: int = 11,
) -> Scenario:
    return Scenario("s", seed, members, tuple(topics), shape, tuple(events))


def timeless(rows: Sequence[EventResult]) -> list[dict[str, object]]:
    out = []
    for row in rows:
        data = dataclasses.asdict(row)
        del data["compute_s"], data["max_compute_s"]
        out.append(data)
    return out


@given(scenarios(), st.sampled_from(OURS))
def test_our_strategies_break_no_invariant(sc: Scenario, name: str) -> None:
    """On random groups and traces, ours never breaks validity, completeness, balance,
    stickiness or the cooperative contract, and cooperative rebalances converge."""
    rows = simulate(sc, get_strategy(name))
    assert [r.first_violation for r in rows if r.violations] == []
    assert all(r.converged and r.status == STATUS_OK for r in rows)


@given(scenarios())
def test_membership_trace_is_the_same_for_every_strategy(sc: Scenario) -> None:
    """Membership never depends on the assignment, so strategies are compared on one trace."""
    traces = {
        name: [(r.event_kind, r.members, r.partitions, r.rebalances) for r in simulate(sc, s)]
        for name in ("sticky", "cooperative-sticky", "kafka-python-range")
        for s in [get_strategy(name)]
    }
    assert traces["sticky"] == traces["cooperative-sticky"] == traces["kafka-python-range"]


def test_same_scenario_same_rows() -> None:
    """A scenario's seed fixes every random choice: two runs give identical rows."""
    sc = scenario([Event(kind, 2) for kind in EVENT_KINDS], members=6, shape="random")
    for name in STRATEGY_NAMES:
        strategy = get_strategy(name)
        assert timeless(simulate(sc, strategy)) == timeless(simulate(sc, strategy))


def test_eager_rebalance_stops_everything_for_one_round() -> None:
    """Eager: every consumed partition is revoked and every partition pauses for the round."""
    sc = scenario([Event("join")], members=3)
    initial, join = simulate(sc, get_strategy("sticky"))
    assert (initial.rounds, initial.revoked, initial.paused_partition_rounds) == (1, 0, 11)
    assert (join.rounds, join.revoked, join.paused_partition_rounds) == (1, 11, 11)


def test_cooperative_join_moves_only_what_the_newcomer_gets() -> None:
    """Cooperative join, homogeneous: round 1 revokes the partitions that move, round 2 hands
    them over; nothing else pauses, and the newcomer's share is exactly what moved."""
    sc = scenario([Event("join")], members=3, topics=[("a", 12)])
    _, join = simulate(sc, get_strategy("cooperative-sticky"))
    assert join.rounds == 2
    assert join.moved == join.revoked == 3  # 12 partitions over 4 members: 3 each
    assert join.paused_partition_rounds == 3  # the three moving partitions, during round 2
    assert join.fresh_assigned == 0


def test_sticky_join_moves_the_minimum() -> None:
    """Eager sticky keeps every partition it can: a join moves exactly the newcomer's share."""
    sc = scenario([Event("join")], members=4, topics=[("a", 20)])
    _, join = simulate(sc, get_strategy("sticky"))
    assert join.moved == 4 and join.max_min_load == 0


def test_range_moves_more_than_sticky_on_a_join() -> None:
    """The baseline range assignor reshuffles: more moves than sticky for the same join."""
    sc = scenario([Event("join")], members=4, topics=[("a", 20)])
    sticky = simulate(sc, get_strategy("sticky"))[1]
    ranged = simulate(sc, get_strategy("kafka-python-range"))[1]
    assert ranged.moved > sticky.moved


def test_crash_orphans_the_crashed_members_partitions() -> None:
    """A crashed member's partitions go unconsumed until the session timeout: counted, then
    reassigned as fresh (nobody consumed them when the rebalance started)."""
    sc = scenario([Event("crash", 1)], members=4, topics=[("a", 8)])
    _, crash = simulate(sc, get_strategy("sticky"))
    assert crash.orphaned_during_timeout == 2
    assert crash.members == 3
    assert crash.fresh_assigned == 2 and crash.moved == 0


def test_pause_returns_with_stale_claims_that_lose() -> None:
    """A member paused past the session timeout comes back claiming its old partitions at its
    old generation (KIP-341): two rebalances, and no invariant breaks (stale claims lose)."""
    sc = scenario([Event("pause", 1)], members=3, topics=[("a", 9)])
    for name in OURS:
        _, pause = simulate(sc, get_strategy(name))
        assert pause.rebalances == 2
        assert pause.orphaned_during_timeout == 3
        assert pause.violations == 0, pause.first_violation
        assert pause.members == 3


def test_rolling_restart_runs_two_rebalances_per_batch() -> None:
    """Each batch leaves (one rebalance) and comes back as new members (another)."""
    sc = scenario([Event("rolling_restart", 3)], members=6)
    _, restart = simulate(sc, get_strategy("sticky"))
    assert restart.rebalances == 6 and restart.members == 6


def test_topic_events_change_partition_counts() -> None:
    """partitions_added grows one topic; topic_added adds one; topic_deleted removes one."""
    sc = scenario(
        [Event("partitions_added", 4, topic="a"), Event("topic_added", 7), Event("topic_deleted")],
        topics=[("a", 6), ("b", 5)],
    )
    rows = simulate(sc, get_strategy("cooperative-sticky"))
    assert [r.partitions for r in rows] == [11, 15, 22, rows[3].partitions]
    assert rows[3].partitions in (22 - 10, 22 - 5, 22 - 7)
    assert all(r.violations == 0 for r in rows)


def test_subscription_change_revokes_dropped_topics_first() -> None:
    """A member whose subscription changes revokes the dropped topics' partitions before it
    rejoins (as real clients do), so the cooperative contract holds."""
    sc = scenario([Event("subscription_change", members=("m00000",), topics=("b",))])
    _, change = simulate(sc, get_strategy("cooperative-sticky"))
    assert change.violations == 0, change.first_violation
    assert change.revoked >= 1


def _everything_to_first(
    topics: Mapping[str, int], members: Sequence[Member]
) -> tuple[Plan, float]:
    plan: Plan = {m.member_id: [] for m in members}
    first = members[0]
    plan[first.member_id] = sorted(
        (t, p) for t in first.topics if t in topics for p in range(topics[t])
    )
    return plan, 0.0


def _eager_plan_as_cooperative(
    topics: Mapping[str, int], members: Sequence[Member]
) -> tuple[Plan, float]:
    return sticky_assign(topics, specs_of(members)), 0.0


def test_checks_catch_an_unbalanced_strategy() -> None:
    """The invariant checks can fail: a strategy giving everything to one member is caught."""
    greedy = Strategy("greedy", cooperative=False, baseline=False, assign=_everything_to_first)
    rows = simulate(scenario([Event("join")], members=3, topics=[("a", 9)]), greedy)
    assert all(r.violations >= 1 for r in rows)
    assert "not load-optimal" in rows[0].first_violation


def test_checks_catch_a_cooperative_contract_breach() -> None:
    """Running the eager plan as a cooperative round hands over partitions still owned."""
    broken = Strategy("eager-as-coop", True, False, _eager_plan_as_cooperative)
    sc = scenario([Event("join")], members=3, topics=[("a", 9)])
    _, join = simulate(sc, broken)
    assert join.violations >= 1
    assert "still" in join.first_violation


def test_size_cap_skips_a_baseline_without_running_it() -> None:
    """A baseline above its size cap is reported as time_cap_exceeded on every row."""
    sc = scenario([Event("join"), Event("leave")], members=4, topics=[("a", 10)])
    rows = simulate(sc, get_strategy("kafka-python-sticky"), size_cap=39.0)
    assert [r.status for r in rows] == [STATUS_TIME_CAP] * 3
    assert all(r.rebalances == 0 for r in rows)
    ours = simulate(sc, get_strategy("sticky"), size_cap=39.0)
    assert all(r.status == STATUS_OK for r in ours)


def test_time_cap_cuts_a_baseline_after_the_cap() -> None:
    """Once a baseline's compute time passes the cap, the remaining rows are capped."""
    sc = scenario([Event("join"), Event("leave")], members=4, topics=[("a", 10)])
    rows = simulate(sc, get_strategy("kafka-python-sticky"), time_cap_s=0.0)
    assert [r.status for r in rows] == [STATUS_OK, STATUS_TIME_CAP, STATUS_TIME_CAP]


def test_baseline_exception_is_reported_not_raised() -> None:
    """kafka-python 3.0.12's round-robin raises KeyError when the first member in its cycle
    does not subscribe to a topic; the simulator records it and stops that run."""
    sc = scenario([Event("join")], members=2, topics=[("a", 2), ("b", 2)])
    sc = dataclasses.replace(sc, initial_members=(("m0", ("b",)), ("m1", ("a", "b"))))
    rows = simulate(sc, get_strategy("kafka-python-roundrobin"))
    assert [r.status for r in rows] == [STATUS_BASELINE_ERROR] * 2
    assert rows[0].error.startswith("KeyError")


@pytest.mark.parametrize("name", STRATEGY_NAMES)
def test_every_strategy_runs_every_event_kind(name: str) -> None:
    """Every strategy completes a homogeneous trace with every event kind (the last one,
    subscription_change, makes subscriptions unequal: kafka-python's round-robin fails
    there, see test_baseline_exception_is_reported_not_raised)."""
    sc = scenario([Event(kind, 2) for kind in EVENT_KINDS], members=5)
    rows = simulate(sc, get_strategy(name))
    assert [r.event_kind for r in rows] == ["initial", *EVENT_KINDS]
    assert rows[-1].event_kind == "subscription_change"
    assert all(r.status == STATUS_OK for r in rows[:-1])
    last = STATUS_BASELINE_ERROR if name == "kafka-python-roundrobin" else STATUS_OK
    assert rows[-1].status == last
    assert sum(r.moved for r in rows) > 0


def test_initial_group_follows_the_shape() -> None:
    """disjoint: members of different buckets share no topic; nested: subscriptions nest."""
    topics = [(f"t{i}", 2) for i in range(4)]
    disjoint = build_group(scenario([], members=8, topics=topics, shape="disjoint"))
    subs = {m.topics for m in disjoint.members.values()}
    assert len(subs) == 4 and all(len(set(a) & set(b)) == 0 for a in subs for b in subs if a != b)
    nested = build_group(scenario([], members=4, topics=topics, shape="nested"))
    ordered = sorted((m.topics for m in nested.members.values()), key=len)
    assert all(set(a) <= set(b) for a, b in itertools.pairwise(ordered))
