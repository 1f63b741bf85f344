"""The compiled twin's rack pass against the reference, plan for plan.

:func:`kafka_sticky_plugin.core.rack_flow.place_by_racks` hands a component to the twin
(``twin/src/rack_flow.rs``) when one is in use (:mod:`kafka_sticky_plugin.core.implementation`);
the plan must be the reference's, bit for bit: the same partitions to the same members. On
seeded random racked groups (the seed is printed; ``RACK_TWIN_SEED=<n>`` replays one run) of
every subscription shape (the balancing builder's generator: nested, disjoint, overlapping
windows, random, a few classes; fresh or with claims from a previous plan, stale and
contested ones among them, so tied partitions and hints), with members without a rack,
partitions without replica racks and replicas on racks no member has, each component's
pass is compared with the reference's (the twin switched off by setting
``implementation.twin`` to ``None``), starting from the engine's own plan without racks;
so are whole ``sticky_assign`` / ``cooperative_assign`` plans and the racked benchmark
shapes' fresh, rejoin and leave plans (their hashes: NESTED-100k-r3f1, and H-1M-r6f2, whose
leave's network costs pass ``i64``, marked slow). The twin must not pass by
declining: it answers every component here, and declines (``None``) for values it cannot
vouch for.

Runs only where the twin is in use (``make twin``): skipped with one line otherwise, a
failure under ``CI=true``.
"""

from __future__ import annotations

import hashlib
import os
import random
import sys
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import CountingTwin, count_twin_step, engine_twin_in_use, without_twin
from test_engine_balance_twin import random_group

from kafka_sticky_plugin.core import implementation
from kafka_sticky_plugin.core.api import cooperative_assign, sticky_assign
from kafka_sticky_plugin.core.balance_builder import build_balanced_plan, topic_subscribers
from kafka_sticky_plugin.core.claims import TIED, resolve_claims
from kafka_sticky_plugin.core.components import split_components
from kafka_sticky_plugin.core.keep_flow import maximise_kept
from kafka_sticky_plugin.core.layout import build_layout
from kafka_sticky_plugin.core.quota_builder import build_quota_plan
from kafka_sticky_plugin.core.rack_flow import place_by_racks
from kafka_sticky_plugin.core.rack_view import build_rack_view, rack_pass_applies
from kafka_sticky_plugin.core.spec import MemberSpec

TWIN = engine_twin_in_use()

SEED = int(os.environ.get("RACK_TWIN_SEED", random.randrange(2**32)))
GROUPS = 200

Racks = dict[tuple[str, int], list[str]]


def _with_racks(
    rng: random.Random, counts: dict[str, int], members: list[MemberSpec]
) -> tuple[list[MemberSpec], Racks]:
    """Members on two to four racks, some without one; each partition's replicas on zero
    to three racks, among them a rack no member has. Sometimes a claiming member's claims
    are copied by two more members at a higher generation: its partitions tie, hinted to it."""
    claiming = [spec for spec in members if spec.owned]
    if claiming and rng.random() < 0.4:
        copied = rng.choice(claiming)
        members = [
            *members,
            *(
                MemberSpec(
                    member_id=f"y{i}{copied.member_id}",
                    topics=copied.topics,
                    owned=copied.owned,
                    generation=copied.generation + 1,
                )
                for i in range(2)
            ),
        ]
    racks = [f"r{i}" for i in range(rng.randint(2, 4))]
    without = rng.choice([0.0, 0.2, 0.5])
    racked = [
        MemberSpec(
            member_id=spec.member_id,
            topics=spec.topics,
            owned=spec.owned,
            generation=spec.generation,
            rack=None if rng.random() < without else rng.choice(racks),
        )
        for spec in members
    ]
    replicas = [*racks, "far"]
    partition_racks = {
        (t, p): rng.sample(replicas, rng.choice([0, 1, 1, 2, 2, 3]))
        for t, c in counts.items()
        for p in range(c)
    }
    return racked, partition_racks


@pytest.fixture
def counting(monkeypatch: pytest.MonkeyPatch) -> CountingTwin:
    """The engine uses the (counting) twin, even under ``KAFKA_STICKY_PURE_PYTHON=1``."""
    return count_twin_step(monkeypatch, "place_by_racks")


def test_component_passes_equal_the_reference(counting: CountingTwin) -> None:
    """Every component of seeded racked groups, from the engine's plan without racks (also
    where the engine would skip the pass: the pass must be exact on any component)."""
    print(f"RACK_TWIN_SEED={SEED}")
    rng = random.Random(f"{SEED}/components")
    compared = with_claims = with_hints = nothing_free = applying = 0
    for g in range(GROUPS):
        counts, members = random_group(rng)
        members, partition_racks = _with_racks(rng, counts, members)
        layout = build_layout(counts, members)
        view = build_rack_view(layout, partition_racks)
        if view is None:
            continue
        claims = resolve_claims(layout)
        for comp in split_components(layout):
            if comp.homogeneous:
                plan = build_quota_plan(layout, claims, comp)
            else:
                subscribers = topic_subscribers(layout.subscriptions, comp)
                balanced = build_balanced_plan(layout, claims, comp, subscribers)
                plan = maximise_kept(layout, claims, comp, balanced, subscribers)
            want = without_twin(place_by_racks, layout, claims, comp, plan, view)
            answered = counting.answered
            got = place_by_racks(layout, claims, comp, plan, view)
            assert counting.answered == answered + 1, f"seed={SEED} group {g}: declined"
            assert got == want, f"seed={SEED} group {g}"
            compared += 1
            with_claims += any(map(claims.owned.__getitem__, comp.members))
            # every partition owned: the twin reads only the plan's lengths
            nothing_free += sum(map(len, map(claims.owned.__getitem__, comp.members))) == sum(
                map(layout.counts.__getitem__, comp.topics)
            )
            in_comp = set(comp.members)
            with_hints += any(
                claims.owner[q] == TIED and h in in_comp for q, h in claims.hints.items()
            )
            applying += rack_pass_applies(view, comp, plan)
    print(f"{compared} components: {with_claims} with claims, {with_hints} with hinted ties,")
    print(f"{nothing_free} with every partition owned, {applying} where the engine runs the pass")
    assert compared >= 150 and with_claims >= 60 and with_hints >= 15 and applying >= 100
    assert nothing_free >= 1  # about 11 on average: rare enough to floor at one


@pytest.mark.parametrize("cooperative", [False, True])
def test_whole_plans_equal_the_reference(counting: CountingTwin, cooperative: bool) -> None:
    print(f"RACK_TWIN_SEED={SEED}")
    rng = random.Random(f"{SEED}/plans/{cooperative}")
    assign = cooperative_assign if cooperative else sticky_assign
    for g in range(GROUPS // 2):
        counts, members = random_group(rng)
        members, partition_racks = _with_racks(rng, counts, members)
        want = without_twin(assign, counts, members, partition_racks=partition_racks)
        got = assign(counts, members, partition_racks=partition_racks)
        assert got == want, f"seed={SEED} group {g}"
    print(f"rack passes answered by the twin: {counting.answered}")
    assert counting.declined == 0 and counting.answered >= 50


sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))


def _plan_hash(plan: dict[str, list[tuple[str, int]]]) -> str:
    digest = hashlib.sha256()
    for member_id in sorted(plan):
        digest.update(f"{member_id}:{plan[member_id]};".encode())
    return digest.hexdigest()


@pytest.mark.parametrize(
    "shape_name",
    [
        "NESTED-100k-r3f1",
        # a million partitions on six racks, two replicas each (about 15 s on 2 cores): its
        # leave's network costs pass i64 (2000 members keeping 999,500 claims)
        pytest.param("H-1M-r6f2", marks=pytest.mark.slow),
    ],
)
def test_racked_benchmark_shapes_plan_the_same(shape_name: str, counting: CountingTwin) -> None:
    """A racked benchmark shape's fresh plan and its rejoin and leave from it hash the same
    with the twin and without it."""
    import shapes

    shape = shapes.SHAPES[shape_name]
    subs = shape.subscriptions()
    racks = shape.member_racks(subs)
    replicas = shape.partition_racks()
    hashes = []
    for twin in (counting, None):
        implementation.twin = twin
        fresh = sticky_assign(
            shape.partitions, shapes.members(subs, racks=racks), partition_racks=replicas
        )
        row = [_plan_hash(fresh)]
        for phase in ("rejoin", "leave"):
            members = shapes.phase_inputs(subs, fresh, phase, racks)
            plan = sticky_assign(shape.partitions, members, partition_racks=replicas)
            row.append(_plan_hash(plan))
        hashes.append(row)
    print(f"{shape_name} fresh, rejoin, leave plan sha256 {hashes[0]}")
    assert hashes[0] == hashes[1]
    assert counting.answered >= 3 and counting.declined == 0


def _arguments() -> dict[str, Any]:
    """A small racked component's arguments as ``place_by_racks`` passes them."""
    counts = {"a": 3, "b": 2}
    members = [
        MemberSpec(member_id="m0", topics=["a", "b"], rack="r0", owned=[("a", 0)], generation=1),
        MemberSpec(member_id="m1", topics=["a"], rack="r1"),
        MemberSpec(member_id="m2", topics=["a", "b"]),
    ]
    layout = build_layout(counts, members)
    claims = resolve_claims(layout)
    view = build_rack_view(layout, {("a", 0): ["r1"], ("a", 1): ["r0"], ("b", 0): ["r1"]})
    assert view is not None
    (comp,) = split_components(layout)
    plan = {0: [0, 3], 1: [1], 2: [2, 4]}
    return {
        "members": comp.members,
        "topics": comp.topics,
        "offsets": layout.offsets,
        "counts": layout.counts,
        "subscriptions": layout.subscriptions,
        "owner": claims.owner,
        "hints": claims.hints,
        "owned": claims.owned,
        "plan": plan,
        "member_rack": view.member_rack,
        "rack_sets": view.rack_sets,
        "partition_set": view.partition_set,
    }


@pytest.mark.parametrize(
    "change",
    [
        {"plan": {0: [0, 3], 1: [1], 2: [2]}},  # a partition in no plan
        {"plan": {0: [0, 3], 1: [1, 3], 2: [2, 4]}},  # a partition twice
        {"plan": {0: [0, 3], 1: [1]}},  # a member without a plan
        {"plan": {0: {0, 3}, 1: [1], 2: [2, 4]}},  # not a list or array
        {"plan": {0: [0, 3], 1: [1], 2: [2, 4, 9]}},  # a partition outside the component
        {"owned": [[0], [0], []]},  # a partition owned twice
        {"owned": [[True], [], []]},  # a bool
        {"owned": [[3, 0], [], []]},  # not ascending
        {"hints": {1: 1.0}},  # a hint on a partition nobody owns, not an int
        {"partition_set": [1, 2, 0, 7, 0]},  # no such rack set
        {"partition_set": [1, 2, 0, -1, 0]},  # negative (Python would index from the end)
        {"member_rack": [0, 1.0, -1]},  # not an int
        {"rack_sets": [frozenset(), [1], frozenset({0})]},  # not a frozenset
        {"subscriptions": [frozenset({0, 1}), frozenset({0}), frozenset({0, 5})]},
    ],
)
def test_the_twin_declines_what_it_cannot_vouch_for(change: dict[str, Any]) -> None:
    arguments = _arguments()
    assert TWIN.place_by_racks(**arguments) is not None
    arguments.update(change)
    assert TWIN.place_by_racks(*arguments.values()) is None
