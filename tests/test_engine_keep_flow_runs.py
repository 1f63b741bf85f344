"""The stickiness flow's claim counts read from sized canonical runs
(:meth:`.Claims.run_sizes`, ``core/keep_flow.py``) against the same members built from
pairs (counted by binary search or ``Counter``): identical plans, bit for bit (lists and dict
order), on the seeded random groups of ``tests/test_engine_keep_flow_bulk.py`` (contested,
tied and invalid claims included). The seed is printed."""

from __future__ import annotations

import random

import pytest
from test_engine_keep_flow_bulk import random_group

from kafka_sticky_plugin.core import MemberSpec
from kafka_sticky_plugin.core.balance_builder import build_balanced_plan
from kafka_sticky_plugin.core.claims import resolve_claims
from kafka_sticky_plugin.core.components import split_components
from kafka_sticky_plugin.core.keep_flow import maximise_kept
from kafka_sticky_plugin.core.layout import build_layout
from kafka_sticky_plugin.core.spec import canonical_runs

SEEDS = range(400)


def as_runs(spec: MemberSpec) -> MemberSpec:
    """The same member with its claims as canonical runs (one run per topic, in the order
    the topics first appear)."""
    by_topic: dict[str, list[int]] = {}
    for topic, partition in spec.owned:
        by_topic.setdefault(topic, []).append(partition)
    runs = canonical_runs(
        (
            tuple(by_topic),
            [len(ps) for ps in by_topic.values()],
            [p for ps in by_topic.values() for p in ps],
        )
    )
    return MemberSpec.from_runs(
        member_id=spec.member_id, topics=spec.topics, runs=runs, generation=spec.generation
    )


@pytest.mark.parametrize("seed", SEEDS)
def test_keep_flow_from_sized_runs_equals_from_pairs(seed: int) -> None:
    print(f"seed={seed}")
    parts, members = random_group(random.Random(seed))
    pairs_layout = build_layout(parts, members)
    runs_layout = build_layout(parts, [as_runs(spec) for spec in members])
    pairs_claims, runs_claims = resolve_claims(pairs_layout), resolve_claims(runs_layout)
    assert runs_claims.owned == pairs_claims.owned
    for comp in split_components(pairs_layout):
        if comp.homogeneous:
            continue
        plan = build_balanced_plan(pairs_layout, pairs_claims, comp)
        want = maximise_kept(pairs_layout, pairs_claims, comp, {m: qs[:] for m, qs in plan.items()})
        got = maximise_kept(runs_layout, runs_claims, comp, {m: qs[:] for m, qs in plan.items()})
        assert list(got.items()) == list(want.items())


def test_sized_runs_are_met() -> None:
    """The seeds above do reach the sized-runs path, for some members of some groups."""
    met = 0
    for seed in SEEDS:
        parts, members = random_group(random.Random(seed))
        claims = resolve_claims(build_layout(parts, [as_runs(spec) for spec in members]))
        met += sum(claims.run_sizes(m) is not None for m in range(len(members)))
    assert met > 100
