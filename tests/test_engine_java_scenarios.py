"""Scenario families of Apache Kafka's AbstractStickyAssignorTest, StickyAssignorTest and
CooperativeStickyAssignorTest, asserting properties (validity, completeness, balance, the
stickiness the claims force) rather than Java's exact lists, some of which depend on HashMap
iteration order."""

from __future__ import annotations

import random

import pytest
from engine_helpers import feed_back, members_from, moved, run_cooperative

from kafka_sticky_plugin.core import MemberSpec, cooperative_assign, sticky_assign
from kafka_sticky_plugin.invariants import check_plan


def test_add_remove_consumer_one_topic() -> None:
    """One member, then a second joins (half moves), then the first leaves (all to the second)."""
    parts = {"topic": 3}
    plan = sticky_assign(parts, members_from({"c1": ["topic"]}))
    assert plan == {"c1": [("topic", 0), ("topic", 1), ("topic", 2)]}
    subs = {"c1": ["topic"], "c2": ["topic"]}
    members = feed_back(subs, plan, 1)
    plan2 = sticky_assign(parts, members)
    check_plan(parts, members, plan2)
    assert set(plan2["c1"]) < set(plan["c1"]) and len(plan2["c2"]) == 1
    members = feed_back({"c2": ["topic"]}, plan2, 2)
    plan3 = sticky_assign(parts, members)
    assert set(plan2["c2"]) <= set(plan3["c2"]) and len(plan3["c2"]) == 3


def test_poor_round_robin_scenario_is_balanced() -> None:
    """Java's testPoorRoundRobinAssignmentScenario: 5 topics, mixed subscriptions."""
    parts = {f"topic{i}": 1 + i % 3 for i in range(1, 6)}
    subs = {
        "c1": ["topic1", "topic2", "topic3", "topic4", "topic5"],
        "c2": ["topic1", "topic3", "topic5"],
        "c3": ["topic1", "topic3", "topic5"],
        "c4": ["topic1", "topic2", "topic3", "topic4", "topic5"],
    }
    members = members_from(subs)
    check_plan(parts, members, sticky_assign(parts, members))


def test_add_remove_topic_two_consumers() -> None:
    """A topic is added to both subscriptions, then removed: existing partitions stay put."""
    parts = {"topic1": 3}
    subs = {"c1": ["topic1"], "c2": ["topic1"]}
    plan = sticky_assign(parts, members_from(subs))
    parts2 = {"topic1": 3, "topic2": 3}
    subs2 = {"c1": ["topic1", "topic2"], "c2": ["topic1", "topic2"]}
    members = feed_back(subs2, plan, 1)
    plan2 = sticky_assign(parts2, members)
    check_plan(parts2, members, plan2)
    assert all(set(plan[c]) <= set(plan2[c]) for c in subs)
    members = feed_back({c: ["topic2"] for c in subs}, plan2, 2)
    plan3 = sticky_assign(parts2, members)
    check_plan(parts2, members, plan3)
    for c in subs:
        assert {tp for tp in plan2[c] if tp[0] == "topic2"} <= set(plan3[c])


@pytest.mark.parametrize("seed", [1, 7, 42, 1234])
def test_reassignment_with_random_subscriptions_and_changes(seed: int) -> None:
    """Java's randomized family: random subscriptions change between rounds (seed printed)."""
    rng = random.Random(seed)
    parts = {f"t{i}": rng.randint(1, 20) for i in range(rng.randint(5, 15))}
    names = sorted(parts)
    subs = {
        f"c{i}": rng.sample(names, rng.randint(1, len(names))) for i in range(rng.randint(3, 12))
    }
    plan = sticky_assign(parts, members_from(subs))
    for rnd in range(1, 6):
        subs = {c: rng.sample(names, rng.randint(1, len(names))) for c in subs}
        members = feed_back(subs, plan, rnd)
        plan = sticky_assign(parts, members)
        check_plan(parts, members, plan)
        assert sticky_assign(parts, members) == plan, f"seed={seed} round={rnd}"


@pytest.mark.parametrize("seed", [3, 11, 99])
def test_multiple_consumers_leaving_random_subscription(seed: int) -> None:
    """Java's testLargeAssignmentWithMultipleConsumersLeavingAndRandomSubscription, smaller."""
    rng = random.Random(seed)
    parts = {f"t{i}": rng.randint(1, 10) for i in range(40)}
    names = sorted(parts)
    subs = {f"c{i}": rng.sample(names, rng.randint(1, 20)) for i in range(60)}
    plan = sticky_assign(parts, members_from(subs))
    for c in rng.sample(sorted(subs), 10):
        del subs[c]
    members = feed_back(subs, plan, 1)
    plan2 = sticky_assign(parts, members)
    check_plan(parts, members, plan2)


def test_stale_generation_claims_are_overridden() -> None:
    """testOwnedPartitionsAreInvalidatedForConsumerWithStaleGeneration: the higher generation's
    claims win, the stale member's conflicting claims are dropped."""
    parts = {"topic": 3, "topic2": 3}
    both = ["topic", "topic2"]
    members = [
        MemberSpec(
            member_id="c1",
            topics=both,
            owned=[("topic", 0), ("topic", 2), ("topic2", 1)],
            generation=2,
        ),
        MemberSpec(
            member_id="c2",
            topics=both,
            owned=[("topic", 0), ("topic", 2), ("topic2", 1)],
            generation=1,
        ),
    ]
    plan = sticky_assign(parts, members)
    check_plan(parts, members, plan)
    assert {("topic", 0), ("topic", 2), ("topic2", 1)} == set(plan["c1"])


def test_no_generation_claims_lose_to_any_generation() -> None:
    """testOwnedPartitionsAreInvalidatedForConsumerWithNoGeneration (generation -1 loses)."""
    members = [
        MemberSpec(member_id="c1", topics=["t"], owned=[("t", 0), ("t", 1)], generation=0),
        MemberSpec(member_id="c2", topics=["t"], owned=[("t", 0), ("t", 1)], generation=-1),
    ]
    plan = cooperative_assign({"t": 4}, members)
    assert ("t", 0) in plan["c1"] and ("t", 1) in plan["c1"]
    assert all(tp not in plan["c2"] for tp in [("t", 0), ("t", 1)])


def test_same_generation_double_claim_is_transferring_for_everyone() -> None:
    """testPartitionsTransferringOwnershipIncludeThePartitionClaimedByMultipleConsumersInSameGeneration:
    cooperative gives the doubly-claimed partition to nobody, then converges."""
    parts = {"t": 3}
    members = [
        MemberSpec(member_id="c1", topics=["t"], owned=[("t", 0), ("t", 1)], generation=1),
        MemberSpec(member_id="c2", topics=["t"], owned=[("t", 0), ("t", 2)], generation=1),
        MemberSpec(member_id="c3", topics=["t"], generation=1),
    ]
    first = cooperative_assign(parts, members)
    assert all(("t", 0) not in v for v in first.values())
    _, rounds = run_cooperative(parts, members)
    assert rounds == 2


def test_multiple_generations_keep_highest_owner() -> None:
    """testAssignmentWithMultipleGenerations: three members at generations 3, 2 and 1 with
    overlapping claims; every claim goes to the highest generation, stale ones are hints."""
    parts = {"t": 6}
    members = [
        MemberSpec(member_id="a", topics=["t"], owned=[("t", 0), ("t", 1)], generation=3),
        MemberSpec(member_id="b", topics=["t"], owned=[("t", 1), ("t", 2), ("t", 3)], generation=2),
        MemberSpec(member_id="c", topics=["t"], owned=[("t", 3), ("t", 4), ("t", 5)], generation=1),
    ]
    plan = sticky_assign(parts, members)
    check_plan(parts, members, plan)
    assert plan["a"] == [("t", 0), ("t", 1)]
    assert {("t", 2), ("t", 3)} == set(plan["b"])
    assert {("t", 4), ("t", 5)} == set(plan["c"])


def test_quota_all_members_reach_expected_quota() -> None:
    """testAllConsumersReachExpectedQuotaAndAreConsideredFilled: 4 partitions, 3 members with
    skewed ownership; loads are 2/1/1 and owned partitions kept where the quota allows."""
    parts = {"t": 4}
    members = [
        MemberSpec(member_id="c1", topics=["t"], owned=[("t", 0), ("t", 1)], generation=1),
        MemberSpec(member_id="c2", topics=["t"], owned=[("t", 2)], generation=1),
        MemberSpec(member_id="c3", topics=["t"], generation=1),
    ]
    plan = sticky_assign(parts, members)
    check_plan(parts, members, plan)
    assert plan["c1"] == [("t", 0), ("t", 1)] and plan["c2"] == [("t", 2)]
    assert plan["c3"] == [("t", 3)]


def test_quota_owning_min_quota_expected_max_quota() -> None:
    """testConsumerOwningMinQuotaExpectedMaxQuota: 5 partitions, 2 members owning 2 each."""
    parts = {"t1": 2, "t2": 3}
    members = [
        MemberSpec(member_id="c1", topics=["t1", "t2"], owned=[("t1", 0), ("t2", 1)], generation=1),
        MemberSpec(member_id="c2", topics=["t1", "t2"], owned=[("t1", 1), ("t2", 2)], generation=1),
    ]
    plan = sticky_assign(parts, members)
    check_plan(parts, members, plan)
    assert sorted(len(v) for v in plan.values()) == [2, 3]
    assert moved({"c1": [("t1", 0), ("t2", 1)], "c2": [("t1", 1), ("t2", 2)]}, plan) == 0


def test_quota_owning_more_than_max_quota() -> None:
    """testMaxQuotaConsumerMoreThanNumExpectedMaxCapacityMembers: three members own 3 each of 9
    partitions... and a fourth joins: each keeps at least its quota of its own."""
    parts = {"t": 9}
    owned = {
        "c1": [("t", 0), ("t", 1), ("t", 2)],
        "c2": [("t", 3), ("t", 4), ("t", 5)],
        "c3": [("t", 6), ("t", 7), ("t", 8)],
    }
    subs = {c: ["t"] for c in ("c1", "c2", "c3", "c4")}
    members = members_from(subs, owned, 1)
    plan = sticky_assign(parts, members)
    check_plan(parts, members, plan)
    assert sorted(len(v) for v in plan.values()) == [2, 2, 2, 3]
    assert moved({**owned, "c4": []}, plan) == 2


def test_topic_balance_after_reassignment() -> None:
    """A member joins a homogeneous group of several topics: the new member's partitions are
    spread over topics (per-topic spread within one where counts allow)."""
    parts = {f"t{i}": 6 for i in range(4)}
    subs = {f"c{i}": list(parts) for i in range(3)}
    plan = sticky_assign(parts, members_from(subs))
    subs["c3"] = list(parts)
    members = feed_back(subs, plan, 1)
    plan2 = sticky_assign(parts, members)
    check_plan(parts, members, plan2)
    for c, tps in plan2.items():
        per_topic = [sum(1 for t, _ in tps if t == topic) for topic in parts]
        assert max(per_topic) - min(per_topic) <= 1, (c, per_topic)


def test_fresh_homogeneous_spreads_every_topic() -> None:
    """A fresh homogeneous group gets every topic spread within one partition per member."""
    parts = {"a": 7, "b": 5, "c": 11}
    subs = {f"m{i}": list(parts) for i in range(4)}
    plan = sticky_assign(parts, members_from(subs))
    for topic, n in parts.items():
        counts = [sum(1 for t, _ in tps if t == topic) for tps in plan.values()]
        assert max(counts) - min(counts) <= 1 and sum(counts) == n


def test_subscription_change_keeps_partitions_of_kept_topics() -> None:
    """testNewSubscription: one member drops a topic; only that topic's partitions move."""
    parts = {f"t{i}": 2 for i in range(5)}
    subs = {f"c{i}": list(parts) for i in range(3)}
    plan = sticky_assign(parts, members_from(subs))
    subs["c0"] = [t for t in parts if t != "t0"]
    members = feed_back(subs, plan, 1)
    plan2 = sticky_assign(parts, members)
    check_plan(parts, members, plan2)
    assert {tp for tp in plan["c0"] if tp[0] != "t0"} <= set(plan2["c0"])


def test_cooperative_balance_with_different_generations() -> None:
    """testBalanceWithPartitionsAssignedToConsumersWithDifferentGenerations: converges, no
    member gets a partition another member still owns."""
    parts = {"t": 6, "u": 6}
    both = ["t", "u"]
    members = [
        MemberSpec(member_id="a", topics=both, owned=[("t", i) for i in range(6)], generation=4),
        MemberSpec(member_id="b", topics=both, owned=[("t", 0), ("u", 0), ("u", 1)], generation=3),
        MemberSpec(member_id="c", topics=both, owned=[("u", i) for i in range(2, 6)], generation=2),
    ]
    final, rounds = run_cooperative(parts, members)
    assert rounds <= 2
    assert sorted(len(v) for v in final.values()) == [4, 4, 4]
