"""The contract every registered strategy keeps, one suite over the registry.

Like Apache Kafka's ``AbstractStickyAssignorTest`` and franz-go's shared balancer tests: each
test is parametrized over :data:`~kafka_sticky_plugin.assignor.strategies.STRATEGIES`, so a
strategy added to the registry runs the whole suite without a line here. What it checks:

- validity and balance: every partition of a subscribed topic to exactly one subscriber, none
  twice, load-optimal (the shipped checkers of :mod:`kafka_sticky_plugin.invariants`);
- stickiness on the standard scenarios (KIP-54 examples 1-3, member leave and join, topic
  added, removed and grown, a subscription change): the final plan keeps the most validated
  claims any load-optimal plan keeps (:func:`engine_helpers.improving_cycle`, a certificate
  independent of the engine) and, for equal subscriptions, every member keeps
  ``min(owned, final)``;
- generations (KIP-341 stale claims, KIP-792 generation in the subscription): the highest
  generation wins a contested claim, a stale member never takes a current owner's partition;
- determinism: member and claim order, repeated calls, feeding a plan back;
- the cooperative rule for cooperative strategies (KIP-429): no partition goes to a new owner in
  the round it is revoked, and rounds re-run until nothing is revoked converge;
- the leader's bytes path (:func:`~kafka_sticky_plugin.assignor.assign_group`): members'
  subscription bytes in, assignment bytes out, equal to the strategy's typed plan.

A cooperative strategy's plan is judged once its rounds converge (:func:`settle`); every round
on the way is checked against validity and the cooperative rule. Properties are asserted, not
Java's expected lists (some of those depend on ``HashMap`` order). The suite proves it can
fail: :func:`test_the_suite_rejects_a_broken_engine` runs it against engines that drop a
partition, give one to two members, or hand over an owned partition at once.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
from engine_helpers import Plan, feed_back, improving_cycle, members_from, moved, run_cooperative
from hypothesis import given
from hypothesis import strategies as st
from strategies import Group, groups

from kafka_sticky_plugin.assignor import STRATEGIES, MemberMetadata, Strategy, assign_group
from kafka_sticky_plugin.assignor.member import MemberState
from kafka_sticky_plugin.assignor.rebalance import RebalanceProtocol
from kafka_sticky_plugin.codec import decode_assignment
from kafka_sticky_plugin.core import MemberSpec, sticky_assign
from kafka_sticky_plugin.errors import InvariantViolation
from kafka_sticky_plugin.invariants import check_plan, check_sticky


def contract_params(registry: Mapping[str, Strategy]) -> list[Any]:
    """One pytest parameter per registered strategy, named after it."""
    return [pytest.param(strategy, id=name) for name, strategy in registry.items()]


EVERY = contract_params(STRATEGIES)
COOPERATIVE = contract_params({n: s for n, s in STRATEGIES.items() if s.cooperative})
Subscriptions = dict[str, list[str]]


def settle(strategy: Strategy, parts: Mapping[str, int], members: list[MemberSpec]) -> Plan:
    """The strategy's final plan for ``members``: one round when eager, the converged rounds
    when cooperative (each round checked for validity and the cooperative rule); the final plan
    passes every checker (validity, completeness, load optimality, stickiness, topic spread)."""
    if strategy.cooperative:
        plan, _ = run_cooperative(parts, members, engine=strategy.assign)
        return plan
    plan = strategy.assign(parts, members)
    check_plan(parts, members, plan)
    return plan


def check_stickiest(parts: Mapping[str, int], members: list[MemberSpec], plan: Plan) -> None:
    """``plan`` keeps as many validated claims of ``members`` as any load-optimal plan."""
    check_sticky(parts, members, plan)
    cycle = improving_cycle(parts, members, plan)
    if cycle is not None:
        raise InvariantViolation(f"a load-optimal plan keeps more claims: cycle {cycle}")


# -- the standard scenarios -----------------------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    """A stable group (``before``, planned fresh), then one change (``after``): the change's
    plan starts from everyone owning what the first plan gave them, at generation 1.
    ``expect(first, second)`` adds what the scenario promises beyond the common contract."""

    name: str
    parts_before: dict[str, int]
    before: Subscriptions
    parts_after: dict[str, int]
    after: Subscriptions
    expect: Callable[[Plan, Plan], None] = field(default=lambda first, second: None)


def _survivors_keep_everything(first: Plan, second: Plan) -> None:
    for member, partitions in second.items():
        assert set(first.get(member, [])) <= set(partitions), member


def _one_partition_moves(first: Plan, second: Plan) -> None:
    assert moved(first, second) == 1


def _all(topics: list[str], *members: str) -> Subscriptions:
    return {m: list(topics) for m in members}


FOUR_BY_TWO = {f"t{i}": 2 for i in range(4)}
NESTED = {"C0": ["t0"], "C1": ["t0", "t1"], "C2": ["t0", "t1", "t2"]}
SCENARIOS = [
    # KIP-54 example 1: 3 members, 4 topics x 2; C1 leaves; C0 and C2 keep all they had.
    Scenario(
        "kip54-example1-leave",
        FOUR_BY_TWO,
        _all(list(FOUR_BY_TWO), "C0", "C1", "C2"),
        FOUR_BY_TWO,
        _all(list(FOUR_BY_TWO), "C0", "C2"),
        _survivors_keep_everything,
    ),
    # KIP-54 example 2: nested subscriptions (round-robin is unbalanced here); C0 leaves.
    Scenario(
        "kip54-example2-leave",
        {"t0": 1, "t1": 2, "t2": 3},
        NESTED,
        {"t0": 1, "t1": 2, "t2": 3},
        {m: ts for m, ts in NESTED.items() if m != "C0"},
        _survivors_keep_everything,
    ),
    # KIP-54 example 3: C2 joins a balanced 2x2 group; exactly one partition moves.
    Scenario(
        "kip54-example3-join",
        {"t0": 2, "t1": 2},
        _all(["t0", "t1"], "C0", "C1"),
        {"t0": 2, "t1": 2},
        _all(["t0", "t1"], "C0", "C1", "C2"),
        _one_partition_moves,
    ),
    Scenario(
        "members-join",
        {"t": 7},
        _all(["t"], "a", "b"),
        {"t": 7},
        _all(["t"], "a", "b", "c", "d"),
    ),
    Scenario(
        "members-leave-different-subscriptions",
        {"t0": 3, "t1": 5, "t2": 2},
        {"a": ["t0", "t1"], "b": ["t1", "t2"], "c": ["t0", "t1", "t2"], "d": ["t1"]},
        {"t0": 3, "t1": 5, "t2": 2},
        {"b": ["t1", "t2"], "d": ["t1"]},
    ),
    Scenario(
        "topic-added",
        {"t0": 4},
        _all(["t0"], "a", "b", "c"),
        {"t0": 4, "t1": 5},
        _all(["t0", "t1"], "a", "b", "c"),
        _survivors_keep_everything,
    ),
    Scenario(
        "topic-removed",
        {"t0": 4, "t1": 5},
        _all(["t0", "t1"], "a", "b", "c"),
        {"t0": 4},
        _all(["t0", "t1"], "a", "b", "c"),
    ),
    Scenario(
        "partitions-added",
        {"t0": 3, "t1": 2},
        _all(["t0", "t1"], "a", "b"),
        {"t0": 8, "t1": 2},
        _all(["t0", "t1"], "a", "b"),
        _survivors_keep_everything,
    ),
    Scenario(
        "subscription-change",
        {"t0": 4, "t1": 4, "t2": 4},
        {"a": ["t0", "t1"], "b": ["t1", "t2"], "c": ["t0", "t2"]},
        {"t0": 4, "t1": 4, "t2": 4},
        {"a": ["t0"], "b": ["t1", "t2"], "c": ["t0", "t1", "t2"]},
    ),
]


def run_scenario(strategy: Strategy, scenario: Scenario) -> tuple[Plan, Plan]:
    """The scenario's two plans, each settled and checked (see :func:`settle`)."""
    first = settle(strategy, scenario.parts_before, members_from(scenario.before))
    members = feed_back(scenario.after, first, generation=1)
    second = settle(strategy, scenario.parts_after, members)
    check_stickiest(scenario.parts_after, members, second)
    scenario.expect(first, second)
    return first, second


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
@pytest.mark.parametrize("strategy", EVERY)
def test_standard_scenarios_are_valid_balanced_and_sticky(
    strategy: Strategy, scenario: Scenario
) -> None:
    """Each standard change gives a valid, complete, load-optimal plan that keeps the most
    claims any load-optimal plan keeps, plus what the scenario itself promises."""
    run_scenario(strategy, scenario)


@pytest.mark.parametrize("strategy", EVERY)
def test_kip54_example2_fresh_plan_is_the_balanced_one(strategy: Strategy) -> None:
    """KIP-54 example 2 fresh: loads 1, 2, 3 (round-robin's 1, 1, 4... is not load-optimal),
    and each member holds only topics it subscribes to."""
    parts = {"t0": 1, "t1": 2, "t2": 3}
    plan = settle(strategy, parts, members_from(NESTED))
    assert [len(plan[m]) for m in ("C0", "C1", "C2")] == [1, 2, 3]


# -- generations ----------------------------------------------------------------------------


@pytest.mark.parametrize("strategy", EVERY)
def test_kip341_stale_member_takes_nothing_from_current_owners(strategy: Strategy) -> None:
    """KIP-341: C1 paused past its session and C0, C2 took its partitions at generation 2; C1
    rejoins claiming them at generation 1. Its claims lose: the current owners keep what
    balance allows and C1 only gets partitions it had before."""
    parts = {"t": 6}
    subs = _all(["t"], "C0", "C1", "C2")
    gen1 = settle(strategy, parts, members_from(subs))
    gen2 = settle(strategy, parts, feed_back(_all(["t"], "C0", "C2"), gen1, generation=1))
    members = [
        MemberSpec(member_id="C0", topics=["t"], owned=gen2["C0"], generation=2),
        MemberSpec(member_id="C1", topics=["t"], owned=gen1["C1"], generation=1),
        MemberSpec(member_id="C2", topics=["t"], owned=gen2["C2"], generation=2),
    ]
    plan = settle(strategy, parts, members)
    check_stickiest(parts, members, plan)
    assert [len(plan[c]) for c in ("C0", "C1", "C2")] == [2, 2, 2]
    assert set(plan["C1"]) <= set(gen1["C1"])
    if strategy.cooperative:
        first_round = strategy.assign(parts, members)
        assert first_round["C1"] == []  # everything it could get is still owned at gen 2


@pytest.mark.parametrize("strategy", EVERY)
def test_kip792_highest_generation_wins_a_contested_claim(strategy: Strategy) -> None:
    """KIP-792: two members claim t-0, at generations 3 and 2 (c holds t-1): the
    generation-3 claimant keeps it and the stale claimant gets nothing."""
    parts = {"t": 2}
    members = [
        MemberSpec(member_id="a", topics=["t"], owned=[("t", 0)], generation=2),
        MemberSpec(member_id="b", topics=["t"], owned=[("t", 0)], generation=3),
        MemberSpec(member_id="c", topics=["t"], owned=[("t", 1)], generation=3),
    ]
    plan = settle(strategy, parts, members)
    assert plan == {"a": [], "b": [("t", 0)], "c": [("t", 1)]}
    check_stickiest(parts, members, plan)


@pytest.mark.parametrize("strategy", EVERY)
def test_same_generation_double_claim_is_never_given_twice(strategy: Strategy) -> None:
    """Two members claim t-0 at the same generation: the plan stays valid and complete, and a
    cooperative first round gives t-0 to nobody (both must revoke it first)."""
    parts = {"t": 3}
    members = [
        MemberSpec(member_id="a", topics=["t"], owned=[("t", 0), ("t", 1)], generation=4),
        MemberSpec(member_id="b", topics=["t"], owned=[("t", 0), ("t", 2)], generation=4),
    ]
    settle(strategy, parts, members)
    if strategy.cooperative:
        first_round = strategy.assign(parts, members)
        assert all(("t", 0) not in got for got in first_round.values())


# -- random groups --------------------------------------------------------------------------


@given(st.sampled_from(list(STRATEGIES.values())), groups())
def test_random_groups_settle_to_valid_balanced_plans(strategy: Strategy, case: Group) -> None:
    """Random groups with garbage claims: the settled plan passes every checker."""
    parts, members = case
    settle(strategy, parts, members)


@given(st.sampled_from(list(STRATEGIES.values())), groups(), st.randoms(use_true_random=False))
def test_plan_does_not_depend_on_input_order(
    strategy: Strategy, case: Group, rnd: random.Random
) -> None:
    """Shuffling members, their topics and their claims gives the same plan."""
    parts, members = case
    expected = strategy.assign(parts, members)
    shuffled = [
        MemberSpec(
            member_id=m.member_id,
            topics=rnd.sample(m.topics, len(m.topics)),
            owned=rnd.sample(m.owned, len(m.owned)),
            generation=m.generation,
        )
        for m in rnd.sample(members, len(members))
    ]
    assert strategy.assign(parts, shuffled) == expected
    assert strategy.assign(parts, members) == expected


@given(st.sampled_from(list(STRATEGIES.values())), groups())
def test_a_settled_plan_fed_back_is_kept(strategy: Strategy, case: Group) -> None:
    """Feeding a settled plan back as everyone's ownership returns it unchanged."""
    parts, members = case
    plan = settle(strategy, parts, members)
    subs = {m.member_id: m.topics for m in members}
    assert strategy.assign(parts, feed_back(subs, plan, generation=5)) == plan


@given(st.sampled_from([s for s in STRATEGIES.values() if s.cooperative]), groups())
def test_cooperative_rounds_converge_within_four(strategy: Strategy, case: Group) -> None:
    """Cooperative rounds fed back as ownership converge within four rounds, each round
    keeping the cooperative rule."""
    parts, members = case
    _, rounds = run_cooperative(parts, members, engine=strategy.assign)
    assert rounds <= 4


@pytest.mark.parametrize("strategy", COOPERATIVE)
def test_cooperative_first_round_withholds_every_transfer(strategy: Strategy) -> None:
    """A member joins a stable group: the first round hands it nothing that someone else
    still owns, the second round completes the move."""
    parts = {"t": 6}
    stable = settle(strategy, parts, members_from(_all(["t"], "a", "b")))
    members = feed_back(_all(["t"], "a", "b", "c"), stable, generation=1)
    first = strategy.assign(parts, members)
    assert first["c"] == []
    _, rounds = run_cooperative(parts, members, engine=strategy.assign)
    assert rounds == 2


# -- the leader's bytes path ----------------------------------------------------------------


def _wire_members(strategy: Strategy, members: Sequence[MemberSpec]) -> list[MemberMetadata]:
    """Each member's subscription bytes, written by its member-side state for ``strategy``."""
    wire = []
    for spec in members:
        state = MemberState(strategy.name)
        state.record(spec.owned, spec.generation)
        wire.append(MemberMetadata(spec.member_id, state.subscription_bytes(spec.topics)))
    return wire


def _claimable(case: Group) -> Group:
    """Members whose claims are real partitions (what a member's state can record) and
    whose topics exist or not."""
    parts, members = case
    valid = [
        MemberSpec(
            member_id=m.member_id,
            topics=m.topics,
            owned=sorted({(t, p) for t, p in m.owned if 0 <= p < parts.get(t, 0)}),
            generation=m.generation,
        )
        for m in members
    ]
    return parts, valid


@given(st.sampled_from(list(STRATEGIES.values())), groups().map(_claimable))
def test_leader_bytes_path_gives_the_typed_plan(strategy: Strategy, case: Group) -> None:
    """Subscription bytes from each member's state through the leader
    (:func:`assign_group`), decoded, equal the strategy's plan for the same typed members."""
    parts, members = case
    encoded = assign_group(strategy.name, parts, _wire_members(strategy, members))
    decoded = {m: list(decode_assignment(data).partitions) for m, data in encoded.items()}
    assert decoded == strategy.assign(parts, members)


# -- the suite itself -----------------------------------------------------------------------


def _strategy(name: str, protocols: tuple[RebalanceProtocol, ...], engine: Any) -> Strategy:
    """A test strategy: ``sticky``'s user-data format and class name under another name,
    protocols and engine."""
    return dataclasses.replace(STRATEGIES["sticky"], name=name, protocols=protocols, engine=engine)


def test_the_suite_runs_over_every_registered_strategy() -> None:
    """The parametrization is the registry's, so a new strategy is picked up with no edit."""
    assert [p.id for p in EVERY] == list(STRATEGIES)
    assert [p.id for p in COOPERATIVE] == [n for n, s in STRATEGIES.items() if s.cooperative]
    newcomer = _strategy("newcomer", (RebalanceProtocol.EAGER,), sticky_assign)
    registry = {**STRATEGIES, "newcomer": newcomer}
    assert [p.values[0] for p in contract_params(registry)][-1] is newcomer


def _drops_a_partition(parts: Mapping[str, int], members: Sequence[MemberSpec], **_: Any) -> Plan:
    plan = sticky_assign(parts, members)
    busiest = max(sorted(plan), key=lambda m: len(plan[m]))
    plan[busiest] = plan[busiest][1:]
    return plan


def _gives_one_to_two(parts: Mapping[str, int], members: Sequence[MemberSpec], **_: Any) -> Plan:
    plan = sticky_assign(parts, members)
    first, second = sorted(plan)[:2]
    plan[second] = sorted({*plan[second], plan[first][0]})
    return plan


EAGER_ONLY = (RebalanceProtocol.EAGER,)
BROKEN = [
    pytest.param(_strategy("drops", EAGER_ONLY, _drops_a_partition), "not assigned", id="drops"),
    pytest.param(
        _strategy("doubles", EAGER_ONLY, _gives_one_to_two), "given to both", id="doubles"
    ),
    pytest.param(
        # the eager engine behind a cooperative name: it hands owned partitions over at once
        _strategy(
            "eager-as-cooperative",
            (RebalanceProtocol.COOPERATIVE, RebalanceProtocol.EAGER),
            sticky_assign,
        ),
        "still owns it",
        id="eager-as-cooperative",
    ),
]


@pytest.mark.parametrize(("broken", "complaint"), BROKEN)
def test_the_suite_rejects_a_broken_engine(broken: Strategy, complaint: str) -> None:
    """The contract's checks fail, for the right reason, on an engine that drops a
    partition, gives one partition to two members, or (cooperative) hands an owned partition
    to a new owner at once."""
    with pytest.raises(InvariantViolation, match=complaint):
        for scenario in SCENARIOS:
            run_scenario(broken, scenario)
