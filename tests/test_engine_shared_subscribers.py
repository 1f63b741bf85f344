"""``topic_subscribers`` built once per component by ``core/api.py`` and shared by the
balancing builder and the stickiness flow: both only read it (it is unchanged after them),
and the plans equal those of each building its own, on the seeded random groups of
``tests/test_engine_keep_flow_bulk.py``. The seed is printed."""

from __future__ import annotations

import copy
import random

import pytest
from test_engine_keep_flow_bulk import random_group

from kafka_sticky_plugin.core.balance_builder import build_balanced_plan, topic_subscribers
from kafka_sticky_plugin.core.claims import resolve_claims
from kafka_sticky_plugin.core.components import split_components
from kafka_sticky_plugin.core.keep_flow import maximise_kept
from kafka_sticky_plugin.core.layout import build_layout

SEEDS = range(200)


@pytest.mark.parametrize("seed", SEEDS)
def test_shared_subscribers_are_only_read(seed: int) -> None:
    print(f"seed={seed}")
    parts, members = random_group(random.Random(seed))
    layout = build_layout(parts, members)
    claims = resolve_claims(layout)
    for comp in split_components(layout):
        if comp.homogeneous:
            continue
        shared = topic_subscribers(layout.subscriptions, comp)
        before = copy.deepcopy(shared)
        own = maximise_kept(layout, claims, comp, build_balanced_plan(layout, claims, comp))
        balanced = build_balanced_plan(layout, claims, comp, shared)
        got = maximise_kept(layout, claims, comp, balanced, shared)
        assert list(got.items()) == list(own.items())
        assert shared == before
