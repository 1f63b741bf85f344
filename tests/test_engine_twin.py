"""The compiled twin's engine steps against the reference (:mod:`.core.implementation`).

``push_min_cost``: the twin's push must leave the same residual capacity on every arc and
report the same amount as the Python solver (:meth:`FlowNetwork.push_min_cost` with the twin
switched off), and as ``tests/flow_reference.py`` (the solver before its shortcuts), checked

- on seeded random networks: dense in equal costs (ties decide which path is found first),
  with parallel, opposite and zero-capacity arcs, dead ends, an unreachable sink, costs near
  ``i64``'s range, and initial flows of minimum cost (flow found first on the cost-0 arcs,
  negative-cost arcs saturated); the twin must answer (not defer) on every one of them, and
  defer exactly where the reference raises (a negative-cost residual arc);
- through the whole engine: seeded heterogeneous groups with owned partitions, with and
  without replica racks (the stickiness flow and the rack pass), give the same plan with the
  twin as with ``implementation.twin = None``;
- on benchmark shapes' rejoins (HET-1M, NESTED-100k-r3f1 with racks): the plan's hash.

Seeded: ``ENGINE_TWIN_SEED=<n>`` replays a run; the seed is printed. Runs only where the twin
is installed (``make twin``): skipped with one line otherwise, a failure under ``CI=true``.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import random
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import flow_reference
import pytest
from test_engine_racks import random_group

from kafka_sticky_plugin.core import MemberSpec, implementation, sticky_assign
from kafka_sticky_plugin.core.flow import FlowNetwork
from kafka_sticky_plugin.errors import InvariantViolation
from kafka_sticky_plugin.twin_loader import TWIN_MODULE

SEED = int(os.environ.get("ENGINE_TWIN_SEED", random.randrange(2**32)))

Arc = tuple[int, int, int, int, int]  # tail, head, capacity, cost, initial flow


def _twin_module() -> Any:
    try:
        twin = importlib.import_module(TWIN_MODULE)
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true: the compiled twin must be installed (make twin)")
        pytest.skip(
            "engine twin tests skipped: kafka-sticky-plugin-twin is not installed (make twin)",
            allow_module_level=True,
        )
    version = getattr(twin, "ENGINE_VERSION", None)
    if version != implementation.ENGINE_VERSION:
        pytest.fail(
            f"the installed twin implements ENGINE_VERSION {version}, "
            f"this package {implementation.ENGINE_VERSION}: rebuild it (make twin)"
        )
    return twin


TWIN: Any = _twin_module()


class _Counting:
    """The twin, counting the pushes it answered and the ones it deferred; a component the
    twin plans (``plan_component``: the builder and the keep flow, which pushes its flow
    inside the twin) counts as a push."""

    def __init__(self) -> None:
        self.answered = 0
        self.deferred = 0
        self.ENGINE_VERSION = TWIN.ENGINE_VERSION
        self.__version__ = TWIN.__version__

    def __getattr__(self, name: str) -> Any:
        """The twin's other steps, uncounted."""
        return getattr(TWIN, name)

    def push_min_cost(self, *args: Any) -> Any:
        return self._count(TWIN.push_min_cost(*args))

    def plan_component(self, *args: Any) -> Any:
        return self._count(TWIN.plan_component(*args))

    def _count(self, done: Any) -> Any:
        if done is None:
            self.deferred += 1
        else:
            self.answered += 1
        return done


@pytest.fixture
def counting(monkeypatch: pytest.MonkeyPatch) -> Iterator[_Counting]:
    """The engine uses the (counting) twin, even under ``KAFKA_STICKY_PURE_PYTHON=1``."""
    twin = _Counting()
    monkeypatch.setattr(implementation, "twin", twin)
    yield twin


def _rng(name: str) -> random.Random:
    print(f"{name}: ENGINE_TWIN_SEED={SEED}")
    return random.Random(f"{SEED}/{name}")


# --- random networks ---------------------------------------------------------------------


def _random_network(rnd: random.Random) -> tuple[int, list[Arc]]:
    """Nodes 0 (source) and 1 (sink) and up to 40 more; arcs with few distinct costs (many
    ties), parallel and opposite arcs, capacity 0 sometimes; the sink sometimes without
    entering arcs; sometimes huge costs. Initial flows: the cost-0 arcs carry a maximum flow
    of the cost-0 network (found by the reference), a few more carry arbitrary flow, and
    negative-cost arcs are saturated, so no residual arc costs less than 0."""
    n = rnd.randint(2, rnd.choice([6, 14, 42]))
    costs = rnd.choice([[0, 0, 1, 2], [0, 1, 1, 3, 7], [0, -2, 1, 5], [0, 2**61, 3 * 2**60]])
    arcs: list[Arc] = []
    isolated_sink = rnd.random() < 0.1
    for _ in range(rnd.randint(0, 7 * n)):
        u, v = rnd.randrange(n), rnd.randrange(n)
        if u == v or (isolated_sink and v == 1):
            continue
        cap = rnd.choice([0, 1, 1, 2, 3, 9])
        arcs.append((u, v, cap, rnd.choice(costs), 0))
        if rnd.random() < 0.1:  # a parallel arc
            arcs.append((u, v, rnd.randint(0, 3), rnd.choice(costs), 0))
    if rnd.random() < 0.5:
        zero = FlowNetwork(n)
        ids = [zero.add_arc(u, v, c if w == 0 else 0, 0) for u, v, c, w, _ in arcs]
        implementation_twin, implementation.twin = implementation.twin, None
        try:
            zero.push_min_cost(0, 1)
        finally:
            implementation.twin = implementation_twin
        arcs = [(u, v, c, w, zero.flow(a)) for a, (u, v, c, w, _) in zip(ids, arcs, strict=True)]
    warm: list[Arc] = []
    for u, v, c, w, f in arcs:
        if w < 0:
            f = c
        elif w == 0 and c and rnd.random() < 0.1:
            f = rnd.randint(0, c)
        warm.append((u, v, c, w, f))
    return n, warm


def _solve(n: int, arcs: list[Arc], twin: Any) -> tuple[int, list[int]]:
    saved = implementation.twin
    implementation.twin = twin
    try:
        net = FlowNetwork(n)
        for arc in arcs:
            net.add_arc(*arc)
        return net.push_min_cost(0, 1), net.cap
    finally:
        implementation.twin = saved


def test_random_networks_flow_the_same(counting: _Counting) -> None:
    """Same amount and same residual capacity on every arc as the Python solver and the
    pre-shortcut reference; the twin answers every one of these networks."""
    rnd = _rng("networks")
    pushed_some = 0
    for _ in range(3000):
        n, arcs = _random_network(rnd)
        compiled = _solve(n, arcs, counting)
        reference = _solve(n, arcs, None)
        assert compiled == reference, (SEED, n, arcs)
        plain = flow_reference.FlowNetwork(n)
        for arc in arcs:
            plain.add_arc(*arc)
        assert (plain.push_min_cost(0, 1), plain.cap) == compiled, (SEED, n, arcs)
        pushed_some += compiled[0] > 0
    assert counting.deferred == 0 and counting.answered == 3000
    assert pushed_some > 1000


def test_the_twin_defers_where_the_reference_raises(counting: _Counting) -> None:
    """A residual arc of negative cost: the twin answers ``None``, the reference raises."""
    net = FlowNetwork(3)
    net.add_arc(0, 2, 2, 1, flow=1)  # its reverse, residual, costs -1
    net.add_arc(2, 1, 2, 0)
    with pytest.raises(InvariantViolation, match="negative residual arc"):
        net.push_min_cost(0, 1)
    assert (counting.answered, counting.deferred) == (0, 1)


@pytest.mark.parametrize(
    ("n", "heads", "caps", "costs", "source", "sink"),
    [
        (2, [1, 0], [1, 0], [1, -1], 0, 0),  # source == sink
        (2, [1, 0], [1, 0], [1, -1], 0, 2),  # sink out of range
        (2, [1, 0, 1], [1, 0, 1], [1, -1, 1], 0, 1),  # odd arc count
        (2, [1, 0], [1, 0, 0], [1, -1], 0, 1),  # lengths differ
        (2, [1, 0], [-1, 1], [1, -1], 0, 1),  # negative capacity
        (2, [1, 0], [1, 0], [1, 1], 0, 1),  # costs not opposite
        (2, [1, 0], [1, 0], [2**63, -(2**63)], 0, 1),  # beyond i64
        (2, [1, 0], [2**63 - 1, 1], [1, -1], 0, 1),  # capacities summing beyond i64
        (2, [1, 0], [True, 0], [1, -1], 0, 1),  # a bool
        (2, (x for x in (1, 0)), [1, 0], [1, -1], 0, 1),  # not a list
    ],
)
def test_the_twin_defers_what_it_cannot_vouch_for(
    n: int, heads: Any, caps: Any, costs: Any, source: int, sink: int
) -> None:
    assert TWIN.push_min_cost(n, heads, caps, costs, source, sink) is None


# --- whole engine --------------------------------------------------------------------------


def _medium_group(rnd: random.Random) -> tuple[dict[str, int], list[MemberSpec], Any]:
    """5-12 topics, 12-40 members with different subscriptions, replicas on 0-2 of four racks
    (or no racks at all), ownership from a plan of an overlapping group."""
    parts = {f"t{i:02d}": rnd.randint(1, 30) for i in range(rnd.randint(5, 12))}
    names = sorted(parts)
    subs = {
        f"m{i:03d}": rnd.sample(names, rnd.randint(1, len(names)))
        for i in range(rnd.randint(12, 40))
    }
    racks = None
    if rnd.random() < 0.7:
        racks = {
            (t, p): rnd.sample(["r0", "r1", "r2", "r3"], rnd.randint(0, 2))
            for t, c in parts.items()
            for p in range(c)
        }
    rack_of = {m: rnd.choice([None, "r0", "r1", "r2"]) for m in subs}
    before = [
        MemberSpec(member_id=m, topics=ts, rack=rack_of[m])
        for m, ts in subs.items()
        if rnd.random() < 0.85
    ]
    previous = sticky_assign(parts, before, partition_racks=racks)
    members = [
        MemberSpec(
            member_id=m,
            topics=ts,
            rack=rack_of[m],
            owned=previous.get(m, []),
            generation=rnd.choice([1, 1, 1, 0, 2]),
        )
        for m, ts in subs.items()
    ]
    return parts, members, racks


def test_engine_plans_equal_with_and_without_the_twin(
    counting: _Counting, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seeded racked and unracked groups with owned partitions: the same plan both ways, the
    twin answering every push it is asked."""
    rnd = _rng("groups")
    for i in range(160):
        if i % 2:
            parts, members, racks = random_group(rnd)
        else:
            parts, members, racks = _medium_group(rnd)
        monkeypatch.setattr(implementation, "twin", counting)
        compiled = sticky_assign(parts, members, partition_racks=racks)
        monkeypatch.setattr(implementation, "twin", None)
        reference = sticky_assign(parts, members, partition_racks=racks)
        assert compiled == reference, (SEED, i)
    print(f"pushes answered by the twin: {counting.answered}")
    assert counting.deferred == 0 and counting.answered > 100


# --- benchmark shapes ----------------------------------------------------------------------

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))


def _plan_hash(plan: dict[str, list[tuple[str, int]]]) -> str:
    digest = hashlib.sha256()
    for member_id in sorted(plan):
        digest.update(f"{member_id}:{plan[member_id]};".encode())
    return digest.hexdigest()


@pytest.mark.parametrize(
    "shape_name",
    # HET-1M: a million owned pairs, about 8 s on 2 cores
    ["NESTED-100k-r3f1", pytest.param("HET-1M", marks=pytest.mark.slow)],
)
def test_benchmark_rejoins_plan_the_same(
    shape_name: str, counting: _Counting, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A benchmark shape's fresh plan (racks where the shape has them) and its ``rejoin``
    (everyone owns it at generation 1, a newcomer joins): the same plans with the twin and
    without it."""
    import shapes

    shape = shapes.SHAPES[shape_name]
    subs = shape.subscriptions()
    racks = shape.member_racks(subs)
    replicas = shape.partition_racks()
    hashes = []
    for twin in (counting, None):
        monkeypatch.setattr(implementation, "twin", twin)
        fresh = sticky_assign(
            shape.partitions, shapes.members(subs, racks=racks), partition_racks=replicas
        )
        rejoin = shapes.phase_inputs(subs, fresh, "rejoin", racks)
        plan = sticky_assign(shape.partitions, rejoin, partition_racks=replicas)
        hashes.append((_plan_hash(fresh), _plan_hash(plan)))
    print(f"{shape_name}: fresh, rejoin plan sha256 {hashes[0]}; twin pushes {counting.answered}")
    assert hashes[0] == hashes[1]
    assert counting.answered >= 1 and counting.deferred == 0
