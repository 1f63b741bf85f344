"""The min-cost flow solver (:class:`kafka_sticky_plugin.core.flow.FlowNetwork`) against an
independent reference, on seeded random networks (the seed is printed).

- the reference is a plain successive-shortest-path solver written here (Bellman-Ford over the
  residual network, one unit of flow at a time): the solver must push the same amount at the
  same total cost, and its final flow must leave no negative residual cycle;
- networks are small, dense in equal costs (ties are where the solver's shortcuts could go
  wrong), with parallel and opposite arcs, unreachable parts and dead ends, and sometimes a
  nonzero initial flow of minimum cost for its value;
- ``add_arcs`` builds exactly what the same ``add_arc`` calls build;
- the flow itself is the one of ``tests/flow_reference.py`` (the solver before its shortcuts),
  arc by arc, whichever way the breadth-first layers are found.

These tests check the Python solver itself, so the compiled twin is switched off here
(``tests/test_engine_twin.py`` checks the twin against it).
"""

from __future__ import annotations

import random

import flow_reference
import pytest

from kafka_sticky_plugin.core import flow, implementation
from kafka_sticky_plugin.core.flow import FlowNetwork
from kafka_sticky_plugin.errors import InvariantViolation

Arc = tuple[int, int, int, int]  # tail, head, capacity, cost


@pytest.fixture(autouse=True)
def _reference_solver(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Python solver runs even where the compiled twin is installed."""
    monkeypatch.setattr(implementation, "twin", None)


def _random_arcs(rnd: random.Random, n: int) -> list[Arc]:
    arcs = []
    for _ in range(rnd.randint(0, 6 * n)):
        u, v = rnd.randrange(n), rnd.randrange(n)
        if u != v:
            arcs.append((u, v, rnd.randint(0, 4), rnd.choice([0, 0, 0, 1, 1, 2, 7])))
    return arcs


def _reference(n: int, arcs: list[Arc], source: int, sink: int) -> tuple[int, int]:
    """(amount, cost) of a maximum flow of minimum cost, one unit per Bellman-Ford path."""
    head: list[int] = []
    cap: list[int] = []
    cost: list[int] = []
    out: list[list[int]] = [[] for _ in range(n)]
    for u, v, c, w in arcs:
        out[u].append(len(head))
        head += (v, u)
        cap += (c, 0)
        cost += (w, -w)
        out[v].append(len(head) - 1)
    amount = total = 0
    while True:
        dist: list[int | None] = [None] * n
        via = [-1] * n
        dist[source] = 0
        for _ in range(n):
            changed = False
            for u in range(n):
                du = dist[u]
                if du is None:
                    continue
                for a in out[u]:
                    dv = dist[head[a]]
                    if cap[a] > 0 and (dv is None or du + cost[a] < dv):
                        dist[head[a]] = du + cost[a]
                        via[head[a]] = a
                        changed = True
            if not changed:
                break
        reach = dist[sink]
        if reach is None:
            return amount, total
        v = sink
        while v != source:
            a = via[v]
            cap[a] -= 1
            cap[a ^ 1] += 1
            v = head[a ^ 1]
        amount += 1
        total += reach


def _has_negative_cycle(net: FlowNetwork) -> bool:
    dist = [0] * net.n
    for _ in range(net.n + 1):
        changed = False
        for u in range(net.n):
            for a in net.adj[u]:
                if net.cap[a] > 0 and dist[u] + net.cost[a] < dist[net.head[a]]:
                    dist[net.head[a]] = dist[u] + net.cost[a]
                    changed = True
        if not changed:
            return False
    return True


def test_random_networks_match_the_reference() -> None:
    seed = random.randrange(2**32)
    print(f"seed {seed}")
    rnd = random.Random(seed)
    for _ in range(1500):
        n = rnd.randint(2, 12)
        arcs = _random_arcs(rnd, n)
        net = FlowNetwork(n)
        ids = [net.add_arc(*arc) for arc in arcs]
        pushed = net.push_min_cost(0, 1)
        amount, total = _reference(n, arcs, 0, 1)
        cost = sum(net.flow(a) * arc[3] for a, arc in zip(ids, arcs, strict=True))
        assert (pushed, cost) == (amount, total), (seed, n, arcs)
        assert not _has_negative_cycle(net), (seed, n, arcs)


def test_warm_started_networks_match_the_reference() -> None:
    """An initial flow with no negative residual arc (some flow on cost-0 arcs only, as in the
    stickiness flow's warm start): the solver completes it to the reference's optimum."""
    seed = random.randrange(2**32)
    print(f"seed {seed}")
    rnd = random.Random(seed)
    checked = 0
    while checked < 300:
        n = rnd.randint(3, 10)
        arcs = _random_arcs(rnd, n)
        amount, total = _reference(n, arcs, 0, 1)
        if amount < 2:
            continue
        # Up to `part` units over cost-0 arcs only (the others get no capacity in the copy),
        # pushed with the solver itself on a copy whose sink is capped, then carried over.
        part = rnd.randint(1, amount - 1)
        capped = FlowNetwork(n + 1)
        cap_ids = [capped.add_arc(u, v, c if w == 0 else 0, w) for u, v, c, w in arcs]
        capped.add_arc(1, n, part, 0)
        part = capped.push_min_cost(0, n)
        net = FlowNetwork(n)
        ids = [
            net.add_arc(u, v, c, w, capped.flow(a))
            for (u, v, c, w), a in zip(arcs, cap_ids, strict=True)
        ]
        pushed = net.push_min_cost(0, 1)
        cost = sum(net.flow(a) * arc[3] for a, arc in zip(ids, arcs, strict=True))
        assert (part + pushed, cost) == (amount, total), (seed, n, arcs, part)
        checked += 1


def test_add_arcs_is_add_arc_repeated() -> None:
    rnd = random.Random(7)
    arcs = _random_arcs(rnd, 9)
    flows = [rnd.randint(0, c) for _, _, c, _ in arcs]
    one, bulk = FlowNetwork(9), FlowNetwork(9)
    one.add_arc(0, 1, 3, 2)
    bulk.add_arc(0, 1, 3, 2)
    ids = [one.add_arc(u, v, c, w, f) for (u, v, c, w), f in zip(arcs, flows, strict=True)]
    first = bulk.add_arcs(
        [a[0] for a in arcs],
        [a[1] for a in arcs],
        [a[2] for a in arcs],
        [a[3] for a in arcs],
        flows,
    )
    assert ids == list(range(first, first + 2 * len(arcs), 2))
    assert bulk.flows(first, len(arcs)) == flows
    assert (one.adj, one.head, one.cap, one.cost) == (bulk.adj, bulk.head, bulk.cap, bulk.cost)
    with pytest.raises(InvariantViolation):
        bulk.add_arcs([0], [1], [1], [0], [2])
    with pytest.raises(InvariantViolation):
        bulk.add_arcs([0], [1], [1], [0], [-1])
    with pytest.raises(InvariantViolation):
        bulk.add_arcs([0], [1, 2], [1], [0])


@pytest.mark.parametrize("seed", range(40))
def test_add_arcs_of_any_batch_is_add_arc_repeated(seed: int) -> None:
    """Batches whose tails and heads are apart (by range, or interleaved node numbers), batches
    that are not (ranges that touch, anything) and empty ones: the same network as one
    ``add_arc`` per arc."""
    print(f"seed={seed}")
    rnd = random.Random(seed)
    n = 12
    one, bulk = FlowNetwork(n), FlowNetwork(n)
    for _ in range(rnd.randint(1, 6)):
        nodes = list(range(n))
        rnd.shuffle(nodes)
        cut = rnd.randint(1, n - 1)
        kind = rnd.random()
        if kind < 0.4:  # apart by range
            left, right = [v for v in range(n) if v < cut], [v for v in range(n) if v >= cut]
            lo, hi = (left, right) if rnd.random() < 0.5 else (right, left)
        elif kind < 0.8:  # apart, interleaved
            lo, hi = nodes[:cut], nodes[cut:]
        elif kind < 0.9:  # ranges that share one node
            lo, hi = list(range(cut + 1)), list(range(cut, n))
        else:  # anything
            lo, hi = nodes, nodes
        k = rnd.randint(0, 15)
        tails = [rnd.choice(lo) for _ in range(k)]
        heads = [rnd.choice(hi) for _ in range(k)]
        caps = [rnd.randint(0, 5) for _ in range(k)]
        costs = [rnd.randint(-3, 3) for _ in range(k)]
        flows = [rnd.randint(0, c) for c in caps] if rnd.random() < 0.5 else None
        ids = [
            one.add_arc(u, v, c, w, f)
            for u, v, c, w, f in zip(tails, heads, caps, costs, flows or [0] * k, strict=True)
        ]
        first = bulk.add_arcs(tails, heads, caps, costs, flows)
        assert ids == list(range(first, first + 2 * k, 2))
    assert (one.adj, one.head, one.cap, one.cost) == (bulk.adj, bulk.head, bulk.cap, bulk.cost)


def test_negative_residual_arc_is_rejected() -> None:
    net = FlowNetwork(3)
    net.add_arc(0, 2, 1, 5, 1)  # the full arc's reverse has cost -5 and capacity 1
    net.add_arc(2, 1, 1, 0)
    with pytest.raises(InvariantViolation):
        net.push_min_cost(0, 1)


@pytest.mark.parametrize("bottom_up", [0, 10**9])
def test_flows_match_the_reference_solver_bit_for_bit(
    bottom_up: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Same residual capacities on every arc as the reference solver, with every breadth-first
    layer found top-down (``_BOTTOM_UP = 0``) or bottom-up (``_BOTTOM_UP = 10**9``)."""
    seed = random.randrange(2**32)
    print(f"seed {seed} bottom_up {bottom_up}")
    rnd = random.Random(seed)
    monkeypatch.setattr(flow, "_BOTTOM_UP", bottom_up)
    for _ in range(1500):
        n = rnd.randint(2, 14)
        arcs = _random_arcs(rnd, n)
        net, ref = FlowNetwork(n), flow_reference.FlowNetwork(n)
        for arc in arcs:
            net.add_arc(*arc)
            ref.add_arc(*arc)
        assert net.push_min_cost(0, 1) == ref.push_min_cost(0, 1), (seed, n, arcs)
        assert net.cap == ref.cap, (seed, n, arcs)
