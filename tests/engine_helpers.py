"""Helpers shared by the engine tests: building groups and feeding plans back as claims."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from kafka_sticky_plugin.core import MemberSpec, cooperative_assign
from kafka_sticky_plugin.invariants import check_cooperative, check_plan, check_valid

Plan = dict[str, list[tuple[str, int]]]


def members_from(
    subscriptions: Mapping[str, Iterable[str]],
    owned: Mapping[str, Iterable[tuple[str, int]]] | None = None,
    generation: int = -1,
) -> list[MemberSpec]:
    owned = owned or {}
    return [
        MemberSpec(
            member_id=m, topics=list(ts), owned=list(owned.get(m, ())), generation=generation
        )
        for m, ts in subscriptions.items()
    ]


def feed_back(
    subscriptions: Mapping[str, Iterable[str]], plan: Plan, generation: int
) -> list[MemberSpec]:
    """Members that own what ``plan`` gave them (members not in the plan own nothing)."""
    return members_from(subscriptions, {m: plan.get(m, []) for m in subscriptions}, generation)


def run_cooperative(
    partitions: Mapping[str, int], members: list[MemberSpec], max_rounds: int = 10
) -> tuple[Plan, int]:
    """Run cooperative rounds, feeding each back as owned, until nothing is withheld.

    Returns the converged plan and the number of rounds it took (the last round withholds
    nothing). Every round is checked against the cooperative contract.
    """
    subs = {m.member_id: m.topics for m in members}
    current = members
    generation = max((m.generation for m in members), default=-1)
    for rnd in range(1, max_rounds + 1):
        plan = cooperative_assign(partitions, current)
        check_valid(partitions, current, plan)
        check_cooperative(partitions, current, plan)
        assigned = sum(len(v) for v in plan.values())
        wanted = sum(
            partitions[t] for t in {t for ts in subs.values() for t in ts if t in partitions}
        )
        generation += 1
        nxt = feed_back(subs, plan, generation)
        if assigned == wanted:
            check_plan(partitions, nxt, plan)
            return plan, rnd
        current = nxt
    raise AssertionError(f"cooperative rounds did not converge in {max_rounds}")


def moved(before: Plan, after: Plan) -> int:
    """Partitions that changed hands between two plans (new or removed members count)."""
    owner_before = {tp: m for m, tps in before.items() for tp in tps}
    return sum(1 for m, tps in after.items() for tp in tps if owner_before.get(tp, m) != m)
