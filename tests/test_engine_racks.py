"""Rack-aware assignment (KIP-881): balance first, rack locality second, stickiness third."""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest
from hypothesis import given
from strategies import Racks, rack_groups

from kafka_sticky_plugin.core import MemberSpec, cooperative_assign, sticky_assign
from kafka_sticky_plugin.core.components import split_components
from kafka_sticky_plugin.core.layout import build_layout
from kafka_sticky_plugin.invariants import (
    check_balanced,
    check_complete,
    check_cooperative,
    check_valid,
)

#: Replica racks of the mixed groups: r3 holds replicas but no member.
MIXED = ("r0", "r1", "r2", "r3")


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


def _owning_their_plan(
    members: list[MemberSpec], plan: dict[str, list[tuple[str, int]]]
) -> list[MemberSpec]:
    """The same members (topics, racks) fed back their partitions in ``plan`` at generation 1."""
    return [
        MemberSpec(
            member_id=m.member_id,
            topics=m.topics,
            rack=m.rack,
            owned=plan[m.member_id],
            generation=1,
        )
        for m in members
    ]


def test_rack_plan_is_stable_when_fed_back() -> None:
    """A rack-aware plan fed back as ownership is returned unchanged (no churn)."""
    parts = {"a": 10, "b": 7}
    racks = replica_racks(parts, 3, 2)
    subs = {f"c{i}": ["a", "b"] for i in range(4)}
    rack = {f"c{i}": f"r{i % 3}" for i in range(4)}
    members = [MemberSpec(member_id=m, topics=t, rack=rack[m]) for m, t in subs.items()]
    plan = sticky_assign(parts, members, partition_racks=racks)
    again_members = _owning_their_plan(members, plan)
    assert sticky_assign(parts, again_members, partition_racks=racks) == plan


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


# --- different subscriptions: exact against independent solvers ------------------------------

Plan = dict[str, list[tuple[str, int]]]


def components_of(parts: dict[str, int], members: list[MemberSpec]) -> list[tuple[list[str], bool]]:
    """(member ids, homogeneous) of every component, as the engine splits the group."""
    layout = build_layout(parts, members)
    return [
        ([layout.member_ids[m] for m in comp.members], comp.homogeneous)
        for comp in split_components(layout)
    ]


def is_mismatch(rack: str | None, replicas: list[str] | None) -> bool:
    return bool(rack) and bool(replicas) and rack not in replicas  # type: ignore[operator]


def min_mismatches_by_flow(
    parts: dict[str, int], members: list[MemberSpec], racks: Racks, loads: dict[str, int]
) -> int:
    """Independent solver: min-cost flow on the unaggregated graph (one node per partition and
    per member, member capacity = its load), successive shortest paths by Bellman-Ford."""
    ids = sorted(loads)
    spec = {m.member_id: m for m in members}
    partitions = sorted(
        {(t, p) for m in ids for t in spec[m].topics if t in parts for p in range(parts[t])}
    )
    n_p = len(partitions)
    source, sink = n_p + len(ids), n_p + len(ids) + 1
    to: list[int] = []
    cap: list[int] = []
    cost: list[int] = []
    out: list[list[int]] = [[] for _ in range(sink + 1)]

    def arc(u: int, v: int, c: int, w: int) -> None:
        for a, b, cc, ww in ((u, v, c, w), (v, u, 0, -w)):
            out[a].append(len(to))
            to.append(b)
            cap.append(cc)
            cost.append(ww)

    for i, tp in enumerate(partitions):
        arc(source, i, 1, 0)
        for k, m in enumerate(ids):
            if tp[0] in spec[m].topics:
                arc(i, n_p + k, 1, int(is_mismatch(spec[m].rack, racks.get(tp))))
    for k, m in enumerate(ids):
        arc(n_p + k, sink, loads[m], 0)
    total = 0
    for _ in range(n_p):
        dist: list[float] = [float("inf")] * (sink + 1)
        via = [-1] * (sink + 1)
        dist[source] = 0
        for _ in range(sink + 1):
            changed = False
            for u in range(sink + 1):
                if dist[u] == float("inf"):
                    continue
                for a in out[u]:
                    if cap[a] and dist[u] + cost[a] < dist[to[a]]:
                        dist[to[a]] = dist[u] + cost[a]
                        via[to[a]] = a
                        changed = True
            if not changed:
                break
        assert dist[sink] != float("inf"), "loads cannot be met"
        v = sink
        while v != source:
            a = via[v]
            cap[a] -= 1
            cap[a ^ 1] += 1
            v = to[a ^ 1]
        total += int(dist[sink])
    return total


def random_group(rng: random.Random) -> tuple[dict[str, int], list[MemberSpec], Racks]:
    """3-6 topics, 4-12 members with random subscriptions (some without a rack), replicas on
    0-2 of four racks, and ownership from a plan of a slightly different group."""
    parts = {f"t{i}": rng.randint(1, 8) for i in range(rng.randint(3, 6))}
    names = sorted(parts)
    n = rng.randint(4, 12)
    subs = {f"m{i:02d}": rng.sample(names, rng.randint(1, len(names))) for i in range(n)}
    racks: Racks = {
        (t, p): rng.sample(["r0", "r1", "r2", "r3"], rng.randint(0, 2))
        for t, c in parts.items()
        for p in range(c)
    }
    rack_of = {m: rng.choice([None, "r0", "r1", "r2"]) for m in subs}
    before = [
        MemberSpec(member_id=m, topics=ts, rack=rack_of[m])
        for m, ts in subs.items()
        if rng.random() < 0.8
    ]
    previous = sticky_assign(parts, before, partition_racks=racks)
    members = [
        MemberSpec(
            member_id=m,
            topics=ts,
            rack=rack_of[m],
            owned=previous.get(m, []),
            generation=rng.randint(0, 2),
        )
        for m, ts in subs.items()
    ]
    return parts, members, racks


@pytest.mark.parametrize("seed", range(12))
def test_heterogeneous_rack_plan_matches_an_unaggregated_min_cost_flow(seed: int) -> None:
    """Medium random groups: the loads of the plan without racks (as a multiset), a valid
    complete plan, and no more mismatches than an independent solver finds with those loads
    per member."""
    print(f"seed={seed}")
    parts, members, racks = random_group(random.Random(seed))
    plan = sticky_assign(parts, members, partition_racks=racks)
    plain = sticky_assign(parts, members)
    check_rack_plan(parts, members, plan)
    assert mismatches(plan, members, racks) <= mismatches(plain, members, racks)
    for ids, _ in components_of(parts, members):
        loads = {m: len(plain[m]) for m in ids}
        best = min_mismatches_by_flow(parts, members, racks, loads)
        got = mismatches({m: plan[m] for m in ids}, members, racks)
        # every load-optimal load vector is allowed (which member carries which load may
        # change), so the least with the plain plan's loads is an upper bound; exactness over
        # all load-optimal plans is tests/test_engine_rack_exact.py
        assert sorted(len(plan[m]) for m in ids) == sorted(loads.values())
        assert got <= best


@pytest.mark.parametrize("seed", range(6))
def test_heterogeneous_rack_plan_ignores_member_order(seed: int) -> None:
    """Members (and their topics and owned partitions) in any order give the same plan."""
    print(f"seed={seed}")
    rng = random.Random(seed)
    parts, members, racks = random_group(rng)
    plan = sticky_assign(parts, members, partition_racks=racks)
    for _ in range(3):
        shuffled = [
            MemberSpec(
                member_id=m.member_id,
                topics=rng.sample(list(m.topics), len(m.topics)),
                rack=m.rack,
                owned=rng.sample(list(m.owned), len(m.owned)),
                generation=m.generation,
            )
            for m in rng.sample(members, len(members))
        ]
        assert sticky_assign(parts, shuffled, partition_racks=racks) == plan


def test_heterogeneous_unavoidable_mismatches_keep_the_plain_plan() -> None:
    """Every replica is in r1 and every member in r0: mismatches cannot be avoided, the rack
    pass runs and must return the plan without racks unchanged."""
    parts = {"a": 5, "b": 4}
    racks: Racks = {(t, p): ["r1"] for t, n in parts.items() for p in range(n)}
    members = [
        MemberSpec(member_id="c0", topics=["a", "b"], rack="r0", owned=[("b", 0)], generation=1),
        MemberSpec(member_id="c1", topics=["b"], rack="r0", owned=[("a", 1)], generation=1),
        MemberSpec(
            member_id="c2", topics=["a"], rack="r0", owned=[("a", 2), ("a", 3)], generation=1
        ),
        MemberSpec(member_id="c3", topics=["a", "b"], rack="r0"),
    ]
    plan = sticky_assign(parts, members, partition_racks=racks)
    assert mismatches(plan, members, racks) > 0
    assert plan == sticky_assign(parts, members)


def test_heterogeneous_fresh_plan_with_nothing_to_gain_is_unchanged() -> None:
    """Nobody owns anything and every member is in r0 while every replica is in r1 or r2: all
    load-optimal plans have the same mismatches, so the rack pass must not move a single
    partition (moves from the plan without racks are the last tie-break)."""
    parts = {t: 5 for t in "abcd"}
    racks: Racks = {(t, p): [f"r{1 + p % 2}"] for t, n in parts.items() for p in range(n)}
    subs = {"c0": "ab", "c1": "bc", "c2": "cd", "c3": "da", "c4": "abcd", "c5": "ac"}
    members = [MemberSpec(member_id=m, topics=list(ts), rack="r0") for m, ts in subs.items()]
    plan = sticky_assign(parts, members, partition_racks=racks)
    assert mismatches(plan, members, racks) == 20
    assert plan == sticky_assign(parts, members)


def test_heterogeneous_extra_slot_moves_to_a_member_without_rack() -> None:
    """The same group with c5 rackless: a load-optimal plan may give c5 the extra partition
    the plan without racks gave c1 (r0, a mismatch there), one mismatch fewer; loads stay
    load-optimal (the same multiset)."""
    parts = {t: 5 for t in "abcd"}
    racks: Racks = {(t, p): [f"r{1 + p % 2}"] for t, n in parts.items() for p in range(n)}
    subs = {"c0": "ab", "c1": "bc", "c2": "cd", "c3": "da", "c4": "abcd", "c5": "ac"}
    members = [
        MemberSpec(member_id=m, topics=list(ts), rack=None if m == "c5" else "r0")
        for m, ts in subs.items()
    ]
    plan = sticky_assign(parts, members, partition_racks=racks)
    plain = sticky_assign(parts, members)
    check_rack_plan(parts, members, plan)
    assert sorted(map(len, plan.values())) == sorted(map(len, plain.values()))
    assert len(plan["c5"]) == len(plain["c5"]) + 1
    assert mismatches(plan, members, racks) == mismatches(plain, members, racks) - 1


def test_heterogeneous_rack_plan_is_stable_when_fed_back() -> None:
    """A rack-optimal plan for different subscriptions, with unavoidable mismatches (so the
    rack pass runs again), fed back as ownership comes back unchanged."""
    parts = {f"t{i}": 6 for i in range(4)}
    racks = replica_racks(parts, 3, 1)
    subs = {f"c{i}": [t for j, t in enumerate(sorted(parts)) if (i + j) % 3 != 0] for i in range(7)}
    rack = {m: f"r{i % 2}" for i, m in enumerate(subs)}  # nobody in r2
    members = [MemberSpec(member_id=m, topics=t, rack=rack[m]) for m, t in subs.items()]
    plan = sticky_assign(parts, members, partition_racks=racks)
    check_rack_plan(parts, members, plan)
    assert mismatches(plan, members, racks) > 0
    again = _owning_their_plan(members, plan)
    assert sticky_assign(parts, again, partition_racks=racks) == plan
    assert cooperative_assign(parts, again, partition_racks=racks) == plan


def test_heterogeneous_rack_pass_moves_a_whole_cycle() -> None:
    """Three members, each subscribed to two of three topics, each holding the partition the
    next one needs: no exchange between two members is even allowed by the subscriptions,
    only a rotation through all three removes the mismatches, and the pass finds it."""
    parts = {"a": 1, "b": 1, "c": 1}
    racks: Racks = {("a", 0): ["r0"], ("b", 0): ["r1"], ("c", 0): ["r2"]}
    subs = {"x": ["a", "c"], "y": ["a", "b"], "z": ["b", "c"]}
    rack = {"x": "r0", "y": "r1", "z": "r2"}
    owned = {"x": [("c", 0)], "y": [("a", 0)], "z": [("b", 0)]}
    members = [
        MemberSpec(member_id=m, topics=subs[m], rack=rack[m], owned=owned[m], generation=1)
        for m in subs
    ]
    assert sticky_assign(parts, members) == owned
    assert mismatches(owned, members, racks) == 3
    plan = sticky_assign(parts, members, partition_racks=racks)
    assert plan == {"x": [("a", 0)], "y": [("b", 0)], "z": [("c", 0)]}


def test_heterogeneous_group_releases_unowned_partitions_first() -> None:
    """c0 must give up one of its two r1 partitions for the r0 one; it keeps the one it owns
    (t0-2) and lets go of t0-1, which the plan without racks had only just given it."""
    parts = {"t0": 3, "t1": 1}
    racks: Racks = {("t0", 0): ["r0"], ("t0", 1): ["r1"], ("t0", 2): ["r1"], ("t1", 0): ["r0"]}
    members = [
        MemberSpec(member_id="c0", topics=["t0"], rack="r0", owned=[("t0", 2)], generation=1),
        MemberSpec(
            member_id="c1",
            topics=["t0", "t1"],
            rack="r1",
            owned=[("t0", 0), ("t0", 1)],
            generation=0,
        ),
    ]
    assert sticky_assign(parts, members) == {
        "c0": [("t0", 1), ("t0", 2)],
        "c1": [("t0", 0), ("t1", 0)],
    }
    plan = sticky_assign(parts, members, partition_racks=racks)
    assert plan == {"c0": [("t0", 0), ("t0", 2)], "c1": [("t0", 1), ("t1", 0)]}


def test_heterogeneous_partition_moving_to_its_owners_group_goes_to_its_owner() -> None:
    """The plan without racks gave c0's t1-1 to c2 for balance; the rack pass sends it back to
    c0's group (c0, c1: same subscription and rack), and there to c0 itself."""
    parts = {"t0": 2, "t1": 2}
    racks: Racks = {("t0", 0): ["r1"], ("t0", 1): ["r0"], ("t1", 0): ["r0"], ("t1", 1): ["r1"]}
    members = [
        MemberSpec(
            member_id="c0",
            topics=["t0", "t1"],
            rack="r1",
            owned=[("t0", 1), ("t1", 1)],
            generation=1,
        ),
        MemberSpec(member_id="c1", topics=["t0", "t1"], rack="r1"),
        MemberSpec(member_id="c2", topics=["t1"], rack="r0"),
        MemberSpec(member_id="c3", topics=["t0"], rack="r0", owned=[("t0", 0)], generation=0),
    ]
    assert sticky_assign(parts, members)["c2"] == [("t1", 1)]
    plan = sticky_assign(parts, members, partition_racks=racks)
    assert mismatches(plan, members, racks) == 0
    assert plan["c0"] == [("t1", 1)]
