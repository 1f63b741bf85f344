"""The compiled twin's quota builder against the reference, plan for plan.

:func:`kafka_sticky_plugin.core.quota_builder.build_quota_plan` hands an equal-subscription
component to the twin (``twin/src/quota.rs``) when one is in use
(:mod:`kafka_sticky_plugin.core.implementation`); the plan must be the reference's, bit for
bit: the same partitions to the same members, each member's list in the same order (the rack
pass and the cooperative step read it). On seeded random groups (the seed is printed;
``QUOTA_TWIN_SEED=<n>`` replays one run) of one or several equal-subscription components,
fresh, after a member left or rejoined, or with random claims (stale claims of gone topics and
out-of-range partitions, contested copies at the same or a higher generation, so tied
partitions and hints), each component's plan is compared with the reference's (the twin
switched off by setting ``implementation.twin`` to ``None``), and so are whole
``sticky_assign`` / ``cooperative_assign`` plans, some with replica racks. The twin must not
pass by declining: it answers every component here; and the groups must reach the
reference's spread swaps and its hint passes (counted).

Runs only where the twin is in use (``make twin``): skipped with one line otherwise.
"""

from __future__ import annotations

import os
import random
from typing import Any

import pytest
from engine_helpers import engine_twin_in_use, listed, without_twin
from test_engine_balance_twin import _racks

from kafka_sticky_plugin.core import quota_builder
from kafka_sticky_plugin.core.api import cooperative_assign, sticky_assign
from kafka_sticky_plugin.core.claims import resolve_claims
from kafka_sticky_plugin.core.components import split_components
from kafka_sticky_plugin.core.layout import build_layout
from kafka_sticky_plugin.core.spec import MemberSpec

TWIN = engine_twin_in_use()

SEED = int(os.environ.get("QUOTA_TWIN_SEED", "20261205"))
GROUPS = 300

Counts = dict[str, int]


def random_group(rng: random.Random) -> tuple[Counts, list[MemberSpec]]:
    """One to three equal-subscription classes over disjoint topics, up to 120 members, with
    claims of one of several histories."""
    n_classes = rng.choice([1, 1, 2, 3])
    counts: Counts = {}
    classes: list[list[str]] = []
    for c in range(n_classes):
        names = [f"c{c}t{i:02d}" for i in range(rng.randint(1, 8))]
        for name in names:
            counts[name] = rng.choice([0, 1, 2, 3, 5, 8, 13, 40, 97])
        classes.append(names)
    n_members = rng.choice([rng.randint(1, 6), rng.randint(5, 40), rng.randint(40, 120)])
    subs = [rng.choice(classes) for _ in range(n_members)]
    history = rng.choice(["fresh", "balanced", "left", "rejoined", "random", "skewed"])
    owned: list[set[tuple[str, int]]] = [set() for _ in range(n_members)]
    if history != "fresh":
        previous = sticky_assign(
            counts,
            [MemberSpec(member_id=f"m{i:03d}", topics=subs[i]) for i in range(n_members)],
        )
        for i in range(n_members):
            owned[i] = set(previous[f"m{i:03d}"])
        if history == "left":  # a member's partitions are free
            owned[rng.randrange(n_members)] = set()
        elif history == "rejoined":  # a new member: everyone else is over its target
            owned.append(set())
            subs.append(rng.choice(classes))
            n_members += 1
        elif history == "random":  # claims shuffled between the members of a class
            pairs = [pair for mine in owned for pair in mine]
            owned = [set() for _ in range(n_members)]
            for t, p in pairs:
                holders = [i for i in range(n_members) if t in subs[i]]
                if rng.random() < 0.8:
                    owned[rng.choice(holders)].add((t, p))
        elif history == "skewed":  # a few members claim far more than their share
            heavy = rng.sample(range(n_members), max(1, n_members // 5))
            for i in range(n_members):
                if i not in heavy and owned[i] and rng.random() < 0.7:
                    owned[rng.choice(heavy)].update(
                        pair for pair in owned[i] if pair[0] in subs[rng.choice(heavy)]
                    )
                    owned[i] = set()
    for i in range(n_members):
        if rng.random() < 0.08:  # a stale claim: a gone topic, an unknown partition
            owned[i].add((rng.choice([*counts, "gone"]), rng.randint(-1, 99)))
    members = [
        MemberSpec(
            member_id=f"m{i:03d}",
            topics=subs[i],
            owned=owned[i],
            generation=rng.choice([1, 2, 2, 3]) if owned[i] else -1,
        )
        for i in range(n_members)
    ]
    for _ in range(rng.choice([0, 0, 1, 3])):  # contested copies: ties and hints
        copied = rng.choice(members)
        members.append(
            MemberSpec(
                member_id=f"z{len(members):03d}",
                topics=copied.topics,
                owned=copied.owned,
                generation=rng.choice([copied.generation, copied.generation + 1]),
            )
        )
    rng.shuffle(members)
    return counts, members


def test_quota_plans_equal_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    print(f"seed={SEED}")
    rng = random.Random(SEED)
    swaps = 0
    find_partner = quota_builder._find_partner

    def counting(*args: Any) -> Any:
        nonlocal swaps
        found = find_partner(*args)
        swaps += found is not None
        return found

    monkeypatch.setattr(quota_builder, "_find_partner", counting)
    compared = with_claims = with_hints = 0
    for g in range(GROUPS):
        counts, members = random_group(rng)
        layout = build_layout(counts, members)
        claims = resolve_claims(layout)
        for comp in split_components(layout):
            if not comp.homogeneous:
                continue
            assert TWIN is not None
            answer = TWIN.build_quota_plan(
                comp.members,
                comp.topics,
                layout.offsets,
                layout.counts,
                claims.owned,
                claims.hints,
            )
            assert answer is not None, f"seed={SEED} group {g}: the twin declined"
            want = without_twin(quota_builder.build_quota_plan, layout, claims, comp)
            got = quota_builder.build_quota_plan(layout, claims, comp)
            assert listed(got) == listed(want), f"seed={SEED} group {g}"
            compared += 1
            with_claims += any(map(claims.owned.__getitem__, comp.members))
            with_hints += bool(claims.hints)
    print(f"{compared} components, {with_claims} with claims, {with_hints} with hints")
    print(f"{swaps} spread swaps in the reference")
    assert compared >= 200 and with_claims >= 100 and with_hints >= 20 and swaps >= 20


@pytest.mark.parametrize("cooperative", [False, True])
def test_whole_plans_equal_the_reference(cooperative: bool) -> None:
    seed = SEED + 1 + cooperative
    print(f"seed={seed}")
    rng = random.Random(seed)
    assign = cooperative_assign if cooperative else sticky_assign
    for g in range(GROUPS // 2):
        counts, members = random_group(rng)
        racks = _racks(rng, counts, members)
        want = without_twin(assign, counts, members, partition_racks=racks)
        got = assign(counts, members, partition_racks=racks)
        assert got == want, f"seed={seed} group {g}"


def test_a_large_rejoin() -> None:
    """The benchmark's H-1M rejoin shape, smaller: 300 members of 60 topics keep a balanced
    plan and one of them rejoins with nothing; the twin's plan is the reference's."""
    counts = {f"t{i:03d}": 50 for i in range(60)}
    names = list(counts)
    ids = [f"m{i:03d}" for i in range(300)]
    previous = sticky_assign(counts, [MemberSpec(member_id=m, topics=names) for m in ids])
    members = [
        MemberSpec(
            member_id=m, topics=names, owned=[] if m == "m007" else previous[m], generation=4
        )
        for m in ids
    ]
    layout = build_layout(counts, members)
    claims = resolve_claims(layout)
    (comp,) = split_components(layout)
    got = quota_builder.build_quota_plan(layout, claims, comp)
    assert listed(got) == listed(without_twin(quota_builder.build_quota_plan, layout, claims, comp))
    assert sum(map(len, got.values())) == 3000
