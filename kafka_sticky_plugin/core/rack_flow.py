"""A small exact min-cost flow solver that starts from a given flow (used by the rack pass).

The network is built arc by arc, each with a capacity, an integer cost and an initial flow.
:meth:`FlowNetwork.push_min_cost` then sends as much additional flow as possible from a source
to a sink, always along cheapest paths (successive shortest paths, in phases):

- one Dijkstra over reduced costs (Johnson potentials) gives the current shortest distance;
- a Dinic max flow over the *admissible* arcs (reduced cost zero) pushes everything that
  travels at that distance, in bulk;
- repeat until the sink is unreachable.

Invariants:

- arc ``a`` and its reverse are ``a`` and ``a ^ 1``; ``cap[a]`` is the residual capacity, so
  the flow on a forward arc is ``cap[a ^ 1]``;
- the initial flow must be a cheapest flow for its own value: no residual arc (positive residual
  capacity) may have a negative cost. With that, zero potentials are valid and every phase keeps
  them valid (reduced costs of residual arcs stay >= 0), so the final flow is a cheapest flow
  of the largest value reachable from the initial one (the classic successive shortest path
  argument);
- everything is integral, and the result is a function of the arcs in the order they were
  added (no hashing, no set order).
"""

from __future__ import annotations

import heapq
from collections import deque

from ..errors import InvariantViolation

__all__ = ["FlowNetwork"]


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

    def flow(self, a: int) -> int:
        """Flow currently on forward arc ``a``."""
        return self.cap[a ^ 1]

    def push_min_cost(self, source: int, sink: int) -> int:
        """Push the maximum additional flow from ``source`` to ``sink`` at minimum cost; return
        the amount pushed. Raises ``ValueError`` when the initial flow is not a cheapest one
        (a residual arc with negative cost)."""
        cap, cost = self.cap, self.cost
        if any(cap[a] > 0 and cost[a] < 0 for a in range(len(cap))):
            raise InvariantViolation("initial flow is not of minimum cost (negative residual arc)")
        potential = [0] * self.n
        pushed = 0
        while True:
            dist = self._dijkstra(source, potential)
            if dist[sink] < 0:
                return pushed
            reach = dist[sink]
            for v in range(self.n):
                d = dist[v]
                potential[v] += d if 0 <= d < reach else reach
            while True:
                level = self._levels(source, potential)
                if level[sink] < 0:
                    break
                pushed += self._blocking_flow(source, sink, level, potential)

    def _dijkstra(self, source: int, potential: list[int]) -> list[int]:
        """Shortest distances over reduced costs (all >= 0); ``-1`` for unreachable nodes."""
        adj, head, cap, cost = self.adj, self.head, self.cap, self.cost
        dist = [-1] * self.n
        done = [False] * self.n
        dist[source] = 0
        heap = [(0, source)]
        while heap:
            d, u = heapq.heappop(heap)
            if done[u]:
                continue
            done[u] = True
            base = d + potential[u]
            for a in adj[u]:
                if cap[a] <= 0:
                    continue
                v = head[a]
                if done[v]:
                    continue
                nd = base + cost[a] - potential[v]
                if dist[v] < 0 or nd < dist[v]:
                    dist[v] = nd
                    heapq.heappush(heap, (nd, v))
        return dist

    def _levels(self, source: int, potential: list[int]) -> list[int]:
        """Breadth-first levels over admissible arcs (residual, reduced cost zero); -1 when
        unreachable."""
        adj, head, cap, cost = self.adj, self.head, self.cap, self.cost
        level = [-1] * self.n
        level[source] = 0
        queue = deque([source])
        while queue:
            u = queue.popleft()
            pu = potential[u]
            nxt = level[u] + 1
            for a in adj[u]:
                v = head[a]
                if level[v] < 0 and cap[a] > 0 and cost[a] + pu == potential[v]:
                    level[v] = nxt
                    queue.append(v)
        return level

    def _blocking_flow(self, source: int, sink: int, level: list[int], potential: list[int]) -> int:
        """Dinic's blocking flow on the level graph of admissible arcs (iterative, with
        current-arc pointers so that each dead arc is looked at once)."""
        adj, head, cap, cost = self.adj, self.head, self.cap, self.cost
        pointer = [0] * self.n
        pushed = 0
        while True:
            path: list[int] = []
            u = source
            while u != sink:
                arcs = adj[u]
                i = pointer[u]
                want = level[u] + 1
                pu = potential[u]
                while i < len(arcs):
                    a = arcs[i]
                    v = head[a]
                    if cap[a] > 0 and level[v] == want and cost[a] + pu == potential[v]:
                        break
                    i += 1
                pointer[u] = i
                if i < len(arcs):
                    path.append(arcs[i])
                    u = head[arcs[i]]
                    continue
                if not path:
                    return pushed
                back = path.pop()
                u = head[back ^ 1]
                pointer[u] += 1
            amount = min(cap[a] for a in path)
            for a in path:
                cap[a] -= amount
                cap[a ^ 1] += amount
            pushed += amount
