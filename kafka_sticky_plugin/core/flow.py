"""A small exact min-cost flow solver that starts from a given flow (used by the rack pass
and by the stickiness flow of :mod:`.keep_flow`).

The network is built arc by arc, each with a capacity, an integer cost and an initial flow.
:meth:`FlowNetwork.push_min_cost` then sends as much additional flow as possible from a source
to a sink, always along cheapest paths (successive shortest paths, in phases):

- one Dijkstra over reduced costs (Johnson potentials) gives the current shortest distance;
- a Dinic max flow over the *admissible* arcs (reduced cost zero) pushes everything that
  travels at that distance, in bulk;
- repeat until the sink is unreachable.

Each step is the plain one, with one speed-only choice inside it that does not change the
result (the paths found, hence the flow, are those of plain scans over all arcs in arc order):
a breadth-first layer is found from whichever side has fewer arcs (the frontier's arcs, or
each unlabelled node's arcs from the frontier) and the search stops at the sink's layer; the
nodes at reduced distance 0 are the ones the last breadth-first search reached, so Dijkstra
only settles the others (started from whichever side has fewer arcs) and stops at the sink
(distances beyond it do not change the potentials); the blocking flow follows only arcs into
nodes that can still reach the sink, listed once per phase from the side with fewer arcs.
(Without these choices the push takes about 7x longer on HET-1M's stickiness flow, 2x the
whole engine step.) The compiled twin (:mod:`.implementation`, ``twin/src/min_cost_flow.rs``)
runs the plain steps and gives the same flow on every arc.

Invariants:

- arc ``a`` and its reverse are ``a`` and ``a ^ 1``; ``cap[a]`` is the residual capacity, so
  the flow on a forward arc is ``cap[a ^ 1]``;
- the initial flow must be a cheapest flow for its own value: no residual arc (positive residual
  capacity) may have a negative cost. With that, zero potentials are valid and every phase keeps
  them valid (reduced costs of residual arcs stay >= 0), so the final flow is a cheapest flow
  of the largest value reachable from the initial one (the classic successive shortest path
  argument);
- everything is integral, and the result is a function of the arcs in the order they were
  added (no hashing, no set order). More precisely, of each node's arcs in order: arc ids
  are only ever compared between arcs of one node (whose adjacency list is ascending), so
  adding the same arcs in another order that keeps every node's arcs in their order gives
  the same flow on every arc.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from itertools import compress
from operator import neg, sub

# The module, not its ``twin`` (read at each push, so tests can switch it); imported by its
# full name, since ``from . import`` would make this module import the package ``core``.
import kafka_sticky_plugin.core.implementation as implementation

from ..errors import InvariantViolation

__all__ = ["FlowNetwork"]

# Bottom-up breadth-first layers once the frontier has more than 1/_BOTTOM_UP of the
# unlabelled nodes' arcs (bottom-up stops at a node's first admissible arc from the frontier).
_BOTTOM_UP = 4

_UNSET = -1  # the level (and Dijkstra distance) of a node not reached yet


class FlowNetwork:
    """A directed network on nodes ``0 .. n - 1`` with integral capacities, costs and flows."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.adj: list[list[int]] = [[] for _ in range(n)]
        self.head: list[int] = []  # head[a]: the node arc a enters
        self.cap: list[int] = []  # residual capacity
        self.cost: list[int] = []

    def add_arc(self, u: int, v: int, capacity: int, cost: int, flow: int = 0) -> int:
        """Add ``u -> v`` carrying ``flow`` (``0 <= flow <= capacity``); returns its arc id."""
        if not 0 <= flow <= capacity:
            raise InvariantViolation("flow must lie within [0, capacity]")
        a = len(self.head)
        self.head += (v, u)
        self.cap += (capacity - flow, flow)
        self.cost += (cost, -cost)
        self.adj[u].append(a)
        self.adj[v].append(a + 1)
        return a

    def add_arcs(
        self,
        tails: list[int],
        heads: list[int],
        capacities: list[int],
        costs: list[int],
        flows: list[int] | None = None,
    ) -> int:
        """Add arcs ``tails[i] -> heads[i]`` in order, exactly as that many :meth:`add_arc`
        calls would (same ids, same adjacency order); returns the first id (arc ``i`` is
        ``first + 2 * i``). ``flows`` defaults to zeros."""
        k = len(tails)
        if not len(heads) == len(capacities) == len(costs) == k:
            raise InvariantViolation("arc lists differ in length")
        if flows is None:
            flows = [0] * k
            residual = capacities
            negative_flow = False
        elif len(flows) != k:
            raise InvariantViolation("arc lists differ in length")
        else:
            residual = list(map(sub, capacities, flows))
            negative_flow = bool(k) and min(flows) < 0
        if negative_flow or (k and min(residual) < 0):
            raise InvariantViolation("flow must lie within [0, capacity]")
        first = len(self.head)
        pairs: list[int] = [0] * (2 * k)
        pairs[0::2] = heads
        pairs[1::2] = tails
        self.head += pairs
        pairs[0::2] = residual
        pairs[1::2] = flows
        self.cap += pairs
        pairs[0::2] = costs
        pairs[1::2] = map(neg, costs)
        self.cost += pairs
        adj = self.adj
        for a, u, v in zip(range(first, first + 2 * k, 2), tails, heads, strict=True):
            adj[u].append(a)
            adj[v].append(a + 1)
        return first

    def flow(self, a: int) -> int:
        """Flow currently on forward arc ``a``."""
        return self.cap[a ^ 1]

    def flows(self, first: int, count: int) -> list[int]:
        """Flows on the ``count`` forward arcs ``first, first + 2, ...`` (as added by one
        :meth:`add_arcs` call)."""
        return self.cap[first + 1 : first + 1 + 2 * count : 2]

    def push_min_cost(self, source: int, sink: int) -> int:
        """Push the maximum additional flow from ``source`` to ``sink`` at minimum cost; return
        the amount pushed. Raises ``InvariantViolation`` when the initial flow is not a cheapest one
        (a residual arc with negative cost).

        When the compiled twin is in use (:mod:`.implementation`) it computes the push, and
        its residual capacities replace :attr:`cap`'s contents; where it answers ``None`` the
        code below (the reference) runs."""
        twin = implementation.twin
        if twin is not None:
            done = twin.push_min_cost(self.n, self.head, self.cap, self.cost, source, sink)
            if done is not None:
                self.cap[:], pushed = done
                return pushed
        cap, cost = self.cap, self.cost
        if min(compress(cost, cap), default=0) < 0:  # capacities are never negative
            raise InvariantViolation("initial flow is not of minimum cost (negative residual arc)")
        potential = [0] * self.n
        deg = list(map(len, self.adj))  # the arcs never change during the push
        pushed = 0
        while True:
            level, layers = self._levels(source, sink, potential, deg)
            if level[sink] < 0:
                # Nothing admissible reaches the sink: ``level`` marks exactly the nodes at
                # reduced distance 0; raise the potentials by the next shortest distance.
                if not self._raise_potentials(level, sink, potential, deg):
                    return pushed
            else:
                pushed += self._blocking_flow(source, sink, level, layers, potential, deg)

    def _raise_potentials(
        self, zero: list[int], sink: int, potential: list[int], deg: list[int]
    ) -> bool:
        """Dijkstra over reduced costs (all >= 0) for the nodes outside ``zero`` (the nodes
        with ``zero[v] >= 0`` are at distance 0); then ``potential[v] += min(dist[v], reach)``
        with ``reach = dist[sink]`` (unreachable nodes count as ``reach``). Returns False, with
        the potentials untouched, when the sink is unreachable.

        Only the distances below ``reach`` matter, so the search stops when the sink is
        settled. Its start is pulled (each remaining node looks at its own arcs from the zero
        set) or pushed (each zero node looks at its arcs), whichever has fewer arcs to scan:
        the distances, hence the potentials, are the same either way."""
        adj, head, cap, cost = self.adj, self.head, self.cap, self.cost
        n = self.n
        rest = list(compress(range(n), map(_UNSET.__eq__, zero)))
        settled = list(map(_UNSET.__ne__, zero))
        dist = [-1] * n
        heap: list[tuple[int, int]] = []
        rest_arcs = sum(map(deg.__getitem__, rest))
        if rest_arcs <= len(head) - rest_arcs:
            for v in rest:
                pv = potential[v]
                best = -1
                for b in adj[v]:
                    u = head[b]
                    if settled[u] and cap[b ^ 1] > 0:
                        d = cost[b ^ 1] + potential[u] - pv
                        if best < 0 or d < best:
                            best = d
                if best >= 0:
                    dist[v] = best
                    heap.append((best, v))
            heapq.heapify(heap)
        else:
            for u in range(n):
                if not settled[u]:
                    continue
                pu = potential[u]
                for a in adj[u]:
                    v = head[a]
                    if settled[v] or cap[a] <= 0:
                        continue
                    d = cost[a] + pu - potential[v]
                    if dist[v] < 0 or d < dist[v]:
                        dist[v] = d
                        heapq.heappush(heap, (d, v))
        reach = -1
        done: list[int] = []
        while heap:
            d, u = heapq.heappop(heap)
            if settled[u]:
                continue
            if u == sink:
                reach = d
                break
            settled[u] = True
            done.append(u)
            base = d + potential[u]
            for a in adj[u]:
                if cap[a] <= 0:
                    continue
                v = head[a]
                if settled[v]:
                    continue
                nd = base + cost[a] - potential[v]
                if dist[v] < 0 or nd < dist[v]:
                    dist[v] = nd
                    heapq.heappush(heap, (nd, v))
        if reach < 0:
            return False
        for v in rest:
            potential[v] += reach
        for u in done:
            potential[u] += dist[u] - reach
        return True

    def _levels(
        self, source: int, sink: int, potential: list[int], deg: list[int]
    ) -> tuple[list[int], list[list[int]]]:
        """Breadth-first levels over admissible arcs (residual, reduced cost zero), -1 when
        unreachable, and the nodes of each level. Stops once the sink's layer is labelled
        (deeper nodes stay -1: no blocking-flow path uses them); when the sink is unreachable
        every reachable node is labelled. Each layer is found top-down (the frontier's arcs)
        or, once the frontier has many arcs, bottom-up (each unlabelled node looks for an
        admissible arc from the frontier and stops at the first): the levels are the same
        either way."""
        adj, head, cap, cost = self.adj, self.head, self.cap, self.cost
        level = [_UNSET] * self.n
        level[source] = 0
        frontier = [source]
        layers = [frontier]
        unlabelled: Sequence[int] = range(self.n)  # a superset of the unlabelled nodes, ascending
        unlabelled_arcs = len(head) - deg[source]  # every arc slot is in one adjacency list
        depth = 0
        while frontier and level[sink] < 0:
            depth += 1
            nxt: list[int] = []
            if sum(map(deg.__getitem__, frontier)) * _BOTTOM_UP <= unlabelled_arcs:
                for u in frontier:
                    pu = potential[u]
                    for a in adj[u]:
                        v = head[a]
                        if level[v] < 0 and cap[a] > 0 and cost[a] + pu == potential[v]:
                            level[v] = depth
                            nxt.append(v)
            else:
                parent = depth - 1
                unlabelled = list(
                    compress(unlabelled, map(_UNSET.__eq__, map(level.__getitem__, unlabelled)))
                )
                for v in unlabelled:
                    pv = potential[v]
                    for b in adj[v]:
                        u = head[b]
                        if (
                            level[u] == parent
                            and cap[b ^ 1] > 0
                            and cost[b ^ 1] + potential[u] == pv
                        ):
                            level[v] = depth
                            nxt.append(v)
                            break
            if nxt:
                unlabelled_arcs -= sum(map(deg.__getitem__, nxt))
                layers.append(nxt)
            frontier = nxt
        return level, layers

    def _candidates(
        self,
        sink: int,
        level: list[int],
        layers: list[list[int]],
        potential: list[int],
        deg: list[int],
    ) -> dict[int, list[int]]:
        """For every node that can reach the sink in the level graph, its admissible arcs one
        level up into such nodes, in arc order (= adjacency order: arc ids grow as arcs are
        added); other nodes are absent. Found layer by layer from the sink, each layer
        from whichever side has fewer arcs to scan."""
        adj, head, cap, cost = self.adj, self.head, self.cap, self.cost
        cands: dict[int, list[int]] = {}
        useful = [False] * self.n
        useful[sink] = True
        upper = [sink]
        for k in range(level[sink] - 1, -1, -1):
            lower: list[int] = []
            if sum(map(deg.__getitem__, upper)) <= sum(map(deg.__getitem__, layers[k])):
                for v in upper:
                    pv = potential[v]
                    for b in adj[v]:
                        u = head[b]
                        if level[u] == k and cap[b ^ 1] > 0 and cost[b ^ 1] + potential[u] == pv:
                            if not useful[u]:
                                useful[u] = True
                                lower.append(u)
                                cands[u] = [b ^ 1]
                            else:
                                cands[u].append(b ^ 1)
                for u in lower:
                    cands[u].sort()
            else:
                up = k + 1
                for u in layers[k]:
                    pu = potential[u]
                    found = [
                        a
                        for a in adj[u]
                        if useful[head[a]]
                        and level[head[a]] == up
                        and cap[a] > 0
                        and cost[a] + pu == potential[head[a]]
                    ]
                    if found:
                        useful[u] = True
                        lower.append(u)
                        cands[u] = found
            upper = lower
        return cands

    def _blocking_flow(
        self,
        source: int,
        sink: int,
        level: list[int],
        layers: list[list[int]],
        potential: list[int],
        deg: list[int],
    ) -> int:
        """Dinic's blocking flow on the level graph of admissible arcs (iterative, with
        current-arc pointers so that each dead arc is looked at once). The search only
        follows :meth:`_candidates` (arcs into nodes that can reach the sink, in arc order):
        leaving out arcs into dead ends and never adding an arc (a reverse arc goes one level
        down) does not change which paths are found, in which order."""
        head, cap = self.head, self.cap
        cands = self._candidates(sink, level, layers, potential, deg)
        no_arcs: list[int] = []
        pointer = [0] * self.n
        pushed = 0
        path: list[int] = []
        u = source
        while True:
            while u != sink:
                arcs = cands.get(u, no_arcs)
                i = pointer[u]
                end = len(arcs)
                while i < end and cap[arcs[i]] <= 0:
                    i += 1
                pointer[u] = i
                if i < end:
                    a = arcs[i]
                    path.append(a)
                    u = head[a]
                    continue
                if not path:
                    return pushed
                back = path.pop()
                u = head[back ^ 1]
                pointer[u] += 1
            amount = min(cap[a] for a in path)
            cut = -1
            for i, a in enumerate(path):
                cap[a] -= amount
                cap[a ^ 1] += amount
                if cut < 0 and cap[a] == 0:
                    cut = i
            pushed += amount
            # Resume at the tail of the first saturated arc (what a restart from the source
            # would re-walk to, since every earlier arc is still the current one).
            u = head[path[cut] ^ 1]
            del path[cut:]
