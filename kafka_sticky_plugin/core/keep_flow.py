"""Exact stickiness for different subscriptions: keep the most valid claims among all
load-optimal plans.

Input: a load-optimal plan of one heterogeneous component (:mod:`.balance_builder`). Output:
a plan with the same *sorted* load vector that keeps the largest possible number of valid
claims (partitions staying with their validated owner, :mod:`.claims`) and, among those, hands
the largest possible number of tied partitions back to their hinted previous claimant. Which
member carries which load may change: that freedom is part of the optimisation.

Why it is exact
---------------

Write ``l`` for a load vector (one entry per member) and ``B`` for the set of load vectors of
complete plans (every partition to one subscriber). ``B`` is the set of integral bases of a
polymatroid (rank of a member set = partitions some member of the set subscribes to), i.e. an
M-convex set. Two classic facts on M-convex sets:

1. (Murota's local optimality for M-convex functions, applied to ``sum l_i**2``.) ``l`` is
   a minimiser of the square sum over ``B`` iff no exchange ``l - e_i + e_j`` in ``B`` lowers
   it, i.e. iff no chain of moves lowers a member of load ``L`` while raising one at
   ``<= L - 2``: exactly the load optimality the balancing builder establishes.
2. (Frank and Murota, *Discrete decreasing minimization*, Part I.) The square-sum minimisers
   are exactly the decreasingly minimal elements: they all share one sorted load vector.

So "load-optimal plans" = "plans whose load vector minimises ``F(l) = sum l_i (l_i - 1) / 2``"
(same minimisers as the square sum, since ``sum l_i`` is the partition count). The method
minimises ``W * F(l) + K * lost_claims + lost_hints`` with ``W > K * claims + hints`` and
``K > hints``: an ``F`` step is worth more than any stickiness, a claim more than every hint.
That is one min-cost flow.

The flow is made small twice over:

- **aggregated classes.** Partitions with the same subscriber set (topic group) and the same
  preferred member (valid owner, else the hinted claimant of a tied partition, else nobody)
  are interchangeable for the objective. A member receives all its preferred partitions from
  the source and either keeps them (its arcs to the sink) or releases some of a class into the
  group's pool (one arc per class, cost ``K`` for a claim, 1 for a hint); free partitions
  enter the pool directly; the pool has an arc (cost 0) to every subscriber. So the network
  has one node per member and per topic group, and one arc per class and per (group,
  subscriber);
- **a load box.** Every load-optimal vector ``y`` lies within one of the builder's vector
  ``x`` coordinatewise: if ``y_i >= x_i + 2``, the M-convex exchange axiom gives ``j`` with
  ``y_j < x_j``, ``y - e_i + e_j`` and ``x + e_i - e_j`` in ``B``; optimality of both gives
  ``y_j >= y_i - 1`` and ``x_j <= x_i + 1``, so ``y_i <= y_j + 1 <= x_j <= x_i + 1``, a
  contradiction (the lower side is symmetric). So member ``i`` only needs loads in
  ``[x_i - 1, x_i + 1]``: one arc of capacity ``x_i - 1`` at cost 0 and two unit arcs whose
  costs ``BIG + W * (k - 1)`` follow ``F``'s marginals. ``BIG`` exceeds every other cost of any
  plan, so a cheapest flow fills every cost-0 arc (possible: ``x`` does), which makes the box's
  lower end binding and the remaining costs exactly ``W * F`` up to a constant.

The flow starts from a zero-cost flow (every member keeps up to ``x_i - 1`` of its preferred
partitions: a flow of cost 0 with no negative residual arc, hence a cheapest flow of its value)
and :class:`~.flow.FlowNetwork` pushes the rest along cheapest paths, so the result is a
cheapest complete flow. Turning the class flows back into partitions: a class's preferred
member keeps its first ``size - released`` partitions (ascending), the rest go into the pool;
each pool is
dealt in ascending ``(topic, partition)`` order: a partition whose losing claimant (hint)
receives from the pool goes back to it, the rest round-robin over the receiving members (member
order), which spreads each topic; an owner class gives up first the partitions whose hint
receives from its pool. These choices never change the counts the flow fixed. Everything is a
function of dense indices, so the plan does not depend on input order.

When the builder's plan already keeps every valid claim and every hint it is optimal as is and
is returned unchanged (always the case in a fresh group).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import Counter
from itertools import compress
from operator import not_

from .claims import TIED, UNOWNED, Claims
from .components import Component
from .flow import FlowNetwork
from .layout import Layout

__all__ = ["maximise_kept"]


def maximise_kept(
    layout: Layout, claims: Claims, comp: Component, plan: dict[int, list[int]]
) -> dict[int, list[int]]:
    """Return a plan with ``plan``'s sorted load vector (``plan`` must be load-optimal) that
    keeps the most valid claims, then the most hinted tied partitions; see the module
    docstring."""
    owner, hints = claims.owner, claims.hints
    members = comp.members
    n_claims = sum(len(claims.owned[m]) for m in members)
    tied_hinted = [q for q, h in hints.items() if owner[q] == TIED and h in plan]
    if n_claims == 0 and not tied_hinted:
        return plan
    if _keeps_everything(claims, members, plan, tied_hinted):
        return plan

    offsets, counts, subs = layout.offsets, layout.counts, layout.subscriptions
    # Topic groups: topics with the same subscriber set (as a tuple of member indices).
    subscribers: dict[int, list[int]] = {t: [] for t in comp.topics}
    for m in members:
        for t in subs[m]:
            subscribers[t].append(m)
    group_of_topic: dict[int, int] = {}
    group_members: list[list[int]] = []
    group_index: dict[tuple[int, ...], int] = {}
    for t in comp.topics:
        subscriber_set = tuple(subscribers[t])
        g = group_index.get(subscriber_set)
        if g is None:
            g = len(group_members)
            group_index[subscriber_set] = g
            group_members.append(subscribers[t])
        group_of_topic[t] = g

    # Partition classes (group, preferred member, kind): kind 0 are a member's valid claims
    # in one group (only counted here: a class that releases nothing is kept whole), kind 1
    # the hinted tied partitions (listed); the free partitions of each group go straight to
    # its pool. Group of every partition first (-1 outside the component).
    pools: list[list[int]] = [[] for _ in group_members]
    group_of_partition: list[int] = [-1] * offsets[comp.topics[0]] if comp.topics else []
    for t in range(comp.topics[0], comp.topics[-1] + 1) if comp.topics else ():
        g = group_of_topic.get(t, -1)
        group_of_partition.extend([g] * counts[t])
    group_at = group_of_partition.__getitem__
    owned = claims.owned
    # Class key (g, m, kind) as one integer, ordered as the tuple.
    stride = 2 * (max(members) + 1)
    size_of: dict[int, int] = {}
    for m in members:
        qs = owned[m]
        if not qs:
            continue
        base = 2 * m
        if len(qs) < 4 * len(subs[m]):
            for g, c in Counter(map(group_at, qs)).items():
                size_of[g * stride + base] = c
            continue
        # Long runs per topic (ascending claims): count each run by binary search.
        i, n = 0, len(qs)
        while i < n:
            t = bisect_right(offsets, qs[i]) - 1
            j = bisect_left(qs, offsets[t] + counts[t], i)
            key = group_of_topic[t] * stride + base
            size_of[key] = size_of.get(key, 0) + j - i
            i = j
    tied_cls: dict[int, list[int]] = {}
    for q in sorted(q for q, h in hints.items() if owner[q] == TIED and h in plan):
        key = group_of_topic[layout.topic_of(q)] * stride + 2 * hints[q] + 1
        tied_cls.setdefault(key, []).append(q)
    for key, qs in tied_cls.items():
        size_of[key] = len(qs)
    for t in comp.topics:
        start = offsets[t]
        end = start + counts[t]
        window = owner[start:end]
        pool = pools[group_of_topic[t]]
        if UNOWNED in window:
            pool.extend([q for q, o in zip(range(start, end), window, strict=True) if o == UNOWNED])
        if TIED in window:
            pool.extend(
                q
                for q, o in zip(range(start, end), window, strict=True)
                if o == TIED and hints.get(q) not in plan
            )
    free_count = [len(pool) for pool in pools]
    class_keys = sorted(size_of)
    class_sizes = [size_of[k] for k in class_keys]
    n_hints = sum(len(qs) for qs in tied_cls.values())
    k_claim = n_hints + 1
    w_load = k_claim * n_claims + n_hints + 1

    x = {m: len(plan[m]) for m in members}
    lo = {m: max(0, x[m] - 1) for m in members}
    total = sum(x.values())
    above = total - sum(lo.values())
    top = max(x.values()) + 1
    big = above * w_load * top + k_claim * n_claims + n_hints + 1

    # Nodes: 0 source, 1 sink, members, groups (pools). A member receives its preferred
    # partitions from the source and either keeps them (its arcs to the sink) or releases
    # them into the group's pool at the class's price. Arcs are added in bulk, in the order
    # (classes, then members, then groups) that fixes the solver's tie-breaking.
    member_node = {m: 2 + i for i, m in enumerate(members)}
    pool0 = 2 + len(members)
    net = FlowNetwork(pool0 + len(group_members))
    source, sink = 0, 1
    preferred = dict.fromkeys(members, 0)
    group_size = list(free_count)
    tails: list[int] = []
    heads: list[int] = []
    costs: list[int] = []
    for key, size in zip(class_keys, class_sizes, strict=True):
        g, rest = divmod(key, stride)
        p, kind = divmod(rest, 2)
        preferred[p] += size
        group_size[g] += size
        tails.append(member_node[p])
        heads.append(pool0 + g)
        costs.append(k_claim if kind == 0 else 1)
    release0 = net.add_arcs(tails, heads, class_sizes, costs)
    # Warm start (cost 0, no negative residual arc): each member keeps up to lo of them.
    warm = 0
    tails, heads, caps, costs, flows = [], [], [], [], []
    for m in members:
        node = member_node[m]
        start_flow = min(preferred[m], lo[m])
        warm += start_flow
        if preferred[m]:
            tails.append(source)
            heads.append(node)
            caps.append(preferred[m])
            costs.append(0)
            flows.append(start_flow)
        tails.append(node)
        heads.append(sink)
        caps.append(lo[m])
        costs.append(0)
        flows.append(start_flow)
        for k in range(lo[m] + 1, x[m] + 2):
            tails.append(node)
            heads.append(sink)
            caps.append(1)
            costs.append(big + w_load * (k - 1))
            flows.append(0)
    net.add_arcs(tails, heads, caps, costs, flows)
    tails, heads, caps, costs = [], [], [], []
    pool_starts: list[int] = []  # batch position of each group's first arc to a member
    for g, ms in enumerate(group_members):
        node = pool0 + g
        if free_count[g]:
            tails.append(source)
            heads.append(node)
            caps.append(free_count[g])
            costs.append(0)
        pool_starts.append(len(tails))
        tails += [node] * len(ms)
        heads += [member_node[m] for m in ms]
        caps += [group_size[g]] * len(ms)
        costs += [0] * len(ms)
    first = net.add_arcs(tails, heads, caps, costs)
    # (group, first arc to a member, its members)
    pool_arcs = [
        (g, first + 2 * i, ms)
        for g, (i, ms) in enumerate(zip(pool_starts, group_members, strict=True))
    ]
    pushed = net.push_min_cost(source, sink)
    if warm + pushed != total:  # pragma: no cover - x itself is a complete flow in the box
        raise AssertionError("stickiness flow could not place every partition")

    released = net.flows(release0, len(class_keys))
    received = [
        {m: f for m, f in zip(ms, net.flows(start, len(ms)), strict=True) if f}
        for _, start, ms in pool_arcs
    ]
    # Released claims by member: {group: amount}; tied classes handled one by one.
    cut: dict[int, dict[int, int]] = {}
    out: dict[int, list[int]] = {m: [] for m in members}
    for key, size, r in zip(class_keys, class_sizes, released, strict=True):
        g, rest = divmod(key, stride)
        p, kind = divmod(rest, 2)
        if kind == 1:
            qs = tied_cls[key]
            out[p].extend(qs[: size - r])
            pools[g].extend(qs[size - r :])
        elif r:
            cut.setdefault(p, {})[g] = r
    for m in members:
        if m not in cut:
            out[m].extend(owned[m])
            continue
        cuts = cut[m]
        flags = list(map(cuts.__contains__, map(group_at, owned[m])))
        out[m].extend(compress(owned[m], map(not_, flags)))
        released_qs = list(compress(owned[m], flags))
        by_group: dict[int, list[int]] = {}
        if len(cuts) == 1:
            by_group[next(iter(cuts))] = released_qs
        else:
            for q in released_qs:
                by_group.setdefault(group_at(q), []).append(q)
        for g, r in cuts.items():
            qs = by_group[g]
            d = len(qs) - r
            if hints:
                # Give up first the partitions whose losing claimant takes from this pool.
                takers = received[g]
                qs.sort(key=lambda q: (hints.get(q) in takers, q))
            out[m].extend(qs[:d])
            pools[g].extend(qs[d:])
    for g, pool in enumerate(pools):
        pool.sort()
        _deal(pool, dict(received[g]), hints, out)
    for m in members:
        out[m].sort()
    return out


def _keeps_everything(
    claims: Claims,
    members: list[int],
    plan: dict[int, list[int]],
    tied_hinted: list[int],
) -> bool:
    """True when ``plan`` keeps every valid claim and gives every hinted tied partition to its
    hinted claimant (nothing left to gain)."""
    owner, owned = claims.owner, claims.owned
    owner_at = owner.__getitem__
    for m in members:
        qs = plan[m]
        # Fast path: the plan is exactly the member's claims. Else count the kept ones (never
        # more than its claims).
        if qs != owned[m] and list(map(owner_at, qs)).count(m) != len(owned[m]):
            return False
    if not tied_hinted:
        return True
    holder = {q: m for m in members for q in plan[m]}
    return all(holder.get(q) == claims.hints[q] for q in tied_hinted)


def _deal(
    pool: list[int],
    want: dict[int, int],
    hints: dict[int, int],
    out: dict[int, list[int]],
) -> None:
    """Deal ``pool`` (ascending) over ``want`` = ``{member: amount}`` (member order): a
    partition whose losing claimant (hint) still takes goes back to it, the rest round-robin."""
    rest = pool
    if hints:
        rest = []
        for q in pool:
            h = hints.get(q)
            if h is not None and want.get(h, 0) > 0:
                out[h].append(q)
                want[h] -= 1
            else:
                rest.append(q)
    i = 0
    takers = [(m, left) for m, left in sorted(want.items()) if left > 0]
    while takers:
        nxt = []
        for m, left in takers:
            out[m].append(rest[i])
            i += 1
            if left > 1:
                nxt.append((m, left - 1))
        takers = nxt
