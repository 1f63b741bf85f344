"""Property tests of the engine (Hypothesis, derandomized in CI: see conftest.py).

On small random groups the load vector is compared with a brute-force optimum; on every
random group the invariants, determinism under shuffled input, idempotence and cooperative
convergence are checked.
"""

from __future__ import annotations

import itertools
from typing import Any

from engine_helpers import feed_back, run_cooperative
from hypothesis import given
from hypothesis import strategies as st

from kafka_sticky_plugin.core import MemberSpec, sticky_assign
from kafka_sticky_plugin.invariants import check_plan


@st.composite
def groups(
    draw: Any, max_topics: int = 4, max_parts: int = 6, max_members: int = 6
) -> tuple[dict[str, int], list[MemberSpec]]:
    n_topics = draw(st.integers(1, max_topics))
    parts = {f"t{i}": draw(st.integers(0, max_parts)) for i in range(n_topics)}
    names = [*sorted(parts), "ghost"]
    n_members = draw(st.integers(1, max_members))
    members = []
    for i in range(n_members):
        topics = draw(st.lists(st.sampled_from(names), max_size=len(names), unique=True))
        owned = draw(
            st.lists(st.tuples(st.sampled_from(names), st.integers(-1, max_parts)), max_size=8)
        )
        generation = draw(st.integers(-1, 4))
        members.append(
            MemberSpec(member_id=f"m{i}", topics=topics, owned=owned, generation=generation)
        )
    return parts, members


def brute_force_loads(parts: dict[str, int], members: list[MemberSpec]) -> list[int]:
    """The lexicographically smallest descending load vector over every valid assignment."""
    partitions = [(t, p) for t in sorted(parts) for p in range(parts[t])]
    eligible = [[i for i, m in enumerate(members) if t in m.topics] for t, _ in partitions]
    eligible = [e for e in eligible if e]
    best: list[int] | None = None
    for choice in itertools.product(*eligible):
        loads = [0] * len(members)
        for i in choice:
            loads[i] += 1
        vector = sorted(loads, reverse=True)
        if best is None or vector < best:
            best = vector
    return best if best is not None else [0] * len(members)


@given(groups(max_topics=3, max_parts=3, max_members=4))
def test_load_vector_matches_brute_force_optimum(
    case: tuple[dict[str, int], list[MemberSpec]],
) -> None:
    """The plan's sorted load vector equals the brute-force lexicographic optimum."""
    parts, members = case
    plan = sticky_assign(parts, members)
    loads = sorted((len(plan[m.member_id]) for m in members), reverse=True)
    assert loads == brute_force_loads(parts, members)


@given(groups())
def test_invariants_hold_on_random_groups(case: tuple[dict[str, int], list[MemberSpec]]) -> None:
    """Validity, completeness, load optimality, stickiness; random groups, garbage claims."""
    parts, members = case
    plan = sticky_assign(parts, members)
    check_plan(parts, members, plan)


@given(groups(), st.randoms(use_true_random=False))
def test_plan_does_not_depend_on_input_order(
    case: tuple[dict[str, int], list[MemberSpec]], rnd: Any
) -> None:
    """Shuffling members and their claims gives the same plan."""
    parts, members = case
    expected = sticky_assign(parts, members)
    shuffled = list(members)
    rnd.shuffle(shuffled)
    shuffled = [
        MemberSpec(
            member_id=m.member_id,
            topics=rnd.sample(m.topics, len(m.topics)),
            owned=rnd.sample(m.owned, len(m.owned)),
            generation=m.generation,
        )
        for m in shuffled
    ]
    assert sticky_assign(parts, shuffled) == expected


@given(groups())
def test_plan_is_idempotent(case: tuple[dict[str, int], list[MemberSpec]]) -> None:
    """Feeding a plan back as everyone's ownership returns it unchanged."""
    parts, members = case
    plan = sticky_assign(parts, members)
    subs = {m.member_id: m.topics for m in members}
    again = sticky_assign(parts, feed_back(subs, plan, generation=5))
    assert again == plan


@given(groups())
def test_cooperative_rounds_converge_within_four(
    case: tuple[dict[str, int], list[MemberSpec]],
) -> None:
    """Cooperative rounds fed back as ownership converge in at most four rounds."""
    parts, members = case
    _, rounds = run_cooperative(parts, members)
    assert rounds <= 4


@given(
    st.integers(1, 5), st.integers(1, 12), st.integers(2, 8), st.booleans(), st.integers(0, 10_000)
)
def test_homogeneous_join_or_leave_converges_in_two_rounds(
    n_topics: int, parts_per_topic: int, n_members: int, join: bool, salt: int
) -> None:
    """In a homogeneous stable group one join or one leave converges in two cooperative rounds."""
    parts = {f"t{i}": parts_per_topic for i in range(n_topics)}
    subs = {f"m{i}": list(parts) for i in range(n_members)}
    stable = sticky_assign(parts, feed_back(subs, {}, -1))
    if join:
        subs[f"new{salt}"] = list(parts)
    else:
        subs.pop(sorted(subs)[salt % len(subs)])
    _, rounds = run_cooperative(parts, feed_back(subs, stable, generation=3))
    assert rounds <= 2
