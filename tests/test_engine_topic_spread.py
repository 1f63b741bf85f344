"""Per-topic spread for equal subscriptions after any rebalance.

The rule (``check_topic_spread``, part of ``check_plan``): every member keeps
``min(valid owned, final count)`` as before, and then no two members can exchange two *moved*
partitions (partitions neither of them validly owned) so that a topic gap of two or more
between them narrows while no other topic's gap between them goes beyond one. With no claims
at all every topic is within one per member.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest
from engine_helpers import feed_back, members_from

from kafka_sticky_plugin.core import sticky_assign
from kafka_sticky_plugin.errors import InvariantViolation
from kafka_sticky_plugin.invariants import check_plan, check_topic_spread

Plan = dict[str, list[tuple[str, int]]]


def _per_topic(plan: Plan, member: str) -> Counter[str]:
    return Counter(t for t, _ in plan[member])


def test_moved_partitions_are_spread_over_topics() -> None:
    """m2 joins owning nothing; the round-robin deal alone gave m0 two of t0 and m2 none;
    the swap pass trades m0's moved t0 partition for m2's moved t1 partition."""
    parts = {"t0": 3, "t1": 5}
    subs = {f"m{i}": ["t0", "t1"] for i in range(4)}
    owned = {
        "m0": [("t0", 1), ("t1", 0)],
        "m1": [("t0", 0), ("t1", 0), ("t1", 1), ("t1", 2)],
        "m3": [("t1", 3)],
    }
    members = members_from(subs, owned, 1)
    plan = sticky_assign(parts, members)
    check_plan(parts, members, plan)
    assert [_per_topic(plan, m)["t0"] for m in sorted(subs)] == [1, 1, 1, 0]
    # kept: m0 keeps t0-1, m1 keeps two, m3 keeps t1-3: the same as without the swap pass
    assert ("t0", 1) in plan["m0"] and ("t1", 3) in plan["m3"]


def test_checker_rejects_a_plan_a_swap_would_spread() -> None:
    parts = {"t0": 3, "t1": 5}
    subs = {f"m{i}": ["t0", "t1"] for i in range(4)}
    owned = {
        "m0": [("t0", 1), ("t1", 0)],
        "m1": [("t0", 0), ("t1", 0), ("t1", 1), ("t1", 2)],
        "m3": [("t1", 3)],
    }
    members = members_from(subs, owned, 1)
    unspread: Plan = {
        "m0": [("t0", 1), ("t0", 2)],
        "m1": [("t0", 0), ("t1", 1)],
        "m2": [("t1", 0), ("t1", 4)],
        "m3": [("t1", 2), ("t1", 3)],
    }
    with pytest.raises(InvariantViolation, match="topic spread"):
        check_topic_spread(parts, members, unspread)


def test_random_rebalances_follow_the_rule() -> None:
    """Seeded random equal-subscription groups with random claims, joins and leaves."""
    seed = random.randrange(2**32)
    print(f"seed {seed}")
    rnd = random.Random(seed)
    for _ in range(200):
        topics = [f"t{j}" for j in range(rnd.randint(2, 6))]
        parts = {t: rnd.randint(1, 9) for t in topics}
        subs = {f"m{k}": topics for k in range(rnd.randint(2, 7))}
        owned = {
            m: [(t, p) for t in topics for p in range(parts[t]) if rnd.random() < 0.35]
            for m in subs
        }
        members = members_from(subs, owned, rnd.randint(0, 3))
        plan = sticky_assign(parts, members)
        check_plan(parts, members, plan)
        # then a leave and a join, each fed back
        left = dict(subs)
        del left[sorted(left)[0]]
        left["new"] = topics
        again = feed_back(left, plan, 5)
        plan2 = sticky_assign(parts, again)
        check_plan(parts, again, plan2)


def test_join_and_leave_of_a_spread_group_keep_every_topic_within_one() -> None:
    """The usual case: a fresh group (every topic within one), then members join and leave
    one at a time; with these shapes every topic stays within one after each step."""
    parts = {f"t{j}": 12 for j in range(5)}
    topics = sorted(parts)
    subs = {f"m{k}": topics for k in range(6)}
    plan = sticky_assign(parts, members_from(subs))
    for step, change in enumerate(["+a", "-m2", "+b", "-m0", "-a"]):
        if change[0] == "+":
            subs[change[1:]] = topics
        else:
            del subs[change[1:]]
        members = feed_back(subs, plan, step + 1)
        plan = sticky_assign(parts, members)
        check_plan(parts, members, plan)
        for t in topics:
            counts = [_per_topic(plan, m)[t] for m in subs]
            assert max(counts) - min(counts) <= 1, (change, t, counts)
