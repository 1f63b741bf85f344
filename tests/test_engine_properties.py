"""Property tests of the engine (Hypothesis, derandomized in CI: see conftest.py).

On small random groups the load vector and the stickiness are compared with brute-force
optima, and homogeneous joins and leaves converge in two cooperative rounds. The invariants,
determinism under shuffled input, idempotence and cooperative convergence on random groups
are checked for every registered strategy by the contract suite
(``tests/test_strategy_contract.py``).
"""

from __future__ import annotations

import itertools
from typing import Any

from engine_helpers import feed_back, run_cooperative
from hypothesis import given
from hypothesis import strategies as st
from strategies import groups

from kafka_sticky_plugin.core import MemberSpec, sticky_assign


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


def brute_force_stickiness(parts: dict[str, int], members: list[MemberSpec]) -> int:
    """Most validly owned partitions any assignment with the optimal load vector keeps."""
    from kafka_sticky_plugin.core.claims import resolve_claims
    from kafka_sticky_plugin.core.layout import build_layout

    layout = build_layout(parts, members)
    claims = resolve_claims(layout)
    tuples = layout.partition_tuples()
    position = {m.member_id: i for i, m in enumerate(members)}
    owner = {
        tuples[q]: position[layout.member_ids[m]] for m, qs in enumerate(claims.owned) for q in qs
    }
    partitions = [(t, p) for t in sorted(parts) for p in range(parts[t])]
    choices = [[i for i, m in enumerate(members) if tp[0] in m.topics] for tp in partitions]
    keep = [(tp, c) for tp, c in zip(partitions, choices, strict=True) if c]
    best: tuple[list[int], int] | None = None
    for choice in itertools.product(*[c for _, c in keep]):
        loads = [0] * len(members)
        for i in choice:
            loads[i] += 1
        kept = sum(1 for (tp, _), i in zip(keep, choice, strict=True) if owner.get(tp) == i)
        key = (sorted(loads, reverse=True), -kept)
        if best is None or key < best:
            best = key
    return 0 if best is None else -best[1]


def kept_count(
    parts: dict[str, int], members: list[MemberSpec], plan: dict[str, list[tuple[str, int]]]
) -> int:
    from kafka_sticky_plugin.core.claims import resolve_claims
    from kafka_sticky_plugin.core.layout import build_layout

    layout = build_layout(parts, members)
    claims = resolve_claims(layout)
    tuples = layout.partition_tuples()
    return sum(
        1
        for m, qs in enumerate(claims.owned)
        for q in qs
        if tuples[q] in set(plan[layout.member_ids[m]])
    )


@given(st.integers(1, 3), st.integers(1, 3), st.integers(2, 4), st.data())
def test_homogeneous_stickiness_is_optimal(
    n_topics: int, per_topic: int, n_members: int, data: Any
) -> None:
    """Equal subscriptions: the plan keeps as many owned partitions as the best balanced plan."""
    parts = {f"t{i}": per_topic for i in range(n_topics)}
    names = sorted(parts)
    members = [
        MemberSpec(
            member_id=f"m{i}",
            topics=names,
            owned=data.draw(
                st.lists(
                    st.tuples(st.sampled_from(names), st.integers(0, per_topic - 1)), max_size=4
                )
            ),
            generation=data.draw(st.integers(-1, 2)),
        )
        for i in range(n_members)
    ]
    plan = sticky_assign(parts, members)
    assert kept_count(parts, members, plan) == brute_force_stickiness(parts, members)


def test_heterogeneous_stickiness_is_optimal() -> None:
    """Different subscriptions: on 300 seeded random small groups the plan keeps exactly as many
    owned partitions as the best load-optimal plan (the exhaustive and certificate tests are in
    test_engine_exact_sticky.py)."""
    import random

    seed = 541
    rng = random.Random(seed)
    cases = 0
    while cases < 300:
        parts = {f"t{i}": rng.randint(0, 3) for i in range(rng.randint(1, 3))}
        if sum(parts.values()) > 7:
            continue
        names = sorted(parts)
        members = []
        for i in range(rng.randint(2, 4)):
            topics = rng.sample(names, rng.randint(1, len(names)))
            owned = [
                (t, rng.randrange(parts[t]))
                for t in topics
                if parts[t]
                for _ in range(rng.randint(0, 2))
            ]
            members.append(
                MemberSpec(
                    member_id=f"m{i}", topics=topics, owned=owned, generation=rng.randint(0, 2)
                )
            )
        cases += 1
        best = brute_force_stickiness(parts, members)
        got = kept_count(parts, members, sticky_assign(parts, members))
        assert got == best, f"seed={seed} case={cases}: kept {got}, best {best}"
