"""The compiled twin's plan of a heterogeneous component against the reference, plan for plan.

:func:`kafka_sticky_plugin.core.api.plan_component` hands a heterogeneous component to the
twin (``twin/src/balance.rs``'s builder, then ``twin/src/keep_flow.rs``'s keep flow, on one
read of the component) when one is in use (:mod:`kafka_sticky_plugin.core.implementation`);
the plan must be the reference's (:func:`.balance_builder.build_balanced_plan`, then
:func:`.keep_flow.maximise_kept`), bit for bit: the same partitions to the same members.
Checked

- on seeded random groups of every subscription shape (nested, disjoint, overlapping
  windows, random, shared classes; ``tests/test_engine_balance_twin.py``'s generator) with
  claims from a random previous plan, stale claims, new members, and partitions contested at
  chosen generations (won with a hint, tied with and without a hinted lower claimant): each
  heterogeneous component, most past the keep flow's early returns, against the reference
  with the twin switched off (``implementation.twin = None``, so the Python solver too);
- through the whole engine: ``sticky_assign`` / ``cooperative_assign`` plans of seeded
  groups, some with replica racks;
- on benchmark shapes' rejoins without racks (NESTED-10k, NESTED-100k-r3f1, HET-1M): the
  plan's hash both ways;
- malformed input: the twin declines (``None``) rather than guess.

The twin must not pass by declining: it answers every component that reaches it here.
Seeded: ``KEEP_TWIN_SEED=<n>`` replays a run; the seed is printed. Runs only where the twin
is in use (``make twin``): skipped with one line otherwise, a failure under ``CI=true``.
"""

from __future__ import annotations

import hashlib
import os
import random
import sys
from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import (
    CountingTwin,
    count_twin_step,
    engine_twin_in_use,
    listed,
    without_twin,
)
from test_engine_balance_twin import _racks, random_group

from kafka_sticky_plugin.core import implementation
from kafka_sticky_plugin.core.api import cooperative_assign, plan_component, sticky_assign
from kafka_sticky_plugin.core.balance_builder import build_balanced_plan
from kafka_sticky_plugin.core.claims import TIED, Claims, resolve_claims
from kafka_sticky_plugin.core.components import Component, split_components
from kafka_sticky_plugin.core.layout import Layout, build_layout
from kafka_sticky_plugin.core.spec import MemberSpec

TWIN = engine_twin_in_use()

SEED = int(os.environ.get("KEEP_TWIN_SEED", "20261206"))
GROUPS = 300

Counts = dict[str, int]


@pytest.fixture
def components(monkeypatch: pytest.MonkeyPatch) -> CountingTwin:
    """The engine uses the twin, its ``plan_component`` step counted (the one the engine
    calls for a heterogeneous component without racks: the builder, then the keep flow)."""
    return count_twin_step(monkeypatch, "plan_component")


def keep_group(rng: random.Random) -> tuple[Counts, list[MemberSpec]]:
    """:func:`test_engine_balance_twin.random_group`, then some partitions claimed again by
    other subscribers, generations redrawn for some claimants: contests won (the loser a
    hint), ties at the top (a partition for nobody) with or without a lower claimant (its
    hint)."""
    counts, members = random_group(rng)
    if rng.random() < 0.3:
        return counts, members
    owned = {spec.member_id: set(spec.owned) for spec in members}
    gens = {spec.member_id: spec.generation for spec in members}
    subscribers: dict[str, list[str]] = {}
    for spec in members:
        for t in spec.topics:
            subscribers.setdefault(t, []).append(spec.member_id)
    pairs = [(t, p) for t, c in counts.items() for p in range(c) if t in subscribers]
    for tp in rng.sample(pairs, min(len(pairs), rng.choice([1, 5, 20, 80]))):
        for m in rng.sample(subscribers[tp[0]], min(len(subscribers[tp[0]]), rng.randint(2, 4))):
            owned[m].add(tp)
            if gens[m] < 0 or rng.random() < 0.2:
                gens[m] = rng.choice([1, 2, 3])
    out = [
        MemberSpec(
            member_id=spec.member_id,
            topics=spec.topics,
            owned=owned[spec.member_id],
            generation=gens[spec.member_id],
        )
        for spec in members
    ]
    return counts, out


def _heterogeneous_components(
    rng: random.Random,
) -> Iterator[tuple[int, Layout, Claims, Component]]:
    """Per :func:`keep_group` drawn from ``rng`` (``GROUPS`` of them), its number, layout,
    claims and each heterogeneous component (the ones the builder and the keep flow plan)."""
    for g in range(GROUPS):
        counts, members = keep_group(rng)
        layout = build_layout(counts, members)
        claims = resolve_claims(layout)
        for comp in split_components(layout):
            if not comp.homogeneous:
                yield g, layout, claims, comp


def test_component_plans_equal_the_reference(components: CountingTwin) -> None:
    """``plan_component`` (the builder and the keep flow on one read) per heterogeneous
    component, twin against reference; most past the keep flow's early returns (the keep
    flow moved something), many of those with hinted and tied partitions."""
    seed = SEED + 3
    print(f"seed={seed}")
    compared = past_early_returns = hinted = tied = 0
    for g, layout, claims, comp in _heterogeneous_components(random.Random(seed)):
        want = without_twin(plan_component, layout, claims, comp)
        got = plan_component(layout, claims, comp)
        assert listed(got) == listed(want), f"seed={seed} group {g}"
        compared += 1
        balanced = without_twin(build_balanced_plan, layout, claims, comp)
        if listed(want) != listed(balanced):
            past_early_returns += 1
            ms = set(comp.members)
            hints = [q for q, h in claims.hints.items() if h in ms]
            hinted += bool(hints)
            tied += any(claims.owner[q] == TIED for q in hints)
    print(f"{compared} components, {past_early_returns} past the keep flow's early returns")
    print(f"of those {hinted} with hints, {tied} with a hinted tied partition")
    assert components.declined == 0, f"seed={seed}: the twin declined"
    assert components.answered == compared and past_early_returns >= 100
    assert hinted >= 30 and tied >= 15


@pytest.mark.parametrize("cooperative", [False, True])
def test_whole_plans_equal_the_reference(components: CountingTwin, cooperative: bool) -> None:
    seed = SEED + 1 + cooperative
    print(f"seed={seed}")
    rng = random.Random(seed)
    assign = cooperative_assign if cooperative else sticky_assign
    for g in range(GROUPS // 2):
        counts, members = keep_group(rng)
        racks = _racks(rng, counts, members)
        want = without_twin(assign, counts, members, partition_racks=racks)
        got = assign(counts, members, partition_racks=racks)
        assert got == want, f"seed={seed} group {g}"
    print(f"components answered by the twin: {components.answered}")
    assert components.declined == 0 and components.answered >= 40


# --- benchmark shapes ----------------------------------------------------------------------

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))


def _plan_hash(plan: dict[str, list[tuple[str, int]]]) -> str:
    digest = hashlib.sha256()
    for member_id in sorted(plan):
        digest.update(f"{member_id}:{plan[member_id]};".encode())
    return digest.hexdigest()


@pytest.mark.parametrize(
    "shape_name",
    # HET-1M: a million owned pairs, the reference's Python solver; about 10 s on 2 cores
    ["NESTED-10k", "NESTED-100k-r3f1", pytest.param("HET-1M", marks=pytest.mark.slow)],
)
def test_benchmark_rejoins_plan_the_same(
    shape_name: str, components: CountingTwin, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A benchmark shape's ``rejoin`` (everyone owns its fresh plan at generation 1, a
    newcomer joins), planned with the twin and without it: the same plan."""
    import shapes

    shape = shapes.SHAPES[shape_name]
    subs = shape.subscriptions()
    fresh = sticky_assign(shape.partitions, shapes.members(subs))
    rejoin = shapes.phase_inputs(subs, fresh, "rejoin")
    components.answered = 0  # the rejoin's plan alone (the fresh one had its component too)
    hashes = []
    for twin in (components, None):
        monkeypatch.setattr(implementation, "twin", twin)
        hashes.append(_plan_hash(sticky_assign(shape.partitions, rejoin)))
    print(f"{shape_name}: rejoin plan sha256 {hashes[0]}; twin components {components.answered}")
    assert hashes[0] == hashes[1]
    assert components.answered == 1 and components.declined == 0


# --- what the twin declines ----------------------------------------------------------------


def _small_component() -> tuple[list[Any], Any]:
    """``plan_component``'s twin arguments for a small component past the keep flow's early
    returns (a tied partition hinted to a member, claims the balanced plan moves), and the
    reference's plan for it."""
    counts = {"a": 4, "b": 2}
    members = [
        MemberSpec(member_id="m0", topics=["a", "b"], owned=[("a", 0), ("a", 1)], generation=2),
        MemberSpec(member_id="m1", topics=["a"], owned=[("a", 2), ("a", 3)], generation=2),
        MemberSpec(member_id="m2", topics=["a"], owned=[("a", 2)], generation=1),
        MemberSpec(member_id="m3", topics=["a"], owned=[("a", 2)], generation=2),
    ]
    layout = build_layout(counts, members)
    claims = resolve_claims(layout)
    (comp,) = split_components(layout)
    tied = sorted(q for q, h in claims.hints.items() if claims.owner[q] == TIED)
    assert tied == [2] and claims.hints[2] == 2
    args = [
        comp.members,
        comp.topics,
        layout.offsets,
        layout.counts,
        layout.subscriptions,
        claims.owner,
        claims.owned,
        claims.hints,
    ]
    return args, without_twin(plan_component, layout, claims, comp)


def test_the_twin_answers_a_small_component() -> None:
    args, want = _small_component()
    planned = TWIN.plan_component(*args)
    assert planned is not None
    members, owned = args[0], args[6]
    got = {m: owned[m] if part is None else part for m, part in zip(members, planned, strict=True)}
    assert listed(got) == listed(want)
    assert 2 in want[2]  # the tied partition back to its hinted claimant


@pytest.mark.parametrize(
    "case",
    [
        "owned not a sequence",
        "owned twice",
        "owned outside the component",
        "a claim outside its subscriptions",
        "owner not a list",
        "hint not an int",
        "members not a list",
    ],
)
def test_the_twin_declines_what_it_cannot_vouch_for(case: str) -> None:
    args, _ = _small_component()
    owned, hints = args[6], args[7]
    total = sum(args[3])
    if case == "owned not a sequence":
        args[6] = [set(qs) for qs in owned]
    elif case == "owned twice":
        args[6] = [owned[0], owned[0], *owned[2:]]
    elif case == "owned outside the component":
        args[6] = [array("i", [*owned[0], total]), *owned[1:]]
    elif case == "a claim outside its subscriptions":  # m1 subscribes to a only
        args[6] = [owned[0], array("i", [*owned[1], total - 1]), *owned[2:]]
    elif case == "owner not a list":
        args[5] = tuple(args[5])
    elif case == "hint not an int":
        args[7] = {q: float(h) for q, h in hints.items()}
    elif case == "members not a list":
        args[0] = {*args[0]}
    assert TWIN.plan_component(*args) is None
