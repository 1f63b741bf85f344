"""Ownership claims: validation, generations, ties, duplicates (the claims policy)."""

from __future__ import annotations

import random

import pytest
from engine_helpers import members_from

from kafka_sticky_plugin.core import MemberSpec, cooperative_assign, sticky_assign
from kafka_sticky_plugin.errors import InvalidSpecError
from kafka_sticky_plugin.invariants import check_plan

PARTS = {"a": 3, "b": 3}


@pytest.mark.parametrize(
    "claim",
    [("zzz", 0), ("b", 0), ("a", -1), ("a", 3), ("a", 99)],
    ids=["unknown-topic", "unsubscribed-topic", "negative", "at-count", "beyond-count"],
)
def test_invalid_claims_are_ignored(claim: tuple[str, int]) -> None:
    """A claim the member cannot validly hold neither crashes nor is honoured."""
    members = [
        MemberSpec(member_id="m1", topics=["a"], owned=[claim, ("a", 2)], generation=3),
        MemberSpec(member_id="m2", topics=["a", "b"]),
    ]
    plan = sticky_assign(PARTS, members)
    check_plan(PARTS, members, plan)
    assert ("a", 2) in plan["m1"]
    assert claim not in plan["m1"]


def test_uncontested_claim_is_kept_whatever_its_generation() -> None:
    """A claim at generation -1 that nobody contests is kept."""
    members = [
        MemberSpec(member_id="m1", topics=["a"], owned=[("a", 0)], generation=-1),
        MemberSpec(member_id="m2", topics=["a"], owned=[("a", 1)], generation=7),
    ]
    plan = cooperative_assign({"a": 2}, members)
    assert plan == {"m1": [("a", 0)], "m2": [("a", 1)]}


def test_contested_claim_goes_to_highest_generation() -> None:
    """Two members claim a-0; the higher generation keeps it, in both modes."""
    members = [
        MemberSpec(member_id="old", topics=["a"], owned=[("a", 0), ("a", 1)], generation=4),
        MemberSpec(member_id="new", topics=["a"], owned=[("a", 0)], generation=5),
    ]
    for assign in (sticky_assign, cooperative_assign):
        plan = assign({"a": 2}, members)
        assert ("a", 0) in plan["new"]
        assert ("a", 0) not in plan["old"]
        assert ("a", 1) in plan["old"]


def test_same_generation_double_claim_is_invalid_for_both() -> None:
    """A tie at the top generation: eager assigns it freely, cooperative to nobody."""
    members = [
        MemberSpec(member_id="x", topics=["a"], owned=[("a", 0), ("a", 1)], generation=2),
        MemberSpec(member_id="y", topics=["a"], owned=[("a", 0), ("a", 2)], generation=2),
    ]
    eager = sticky_assign({"a": 4}, members)
    check_plan({"a": 4}, members, eager)
    coop = cooperative_assign({"a": 4}, members)
    assert all(("a", 0) not in v for v in coop.values())
    assert ("a", 1) in coop["x"] and ("a", 2) in coop["y"]


def test_tie_broken_by_a_higher_generation_whatever_the_order() -> None:
    """Two claims tie at generation 2, a third claims at 3: the third owns it in every order."""
    specs = [
        MemberSpec(member_id="p", topics=["a"], owned=[("a", 0)], generation=2),
        MemberSpec(member_id="q", topics=["a"], owned=[("a", 0)], generation=2),
        MemberSpec(member_id="r", topics=["a"], owned=[("a", 0)], generation=3),
    ]
    expected = cooperative_assign({"a": 3}, specs)
    assert expected["r"] == [("a", 0)]
    for order in ([2, 0, 1], [0, 2, 1], [1, 0, 2]):
        assert cooperative_assign({"a": 3}, [specs[i] for i in order]) == expected


def test_duplicate_member_ids_collapse_into_one_member() -> None:
    """Two specs with one id become one member (union of topics and claims, max generation)."""
    members = [
        MemberSpec(member_id="d", topics=["a"], owned=[("a", 0)], generation=1),
        MemberSpec(member_id="d", topics=["b"], owned=[("b", 0)], generation=3),
        MemberSpec(member_id="e", topics=["a", "b"]),
    ]
    plan = sticky_assign(PARTS, members)
    assert set(plan) == {"d", "e"}
    assert ("a", 0) in plan["d"] and ("b", 0) in plan["d"]
    assert sorted(len(v) for v in plan.values()) == [3, 3]


def test_deleted_topic_claims_are_dropped_and_rest_rebalanced() -> None:
    """Members owned partitions of a topic that no longer exists: those claims vanish."""
    owned = {"m1": [("gone", 0), ("a", 0)], "m2": [("gone", 1), ("a", 1)]}
    members = members_from({"m1": ["a", "gone"], "m2": ["a", "gone"]}, owned, 3)
    plan = sticky_assign({"a": 3}, members)
    check_plan({"a": 3}, members, plan)
    assert ("a", 0) in plan["m1"] and ("a", 1) in plan["m2"]


def test_empty_subscriptions_and_no_topics() -> None:
    """Members with no (known) topics are keys with empty lists; empty input gives {}."""
    assert sticky_assign({}, []) == {}
    members = [MemberSpec(member_id="x", topics=[]), MemberSpec(member_id="y", topics=["nope"])]
    assert sticky_assign({"a": 2}, members) == {"x": [], "y": []}


def test_order_of_members_and_claims_does_not_matter() -> None:
    """Same input in any order gives the same plan (seeded shuffles)."""
    seed = 20261122
    rng = random.Random(seed)
    parts = {"a": 7, "b": 5, "c": 2}
    base = [
        MemberSpec(
            member_id=f"m{i}",
            topics=rng.sample(sorted(parts), rng.randint(1, 3)),
            owned=[(t, rng.randrange(parts[t])) for t in rng.sample(sorted(parts), 2)],
            generation=rng.randint(-1, 3),
        )
        for i in range(6)
    ]
    expected = sticky_assign(parts, base)
    for _ in range(20):
        shuffled = [
            MemberSpec(
                member_id=m.member_id,
                topics=list(reversed(m.topics)),
                owned=list(reversed(m.owned)),
                generation=m.generation,
            )
            for m in rng.sample(base, len(base))
        ]
        assert sticky_assign(parts, shuffled) == expected, f"seed={seed}"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"member_id": "x", "topics": ["a"], "generation": -2},
        {"member_id": "x", "topics": ["a"], "generation": 2**31},
        {"member_id": "x", "topics": "a"},
        {"member_id": "x", "topics": ["a"], "owned": [("a",)]},
        {"member_id": "x", "topics": ["a"], "owned": [(1, 2)]},
        {"member_id": 5, "topics": ["a"]},
    ],
    ids=[
        "gen-below-minus-one",
        "gen-beyond-int32",
        "topics-string",
        "owned-not-pair",
        "owned-bad-types",
        "member-id-not-str",
    ],
)
def test_absurd_member_specs_raise_a_clear_error(kwargs: dict[str, object]) -> None:
    """Inputs that make a spec meaningless raise InvalidSpecError naming the problem."""
    with pytest.raises(InvalidSpecError):
        MemberSpec(**kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "counts", [{"a": -1}, {"a": 1.5}, {3: 1}], ids=["negative", "float", "name"]
)
def test_bad_partition_counts_raise(counts: dict[object, object]) -> None:
    """A negative or non-int partition count, or a non-str topic, raises InvalidSpecError."""
    with pytest.raises(InvalidSpecError):
        sticky_assign(counts, [MemberSpec(member_id="x", topics=["a"])])  # type: ignore[arg-type]


def test_member_spec_normalises_and_reuses_canonical_input() -> None:
    """A canonical (sorted, distinct, typed) owned tuple is kept as is; anything else is
    normalised to the same value; a bool partition is refused even in tuple form."""
    canonical = (("a", 0), ("a", 2), ("b", 1))
    spec = MemberSpec(member_id="m", topics=("a", "b"), owned=canonical)
    assert spec.owned is canonical
    messy = MemberSpec(
        member_id="m", topics=["b", "a", "a"], owned=[("b", 1), ("a", 2), ("a", 0), ("a", 2)]
    )
    assert messy == spec
    with pytest.raises(InvalidSpecError):
        MemberSpec(member_id="m", topics=("a",), owned=(("a", True),))
    unsorted = MemberSpec(member_id="m", topics=("b", "a"), owned=(("b", 1), ("a", 0)))
    assert unsorted.topics == ("a", "b") and unsorted.owned == (("a", 0), ("b", 1))
