"""The simulator's models of the broker's KIP-848 assignors, and the reconciliation model.

Properties, on seeded random groups (the seed is printed): every partition of a subscribed
topic is assigned exactly once and only to a subscriber; ``uniform`` balances a homogeneous
group to within one partition and keeps what it can; ``range`` gives contiguous ranges of
sizes within one per topic. Plan-for-plan equality with the broker's own classes is
``test_kip848_assignors_crosscheck.py``.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from kafka_sticky_plugin.core.spec import TopicPartitionTuple
from kafka_sticky_plugin.errors import InvalidSpecError
from kafka_sticky_plugin.simulate.kip848_assignors import (
    Target,
    broker_assign,
    group_of,
    is_homogeneous,
)
from kafka_sticky_plugin.simulate.model import Event, Scenario
from kafka_sticky_plugin.simulate.simulator import simulate
from kafka_sticky_plugin.simulate.strategies import get_strategy

SEED = 20261124
Spec = list[tuple[str, list[str], frozenset[TopicPartitionTuple]]]


def _random_group(rng: random.Random, homogeneous: bool) -> tuple[dict[str, int], Spec]:
    topics = {f"t{i}": rng.randint(1, 30) for i in range(rng.randint(1, 5))}
    names = sorted(topics)
    spec: Spec = []
    for index in range(rng.randint(1, 10)):
        subscribed = names if homogeneous else [t for t in names if rng.random() < 0.5]
        spec.append((f"m{index}", subscribed or [names[0]], frozenset()))
    return topics, spec


def _check_complete_and_valid(topics: dict[str, int], spec: Spec, plan: Target) -> None:
    subscribed = {m: set(ts) for m, ts, _ in spec}
    counts = Counter(tp for tps in plan.values() for tp in tps)
    assert all(n == 1 for n in counts.values()), "a partition assigned twice"
    expected = {(t, p) for ts in subscribed.values() for t in ts for p in range(topics[t])}
    assert set(counts) == expected
    for member, tps in plan.items():
        assert {t for t, _ in tps} <= subscribed[member]


@pytest.mark.parametrize("assignor", ["uniform", "range"])
@pytest.mark.parametrize("homogeneous", [True, False], ids=["homogeneous", "heterogeneous"])
def test_every_partition_once_to_a_subscriber(assignor: str, homogeneous: bool) -> None:
    """Over seeded groups and a few target epochs, every partition goes to exactly one
    subscriber, with or without a current target."""
    print(f"seed {SEED}")
    rng = random.Random(f"{SEED}:{assignor}:{homogeneous}")
    for _ in range(150):
        topics, spec = _random_group(rng, homogeneous)
        for _ in range(3):
            plan = broker_assign(assignor, group_of(topics, spec))
            _check_complete_and_valid(topics, spec, plan)
            spec = [(m, ts, frozenset(plan[m])) for m, ts, _ in spec[: rng.randint(1, len(spec))]]


def test_uniform_balances_a_homogeneous_group_and_keeps_what_it_can() -> None:
    """Homogeneous uniform: loads differ by at most one; when a member leaves, the others keep
    every partition they had (only the leaver's move)."""
    rng = random.Random(f"{SEED}:uniform-sticky")
    for _ in range(150):
        topics, spec = _random_group(rng, homogeneous=True)
        plan = broker_assign("uniform", group_of(topics, spec))
        loads = [len(tps) for tps in plan.values()]
        assert max(loads) - min(loads) <= 1
        if len(spec) < 2:
            continue
        survivors = [(m, ts, frozenset(plan[m])) for m, ts, _ in spec[1:]]
        after = broker_assign("uniform", group_of(topics, survivors))
        for member, _, before in survivors:
            assert before <= set(after[member])
        loads = [len(tps) for tps in after.values()]
        assert max(loads) - min(loads) <= 1


def test_range_gives_contiguous_ranges_per_topic() -> None:
    """Range: each subscriber of a topic gets one contiguous range; sizes within one, the
    larger ranges first in member id order."""
    rng = random.Random(f"{SEED}:range")
    for _ in range(150):
        topics, spec = _random_group(rng, homogeneous=False)
        plan = broker_assign("range", group_of(topics, spec))
        for topic, count in topics.items():
            subscribers = sorted(m for m, ts, _ in spec if topic in ts)
            if not subscribers:
                continue
            sizes = []
            start = 0
            for member in subscribers:
                mine = [p for t, p in plan[member] if t == topic]
                assert mine == list(range(start, start + len(mine)))
                start += len(mine)
                sizes.append(len(mine))
            assert start == count
            assert sizes == sorted(sizes, reverse=True) and sizes[0] - sizes[-1] <= 1


def test_homogeneous_means_same_existing_topics() -> None:
    """The builder choice: same subscription (unknown topics ignored) is homogeneous."""
    topics = {"a": 1, "b": 1}
    assert is_homogeneous(
        group_of(topics, [("x", ["a", "zz"], frozenset()), ("y", ["a"], frozenset())])
    )
    assert not is_homogeneous(
        group_of(topics, [("x", ["a"], frozenset()), ("y", ["b"], frozenset())])
    )


def test_unknown_broker_assignor_is_one_clear_error() -> None:
    """An assignor name the broker does not have is refused, naming the known ones."""
    with pytest.raises(InvalidSpecError, match="'uniform'"):
        broker_assign("sticky", group_of({"a": 1}, [("x", ["a"], frozenset())]))


@pytest.mark.parametrize("name", ["kip848-uniform", "kip848-range"])
def test_reconciliation_in_the_simulator(name: str) -> None:
    """A scenario of every event kind under a KIP-848 strategy: no violation (validity,
    completeness, never a partition to a new owner before the old one let go), one or two
    rounds per target epoch, and a paused partition is counted once per round it waits."""
    events = tuple(
        Event(kind, count)
        for kind, count in [
            ("join", 2),
            ("leave", 1),
            ("crash", 1),
            ("pause", 1),
            ("rolling_restart", 2),
            ("partitions_added", 3),
            ("topic_added", 0),
            ("topic_deleted", 1),
            ("subscription_change", 2),
            ("scale_out", 3),
            ("scale_in", 2),
        ]
    )
    for shape in ("homogeneous", "random"):
        scenario = Scenario("s", 5, 6, (("t0", 12), ("t1", 7), ("t2", 5)), shape, events)
        rows = simulate(scenario, get_strategy(name))
        for row in rows:
            assert row.violations == 0, row.first_violation
            assert row.rebalances <= row.rounds <= 2 * row.rebalances
        assert rows[0].paused_partition_rounds == 24 and rows[0].rounds == 1


def test_uniform_moves_less_than_range_when_a_member_leaves() -> None:
    """The broker's uniform keeps the survivors' partitions; range re-cuts the ranges."""
    scenario = Scenario(
        "s", 1, 8, (("t0", 64),), "homogeneous", (Event("leave", members=("m00000",)),)
    )
    uniform = simulate(scenario, get_strategy("kip848-uniform"))[1]
    ranged = simulate(scenario, get_strategy("kip848-range"))[1]
    assert uniform.moved == 0 and uniform.fresh_assigned == 8  # the leaver's, nothing else
    assert ranged.moved > 0
    assert uniform.rounds == 1 and ranged.rounds == 2
