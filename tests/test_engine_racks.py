"""Rack-aware assignment (KIP-881): balance first, rack locality second, stickiness third."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from engine_helpers import feed_back
from hypothesis import given
from hypothesis import strategies as st

from kafka_sticky_plugin.core import MemberSpec, cooperative_assign, sticky_assign
from kafka_sticky_plugin.invariants import (
    check_balanced,
    check_complete,
    check_cooperative,
    check_valid,
)

Racks = dict[tuple[str, int], list[str]]


def replica_racks(parts: dict[str, int], n_racks: int, rf: int) -> Racks:
    """Partition p of each topic has replicas on racks p, p+1, ..., p+rf-1 (mod n_racks)."""
    return {
        (t, p): [f"r{(p + k) % n_racks}" for k in range(min(rf, n_racks))]
        for t, n in parts.items()
        for p in range(n)
    }


def mismatches(
    plan: dict[str, list[tuple[str, int]]], members: list[MemberSpec], racks: Racks
) -> int:
    rack_of = {m.member_id: m.rack for m in members}
    return sum(
        1
        for m, tps in plan.items()
        for tp in tps
        if rack_of[m] and racks.get(tp) and rack_of[m] not in racks[tp]
    )


def check_rack_plan(parts: dict[str, int], members: list[MemberSpec], plan: Any) -> None:
    check_valid(parts, members, plan)
    check_complete(parts, members, plan)
    check_balanced(parts, members, plan)


@pytest.mark.parametrize("n_racks", [2, 3, 4])
def test_rf1_one_member_per_rack_gets_exactly_its_rack(n_racks: int) -> None:
    """Replication factor 1, one member per rack: member i gets exactly rack i's partitions."""
    parts = {"a": 2 * n_racks, "b": n_racks}
    racks = replica_racks(parts, n_racks, 1)
    members = [
        MemberSpec(member_id=f"c{i}", topics=["a", "b"], rack=f"r{i}") for i in range(n_racks)
    ]
    plan = sticky_assign(parts, members, partition_racks=racks)
    for i in range(n_racks):
        expected = sorted((t, p) for t, n in parts.items() for p in range(n) if p % n_racks == i)
        assert plan[f"c{i}"] == expected


@pytest.mark.parametrize(("n_racks", "rf"), [(2, 2), (2, 3), (3, 3), (3, 4)])
def test_replicas_on_every_rack_give_the_plan_without_racks(n_racks: int, rf: int) -> None:
    """When every partition has a replica in every member rack, racks change nothing."""
    parts = {"a": 7, "b": 5}
    members = [
        MemberSpec(member_id=f"c{i}", topics=["a", "b"], rack=f"r{i % n_racks}") for i in range(5)
    ]
    plan = sticky_assign(parts, members, partition_racks=replica_racks(parts, n_racks, rf))
    assert plan == sticky_assign(parts, members)


@pytest.mark.parametrize(
    ("n_racks", "rf", "n_members", "expected"),
    [
        (3, 2, 3, 0),
        (4, 2, 4, 0),
        (3, 1, 6, 0),
        (2, 1, 3, 2),
        (4, 1, 2, 6),
        (3, 2, 2, 0),
    ],
)
def test_mismatch_count_grid(n_racks: int, rf: int, n_members: int, expected: int) -> None:
    """Grid of replication factors, rack counts and group sizes with the minimal number of
    cross-rack placements worked out by hand (one topic of 12 partitions; member i in rack
    i mod n_racks)."""
    parts = {"t": 12}
    racks = replica_racks(parts, n_racks, rf)
    members = [
        MemberSpec(member_id=f"c{i}", topics=["t"], rack=f"r{i % n_racks}")
        for i in range(n_members)
    ]
    plan = sticky_assign(parts, members, partition_racks=racks)
    check_rack_plan(parts, members, plan)
    assert mismatches(plan, members, racks) == expected


def test_no_rack_information_on_either_side_is_the_plain_plan() -> None:
    """Racks on partitions but not members, or on members but not partitions: plain plan."""
    parts = {"a": 9}
    racks = replica_racks(parts, 3, 1)
    plain_members = [MemberSpec(member_id=f"c{i}", topics=["a"]) for i in range(4)]
    assert sticky_assign(parts, plain_members, partition_racks=racks) == sticky_assign(
        parts, plain_members
    )
    racked_members = [MemberSpec(member_id=f"c{i}", topics=["a"], rack=f"r{i}") for i in range(4)]
    assert sticky_assign(parts, racked_members, partition_racks={}) == sticky_assign(
        parts, racked_members
    )


def test_mismatched_owned_partition_moves_only_when_balance_allows() -> None:
    """c0 (rack r0) owns a partition whose only replica is in r1; c1 (rack r1) has room: it
    moves. Loads stay 2/2 either way."""
    parts = {"t": 4}
    racks = {("t", 0): ["r1"], ("t", 1): ["r0"], ("t", 2): ["r0"], ("t", 3): ["r1"]}
    members = [
        MemberSpec(
            member_id="c0", topics=["t"], rack="r0", owned=[("t", 0), ("t", 1)], generation=1
        ),
        MemberSpec(
            member_id="c1", topics=["t"], rack="r1", owned=[("t", 2), ("t", 3)], generation=1
        ),
    ]
    plan = sticky_assign(parts, members, partition_racks=racks)
    assert plan == {"c0": [("t", 1), ("t", 2)], "c1": [("t", 0), ("t", 3)]}
    coop = cooperative_assign(parts, members, partition_racks=racks)
    assert coop == {"c0": [("t", 1)], "c1": [("t", 3)]}


def test_rack_plan_is_stable_when_fed_back() -> None:
    """A rack-aware plan fed back as ownership is returned unchanged (no churn)."""
    parts = {"a": 10, "b": 7}
    racks = replica_racks(parts, 3, 2)
    subs = {f"c{i}": ["a", "b"] for i in range(4)}
    rack = {f"c{i}": f"r{i % 3}" for i in range(4)}
    members = [MemberSpec(member_id=m, topics=t, rack=rack[m]) for m, t in subs.items()]
    plan = sticky_assign(parts, members, partition_racks=racks)
    again_members = [
        MemberSpec(
            member_id=m.member_id,
            topics=m.topics,
            rack=m.rack,
            owned=plan[m.member_id],
            generation=1,
        )
        for m in feed_back(subs, plan, 1)
    ]
    assert sticky_assign(parts, again_members, partition_racks=racks) == plan


@st.composite
def rack_groups(draw: Any, homogeneous: bool) -> tuple[dict[str, int], list[MemberSpec], Racks]:
    parts = {f"t{i}": draw(st.integers(0, 3)) for i in range(draw(st.integers(1, 2)))}
    names = sorted(parts)
    rack_names = ["r0", "r1", "r2"]
    members = []
    for i in range(draw(st.integers(1, 4))):
        topics = (
            names
            if homogeneous
            else draw(st.lists(st.sampled_from(names), min_size=1, unique=True))
        )
        owned = draw(st.lists(st.tuples(st.sampled_from(names), st.integers(0, 2)), max_size=3))
        rack = draw(st.sampled_from([None, *rack_names]))
        members.append(
            MemberSpec(
                member_id=f"m{i}",
                topics=topics,
                owned=owned,
                rack=rack,
                generation=draw(st.integers(-1, 2)),
            )
        )
    racks = {
        (t, p): draw(st.lists(st.sampled_from(rack_names), max_size=2, unique=True))
        for t, n in parts.items()
        for p in range(n)
    }
    return parts, members, racks


@given(rack_groups(homogeneous=False))
def test_racks_never_worsen_balance(case: tuple[dict[str, int], list[MemberSpec], Racks]) -> None:
    """With racks every member has exactly the load it has without racks; plans stay valid."""
    parts, members, racks = case
    with_racks = sticky_assign(parts, members, partition_racks=racks)
    without = sticky_assign(parts, members)
    check_rack_plan(parts, members, with_racks)
    assert sorted(len(v) for v in with_racks.values()) == sorted(len(v) for v in without.values())
    assert mismatches(with_racks, members, racks) <= mismatches(without, members, racks)
    check_cooperative(parts, members, cooperative_assign(parts, members, partition_racks=racks))


@given(rack_groups(homogeneous=True))
def test_rack_mismatches_minimal_by_brute_force(
    case: tuple[dict[str, int], list[MemberSpec], Racks],
) -> None:
    """Equal subscriptions: fewest cross-rack placements among all balanced assignments."""
    parts, members, racks = case
    plan = sticky_assign(parts, members, partition_racks=racks)
    partitions = [(t, p) for t in sorted(parts) for p in range(parts[t])]
    n = len(members)
    best = None
    for choice in itertools.product(range(n), repeat=len(partitions)):
        loads = [choice.count(i) for i in range(n)]
        if max(loads) - min(loads) > 1:
            continue
        cost = sum(
            1
            for tp, i in zip(partitions, choice, strict=True)
            if members[i].rack and racks.get(tp) and members[i].rack not in racks[tp]
        )
        best = cost if best is None else min(best, cost)
    assert mismatches(plan, members, racks) == (best or 0)
