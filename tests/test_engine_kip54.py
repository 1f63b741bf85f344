"""The worked examples of KIP-54 and the KIP-341 rejoin scenario, as named tests."""

from __future__ import annotations

from engine_helpers import feed_back, members_from, moved

from kafka_sticky_plugin.core import MemberSpec, cooperative_assign, sticky_assign
from kafka_sticky_plugin.invariants import check_plan


def test_example1_member_removed_keeps_every_surviving_assignment() -> None:
    """KIP-54 example 1: 3 members, 4 topics x 2; C1 leaves; C0 and C2 keep all they had."""
    parts = {f"t{i}": 2 for i in range(4)}
    subs = {c: list(parts) for c in ("C0", "C1", "C2")}
    first = sticky_assign(parts, members_from(subs))
    check_plan(parts, members_from(subs), first)
    assert sorted(len(v) for v in first.values()) == [2, 3, 3]
    survivors = {c: list(parts) for c in ("C0", "C2")}
    second_members = feed_back(survivors, first, generation=1)
    second = sticky_assign(parts, second_members)
    check_plan(parts, second_members, second)
    for c in survivors:
        assert set(first[c]) <= set(second[c])
    assert [len(second[c]) for c in survivors] == [4, 4]


def test_example2_heterogeneous_is_balanced_and_removal_preserves_five() -> None:
    """KIP-54 example 2: nested subscriptions; the unique optimum, then C0 leaves."""
    parts = {"t0": 1, "t1": 2, "t2": 3}
    subs = {"C0": ["t0"], "C1": ["t0", "t1"], "C2": ["t0", "t1", "t2"]}
    first = sticky_assign(parts, members_from(subs))
    assert first == {
        "C0": [("t0", 0)],
        "C1": [("t1", 0), ("t1", 1)],
        "C2": [("t2", 0), ("t2", 1), ("t2", 2)],
    }
    del subs["C0"]
    members = feed_back(subs, first, generation=1)
    second = sticky_assign(parts, members)
    check_plan(parts, members, second)
    assert second == {
        "C1": [("t0", 0), ("t1", 0), ("t1", 1)],
        "C2": [("t2", 0), ("t2", 1), ("t2", 2)],
    }


def test_example3_join_moves_exactly_one_partition() -> None:
    """KIP-54 example 3: C2 joins a balanced 2x2 group; one partition moves to it."""
    parts = {"t0": 2, "t1": 2}
    owned = {"C0": [("t0", 0), ("t1", 0)], "C1": [("t0", 1), ("t1", 1)]}
    subs = {c: ["t0", "t1"] for c in ("C0", "C1", "C2")}
    members = members_from(subs, owned, generation=1)
    plan = sticky_assign(parts, members)
    check_plan(parts, members, plan)
    assert len(plan["C2"]) == 1
    assert moved({**owned, "C2": []}, plan) == 1


def test_kip341_stale_member_rejoins_claiming_reassigned_partitions() -> None:
    """KIP-341: C1 paused past its session; C0 and C2 took its partitions at generation 2.
    C1 comes back with generation 1 claiming them: its claims lose, no partition is given twice
    and the generation-2 owners keep what balance allows."""
    parts = {"t": 6}
    gen1 = sticky_assign(parts, members_from({c: ["t"] for c in ("C0", "C1", "C2")}))
    survivors = {"C0": ["t"], "C2": ["t"]}
    gen2 = sticky_assign(parts, feed_back(survivors, gen1, generation=1))
    assert len(gen2["C0"]) == 3 and len(gen2["C2"]) == 3
    members = [
        MemberSpec(member_id="C0", topics=["t"], owned=gen2["C0"], generation=2),
        MemberSpec(member_id="C1", topics=["t"], owned=gen1["C1"], generation=1),
        MemberSpec(member_id="C2", topics=["t"], owned=gen2["C2"], generation=2),
    ]
    plan = sticky_assign(parts, members)
    check_plan(parts, members, plan)
    assert [len(plan[c]) for c in ("C0", "C1", "C2")] == [2, 2, 2]
    # C1's stale claims are hints: it gets back partitions it had before, not others'.
    assert set(plan["C1"]) <= set(gen1["C1"])
    coop = cooperative_assign(parts, members)
    assert coop["C1"] == []  # everything it could get is still owned by C0/C2 at generation 2
    assert set(coop["C0"]) <= set(gen2["C0"]) and set(coop["C2"]) <= set(gen2["C2"])
