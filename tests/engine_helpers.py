"""Helpers shared by the engine tests: building groups and feeding plans back as claims."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import pytest

from kafka_sticky_plugin.core import MemberSpec, cooperative_assign, implementation
from kafka_sticky_plugin.core.claims import resolve_claims
from kafka_sticky_plugin.core.layout import build_layout
from kafka_sticky_plugin.invariants import check_cooperative, check_plan, check_valid

Plan = dict[str, list[tuple[str, int]]]
#: ``engine(partitions_per_topic, members) -> plan`` (an engine function or a strategy's
#: ``assign``)
PlanFn = Callable[[Mapping[str, int], Sequence[MemberSpec]], Plan]


def engine_twin_in_use() -> Any:
    """The compiled twin of the engine's steps as :mod:`kafka_sticky_plugin.core.implementation`
    picked it, for a module comparing it with the reference. Without one the calling module
    is skipped with one line, and fails under ``CI=true`` (``make test`` installs the twin
    with ``make twin``)."""
    if implementation.twin is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true: the engine twin must be in use: {implementation.describe()}")
        pytest.skip(
            f"engine twin not in use: {implementation.describe()} (make twin)",
            allow_module_level=True,
        )
    return implementation.twin


def listed(plan: Mapping[int, Sequence[int]]) -> dict[int, list[int]]:
    """``plan``'s values as lists, keys in order: a member planned exactly its claims holds
    the claims' own ``array("i")`` (``Claims.owned[m]``), others a list, and a plan is
    compared by its values."""
    return {m: list(qs) for m, qs in plan.items()}


def without_twin(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` with the engine's twin switched off: the reference's answer."""
    saved, implementation.twin = implementation.twin, None
    try:
        return fn(*args, **kwargs)
    finally:
        implementation.twin = saved


class CountingTwin:
    """The engine twin ``twin`` with its step ``step`` counted: ``answered`` calls returned a
    value, ``declined`` calls returned ``None`` (the caller then ran the reference). Every
    other attribute is the twin's own, uncounted."""

    def __init__(self, twin: Any, step: str) -> None:
        self.answered = 0
        self.declined = 0
        self._twin = twin
        self._step = step

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._twin, name)
        if name != self._step:
            return found

        def counted(*args: Any) -> Any:
            answer = found(*args)
            if answer is None:
                self.declined += 1
            else:
                self.answered += 1
            return answer

        return counted


def count_twin_step(monkeypatch: pytest.MonkeyPatch, step: str) -> CountingTwin:
    """The engine uses the twin in use with ``step`` counted (:class:`CountingTwin`), even
    under ``KAFKA_STICKY_PURE_PYTHON=1``, until the test ends."""
    counting = CountingTwin(engine_twin_in_use(), step)
    monkeypatch.setattr(implementation, "twin", counting)
    return counting


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
    partitions: Mapping[str, int],
    members: list[MemberSpec],
    max_rounds: int = 10,
    engine: PlanFn = cooperative_assign,
) -> tuple[Plan, int]:
    """Run cooperative rounds of ``engine``, feeding each back as owned, until nothing is
    withheld.

    Returns the converged plan and the number of rounds it took (the last round withholds
    nothing). Every round is checked against the cooperative contract.
    """
    subs = {m.member_id: m.topics for m in members}
    current = members
    generation = max((m.generation for m in members), default=-1)
    for rnd in range(1, max_rounds + 1):
        plan = engine(partitions, current)
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


def kept_claims(partitions: Mapping[str, int], members: list[MemberSpec], plan: Plan) -> int:
    """Partitions the plan leaves with their validated owner (the engine's claims policy)."""
    layout = build_layout(partitions, members)
    owner = resolve_claims(layout).owner
    index = {mid: i for i, mid in enumerate(layout.member_ids)}
    return sum(
        1
        for mid, tps in plan.items()
        for t, p in tps
        if owner[layout.offsets[layout.topic_index[t]] + p] == index[mid]
    )


def improving_cycle(
    partitions: Mapping[str, int], members: list[MemberSpec], plan: Plan
) -> list[str] | None:
    """An optimality certificate, independent of the engine's flow: ``None`` when ``plan``
    minimises ``W * sum(l * (l - 1) / 2) + lost claims`` over every complete plan (so it is
    load-optimal and keeps the most valid claims among load-optimal plans), else a negative
    cycle (node names) of the residual network.

    The network is per (topic, valid owner) class, not per subscriber set; a member's load
    arc costs ``W * l`` to add a partition and ``-W * (l - 1)`` to remove one (the convex
    marginals); Bellman-Ford finds a negative cycle when there is one. For an integral
    convex-cost flow, no negative residual cycle is equivalent to optimality.
    """
    layout = build_layout(partitions, members)
    claims = resolve_claims(layout)
    index = {mid: i for i, mid in enumerate(layout.member_ids)}
    n_members = len(layout.member_ids)
    held: dict[tuple[int, int], dict[int, int]] = {}
    load = [0] * n_members
    for mid, tps in plan.items():
        m = index[mid]
        for t, p in tps:
            ti = layout.topic_index[t]
            o = claims.owner[layout.offsets[ti] + p]
            key = (ti, o if o >= 0 else -1)
            row = held.setdefault(key, {})
            row[m] = row.get(m, 0) + 1
            load[m] += 1
    w = sum(len(qs) for qs in claims.owned) + 1
    keys = sorted(held)
    sink = n_members
    node_names = [*layout.member_ids, "LOAD"] + [f"{layout.topics[t]}@{o}" for t, o in keys]
    arcs: list[tuple[int, int, int]] = []
    for i, (ti, o) in enumerate(keys):
        c = n_members + 1 + i
        for m in range(n_members):
            if ti not in layout.subscriptions[m]:
                continue
            cost = 0 if m == o else 1
            arcs.append((c, m, cost))
            if held[(ti, o)].get(m, 0) > 0:
                arcs.append((m, c, -cost))
    for m in range(n_members):
        if layout.subscriptions[m]:
            arcs.append((m, sink, w * load[m]))
            if load[m] > 0:
                arcs.append((sink, m, -w * (load[m] - 1)))
    n = len(node_names)
    dist = [0] * n
    pred = [-1] * n
    last = -1
    for _ in range(n):
        last = -1
        for u, v, c in arcs:
            if dist[u] + c < dist[v]:
                dist[v] = dist[u] + c
                pred[v] = u
                last = v
        if last < 0:
            return None
    for _ in range(n):
        last = pred[last]
    cycle = [last]
    node = pred[last]
    while node != last:
        cycle.append(node)
        node = pred[node]
    return [node_names[x] for x in reversed(cycle)]
