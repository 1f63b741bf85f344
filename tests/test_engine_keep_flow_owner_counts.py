"""The stickiness flow's claim counts read from ``claims.owner`` group by group
(``_claim_counts_by_owner``, ``core/keep_flow.py``, taken when sized runs outnumber the
partitions) against the member-by-member count (``_claim_counts``): equal counts, and
identical plans (lists and dict order) with either count forced, on the seeded random
groups of ``tests/test_engine_keep_flow_bulk.py`` (contested, tied and invalid claims
included), with claims as pairs and as sized runs. The seed is printed."""

from __future__ import annotations

import random

import pytest
from test_engine_keep_flow_bulk import random_group
from test_engine_keep_flow_runs import as_runs

from kafka_sticky_plugin.core import keep_flow
from kafka_sticky_plugin.core.balance_builder import build_balanced_plan
from kafka_sticky_plugin.core.claims import resolve_claims
from kafka_sticky_plugin.core.components import split_components
from kafka_sticky_plugin.core.layout import build_layout

SEEDS = range(300)


@pytest.mark.parametrize("seed", SEEDS)
def test_counts_by_owner_equal_member_counts(seed: int) -> None:
    print(f"seed={seed}")
    parts, members = random_group(random.Random(seed))
    for specs in (members, [as_runs(spec) for spec in members]):
        layout = build_layout(parts, specs)
        claims = resolve_claims(layout)
        for comp in split_components(layout):
            if comp.homogeneous:
                continue
            groups = keep_flow._topic_groups(layout, comp)
            want = keep_flow._claim_counts(layout, claims, comp, groups)
            got = keep_flow._claim_counts_by_owner(layout, claims, groups)
            assert got == want


@pytest.mark.parametrize("seed", SEEDS)
def test_plans_equal_with_either_count(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    print(f"seed={seed}")
    parts, members = random_group(random.Random(seed))
    layout = build_layout(parts, [as_runs(spec) for spec in members])
    claims = resolve_claims(layout)
    for comp in split_components(layout):
        if comp.homogeneous:
            continue
        plan = build_balanced_plan(layout, claims, comp)
        got = {}
        for by_owner in (False, True):
            monkeypatch.setattr(keep_flow, "_runs_outnumber_partitions", lambda *_, b=by_owner: b)
            out = keep_flow.maximise_kept(layout, claims, comp, {m: q[:] for m, q in plan.items()})
            got[by_owner] = list(out.items())
        assert got[True] == got[False]
