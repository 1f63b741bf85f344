"""The bulk stickiness flow (``core/keep_flow.py``) against its reference
(``tests/keep_flow_reference.py``, the module before its bulk rewrite, on the solver of
``tests/flow_reference.py``): identical plans, bit for bit (lists and dict order), on seeded
random groups of different subscriptions (fresh, rebalanced with members joining and leaving,
contested and tied claims with hints, invalid claims, topics sharing a subscriber set).
The seed is printed."""

from __future__ import annotations

import random

import keep_flow_reference
import pytest
from engine_helpers import listed

from kafka_sticky_plugin.core import MemberSpec, sticky_assign
from kafka_sticky_plugin.core.balance_builder import build_balanced_plan
from kafka_sticky_plugin.core.claims import resolve_claims
from kafka_sticky_plugin.core.components import split_components
from kafka_sticky_plugin.core.keep_flow import maximise_kept
from kafka_sticky_plugin.core.layout import build_layout

SEEDS = range(400)


def random_group(rng: random.Random) -> tuple[dict[str, int], list[MemberSpec]]:
    """1-10 topics of 0-80 partitions (some topics with the same subscribers), 1-30 members
    with different subscriptions; claims from a plan of another group (members joined and
    left), plus extra claims at random generations (contested, tied) and invalid ones."""
    parts = {f"t{i}": rng.choice([0, 1, 3, 7, 20, 40, 80]) for i in range(rng.randint(1, 10))}
    names = sorted(parts)
    n = rng.randint(1, 30)
    pick = [rng.sample(names, rng.randint(1, len(names))) for _ in range(rng.randint(1, 4))]
    subs = {f"m{i:02d}": list(rng.choice(pick)) for i in range(n)}
    for m in rng.sample(sorted(subs), min(n, rng.randint(0, 3))):
        subs[m] = rng.sample(names, rng.randint(1, len(names)))
    before = [MemberSpec(member_id=m, topics=ts) for m, ts in subs.items() if rng.random() < 0.85]
    if rng.random() < 0.3:
        before.append(MemberSpec(member_id="gone", topics=names))
    owned = {m: list(qs) for m, qs in sticky_assign(parts, before).items()} if before else {}
    for m in rng.sample(sorted(subs), min(n, rng.randint(0, 4))):
        extra = rng.choice(names)
        step = rng.randint(1, 4)
        owned.setdefault(m, []).extend((extra, p) for p in range(0, parts[extra], step))
    for m in rng.sample(sorted(subs), min(n, rng.randint(0, 2))):
        owned.setdefault(m, []).extend([("ghost", 0), (names[0], 10_000), (names[-1], -1)])
    members = [
        MemberSpec(
            member_id=m,
            topics=ts,
            owned=owned.get(m, []),
            generation=rng.choice([-1, 1, 2, 2, 3]),
        )
        for m, ts in subs.items()
    ]
    return parts, members


@pytest.mark.parametrize("seed", SEEDS)
def test_bulk_keep_flow_equals_its_reference(seed: int) -> None:
    print(f"seed={seed}")
    parts, members = random_group(random.Random(seed))
    layout = build_layout(parts, members)
    claims = resolve_claims(layout)
    for comp in split_components(layout):
        if comp.homogeneous:
            continue
        plan = build_balanced_plan(layout, claims, comp)
        want = keep_flow_reference.maximise_kept(
            layout, claims, comp, {m: list(qs) for m, qs in plan.items()}
        )
        got = maximise_kept(layout, claims, comp, {m: list(qs) for m, qs in plan.items()})
        assert list(listed(got).items()) == list(listed(want).items())
