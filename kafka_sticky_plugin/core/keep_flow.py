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

from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import chain, compress, repeat
from operator import add, sub

from .balance_builder import topic_subscribers
from .claims import TIED, UNOWNED, Claims, Indices, Planned
from .components import Component
from .flow import FlowNetwork
from .layout import Layout

__all__ = ["maximise_kept"]


def maximise_kept(
    layout: Layout,
    claims: Claims,
    comp: Component,
    plan: Mapping[int, Planned],
    subscribers: dict[int, list[int]] | None = None,
) -> Mapping[int, Planned]:
    """Return a plan with ``plan``'s sorted load vector (``plan`` must be load-optimal) that
    keeps the most valid claims, then the most hinted tied partitions; see the module
    docstring. ``subscribers``: :func:`.balance_builder.topic_subscribers` of ``comp`` when
    the caller has it (only read).

    Steps: :func:`_topic_groups`, :func:`_claim_classes`, :func:`_free_pools`,
    :func:`_build_network`, :func:`_solve`, :func:`_realise_released`, after the early
    returns (nothing to keep, or ``plan`` keeps it all). (The compiled twin carries this step
    inside :func:`.api.plan_component`; its push is :mod:`.flow`'s twin.)
    """
    owner, hints = claims.owner, claims.hints
    members = comp.members
    n_claims = sum(len(claims.owned[m]) for m in members)
    tied_hinted = sorted(q for q, h in hints.items() if owner[q] == TIED and h in plan)
    if n_claims == 0 and not tied_hinted:
        return plan
    if _keeps_everything(claims, members, plan, tied_hinted):
        return plan
    groups = _topic_groups(layout, comp, subscribers)
    classes = _claim_classes(layout, claims, comp, groups, n_claims, tied_hinted)
    pools = _free_pools(layout, claims, comp, groups, plan, n_claims + len(tied_hinted))
    net, arcs = _build_network(comp, plan, groups, classes, [len(pool) for pool in pools])
    released, received = _solve(net, arcs, len(classes.sizes), groups)
    return _realise_released(claims, comp, groups, classes, pools, released, received)


@dataclass
class _TopicGroups:
    """The component's topics grouped by subscriber set (numbered in topic order):
    ``of_topic[t]`` is topic ``t``'s group; ``members[g]`` the subscribers of group ``g``
    (ascending); ``topics[g]`` its topics (ascending). :meth:`of_partition` gives the group of
    every partition."""

    layout: Layout
    of_topic: dict[int, int]
    members: list[list[int]]
    topics: list[list[int]]
    _of_partition: list[int] | None = None

    def of_partition(self) -> list[int]:
        """``of_partition()[q]``: the group of every partition ``q`` up to the component's
        last topic (-1 outside the component); one flat list, built on first use."""
        if self._of_partition is None:
            counts, get = self.layout.counts, self.of_topic.get
            table: list[int] = []
            for t in range(max(self.of_topic, default=-1) + 1):
                table += repeat(get(t, -1), counts[t])
            self._of_partition = table
        return self._of_partition


def _topic_groups(
    layout: Layout, comp: Component, subscribers: dict[int, list[int]] | None = None
) -> _TopicGroups:
    """Number the topic groups: topics with the same subscriber set (as a tuple of member
    indices) share one group, so one pool node serves them all. The subscribers are the
    balancing builder's (:func:`.balance_builder.topic_subscribers`: one extend per subscription
    class when members share classes)."""
    if subscribers is None:
        subscribers = topic_subscribers(layout.subscriptions, comp)
    of_topic: dict[int, int] = {}
    group_members: list[list[int]] = []
    group_topics: list[list[int]] = []
    group_index: dict[tuple[int, ...], int] = {}
    for t in comp.topics:
        subscriber_set = tuple(subscribers[t])
        g = group_index.get(subscriber_set)
        if g is None:
            g = len(group_members)
            group_index[subscriber_set] = g
            group_members.append(subscribers[t])
            group_topics.append([])
        of_topic[t] = g
        group_topics[g].append(t)
    return _TopicGroups(layout, of_topic, group_members, group_topics)


@dataclass
class _Classes:
    """Partition classes (group, preferred member, kind), ascending as that tuple: kind 0 are
    a member's valid claims in one group (only counted: a class that releases nothing is kept
    whole), kind 1 the tied partitions of one group hinted to one member (``tied[i]`` lists
    class ``i``'s partitions ascending; kind-1 classes only). ``sizes[i]`` is the class's
    partition count, ``preferred[m]`` the sizes of member ``m``'s classes added up (every
    component member present), ``first[g]`` the first class of group ``g`` (classes of ``g``
    are ``first[g] .. first[g + 1] - 1``, ``first`` having one entry per group plus the
    end); ``n_claims`` the number of valid claims (kind 0) and ``n_hints`` of hinted tied
    partitions (kind 1)."""

    group: list[int]
    member: list[int]
    kind: list[int]
    sizes: list[int]
    tied: dict[int, list[int]]
    preferred: dict[int, int]
    first: list[int]
    n_claims: int
    n_hints: int

    @property
    def claim_price(self) -> int:
        """``K``, the price of releasing one valid claim: more than every hint together."""
        return self.n_hints + 1


def _claim_classes(
    layout: Layout,
    claims: Claims,
    comp: Component,
    groups: _TopicGroups,
    n_claims: int,
    tied_hinted: list[int],
) -> _Classes:
    """Count each member's valid claims (``n_claims`` in all) per group and list the hinted
    tied partitions (``tied_hinted``, ascending) per (group, claimant); see :class:`_Classes`.

    Group by group, the members come ascending (:func:`_claim_counts`), so the classes are
    in order without a sort; a group with tied classes is merged by a sort of its own."""
    if _runs_outnumber_partitions(layout, claims, comp):
        members_of, sizes_of = _claim_counts_by_owner(layout, claims, groups)
    else:
        members_of, sizes_of = _claim_counts(layout, claims, comp, groups)
    kinds_of: dict[int, list[int]] = {}
    preferred = {m: len(claims.owned[m]) for m in comp.members}
    hints = claims.hints
    tied_of: dict[tuple[int, int], list[int]] = {}
    for q in tied_hinted:
        h = hints[q]
        preferred[h] += 1
        tied_of.setdefault((groups.of_topic[layout.topic_of(q)], h), []).append(q)
    for g in sorted({g for g, _ in tied_of}):
        rows = sorted(
            [
                *zip(members_of[g], repeat(0), sizes_of[g]),
                *((h, 1, len(qs)) for (tg, h), qs in tied_of.items() if tg == g),
            ]
        )
        members_of[g] = [row[0] for row in rows]
        kinds_of[g] = [row[1] for row in rows]
        sizes_of[g] = [row[2] for row in rows]
    out = _Classes([], [], [], [], {}, preferred, [], n_claims, len(tied_hinted))
    for g, ms in enumerate(members_of):
        out.first.append(len(out.member))
        out.group += repeat(g, len(ms))
        out.member += ms
        out.sizes += sizes_of[g]
        out.kind += kinds_of.get(g) or repeat(0, len(ms))
    out.first.append(len(out.member))
    for i in compress(range(len(out.kind)), out.kind):
        out.tied[i] = tied_of[out.group[i], out.member[i]]
    return out


#: Counting owners partition by partition (C) beats walking sized runs (Python) once the
#: runs number more than the component's partitions over this.
_RUNS_PER_PARTITION = 8


def _runs_outnumber_partitions(layout: Layout, claims: Claims, comp: Component) -> bool:
    """True when the sized runs of ``comp``'s members (:meth:`.Claims.run_sizes`) number
    more than its partitions over :data:`_RUNS_PER_PARTITION`: then
    :func:`_claim_counts_by_owner` is the cheaper count."""
    partitions = sum(map(layout.counts.__getitem__, comp.topics))
    runs = 0
    for m in comp.members:
        sized = claims.run_sizes(m)
        if sized is not None:
            runs += len(sized[1])
    return runs * _RUNS_PER_PARTITION > partitions


def _claim_counts_by_owner(
    layout: Layout, claims: Claims, groups: _TopicGroups
) -> tuple[list[list[int]], list[list[int]]]:
    """:func:`_claim_counts` from ``claims.owner``: ``owner[q] == m`` exactly when ``q`` is
    in ``owned[m]``, and a member's claims lie in its component's topics, so counting the
    owners of each group's partitions (one C-level count per group over slices of
    ``owner``) gives every member's claim count in the group; :data:`UNOWNED` and
    :data:`TIED` are dropped."""
    owner, offsets, counts = claims.owner, layout.offsets, layout.counts
    members_of: list[list[int]] = []
    sizes_of: list[list[int]] = []
    for topics in groups.topics:
        starts = list(map(offsets.__getitem__, topics))
        ends = list(map(add, starts, map(counts.__getitem__, topics)))
        slices = map(owner.__getitem__, map(slice, starts, ends))
        held = Counter(chain.from_iterable(slices))
        held.pop(UNOWNED, None)
        held.pop(TIED, None)
        ms = sorted(held)
        members_of.append(ms)
        sizes_of.append(list(map(held.__getitem__, ms)))
    return members_of, sizes_of


def _claim_counts(
    layout: Layout, claims: Claims, comp: Component, groups: _TopicGroups
) -> tuple[list[list[int]], list[list[int]]]:
    """Per group, the members with valid claims in it (ascending) and their claim counts.

    A member's valid claims (ascending) lie in its subscribed topics only (the claims policy
    drops the others), so with its topics ascending, the claims of topic ``t_k`` are the ones
    between the binary-search positions of ``offsets[t_k]`` and ``offsets[t_(k+1)]`` (the
    claim count after the last): one ``map(bisect_left)`` per member in C, when it has at
    least 4 claims per subscribed topic; else its claims are counted one by one (in C, by
    ``Counter`` over the flat group table). A member whose claims came from sized canonical
    runs (:meth:`.Claims.run_sizes`) needs neither: its runs' lengths are the counts. A
    group met in two topics (or runs) of one member adds up into the member's last entry
    (members come ascending)."""
    offsets, subscriptions = layout.offsets, layout.subscriptions
    owned = claims.owned
    group_at = groups.of_topic.__getitem__
    members_of: list[list[int]] = [[] for _ in groups.members]
    sizes_of: list[list[int]] = [[] for _ in groups.members]
    # per subscription: (its topics' first partitions ascending, their groups)
    spans: dict[frozenset[int], tuple[list[int], list[int]]] = {}
    for m in comp.members:
        qs = owned[m]
        if not qs:
            continue
        subs = subscriptions[m]
        sized = claims.run_sizes(m)
        if sized is not None:
            runs: Iterable[tuple[int, int]] = zip(map(group_at, sized[0]), sized[1], strict=True)
        elif len(subs) * 4 <= len(qs):
            span = spans.get(subs)
            if span is None:
                topics = sorted(subs)
                span = spans[subs] = (
                    list(map(offsets.__getitem__, topics)),
                    list(map(group_at, topics)),
                )
            starts, topic_groups = span
            pos = list(map(bisect_left, repeat(qs), starts))
            pos.append(len(qs))
            runs = zip(topic_groups, map(sub, pos[1:], pos), strict=False)
        else:
            runs = Counter(map(groups.of_partition().__getitem__, qs)).items()
        for g, size in runs:
            if not size:
                continue
            ms = members_of[g]
            if ms and ms[-1] == m:
                sizes_of[g][-1] += size
            else:
                ms.append(m)
                sizes_of[g].append(size)
    return members_of, sizes_of


def _free_pools(
    layout: Layout,
    claims: Claims,
    comp: Component,
    groups: _TopicGroups,
    plan: Mapping[int, Planned],
    n_preferred: int,
) -> list[list[int]]:
    """Each group's free partitions, topic by topic: those nobody validly owns and tied ones
    whose hinted claimant is not in ``plan``. They enter the group's pool directly,
    preferring nobody. Every partition of the component is either free or preferred (a
    valid claim or a hinted tied partition of a member in ``plan``: ``n_preferred`` in all),
    so when the preferred ones are all, nothing is scanned."""
    offsets, counts = layout.offsets, layout.counts
    owner, hints = claims.owner, claims.hints
    pools: list[list[int]] = [[] for _ in groups.members]
    if sum(map(counts.__getitem__, comp.topics)) == n_preferred:
        return pools
    for t in comp.topics:
        start = offsets[t]
        end = start + counts[t]
        window = owner[start:end]
        if min(window, default=0) >= 0:
            continue
        pool = pools[groups.of_topic[t]]
        if UNOWNED in window:
            pool.extend([q for q, o in zip(range(start, end), window, strict=True) if o == UNOWNED])
        if TIED in window:
            pool.extend(
                q
                for q, o in zip(range(start, end), window, strict=True)
                if o == TIED and hints.get(q) not in plan
            )
    return pools


@dataclass
class _Arcs:
    """Where :func:`_build_network` put things: the first release arc (one per class, in
    class order), each group's first arc to a member (one per member of the group, in member
    order), the flow the warm start already carries and the flow a complete plan needs."""

    release0: int
    pool_starts: list[int]
    warm: int
    total: int


def _build_network(
    comp: Component,
    plan: Mapping[int, Planned],
    groups: _TopicGroups,
    classes: _Classes,
    free_count: list[int],
) -> tuple[FlowNetwork, _Arcs]:
    """The network of the module docstring with its warm start (cost 0, no negative residual
    arc: each member keeps up to ``x_i - 1`` of its preferred partitions).

    Nodes: 0 source, 1 sink, members, groups (pools). A member receives its preferred
    partitions from the source and either keeps them (its arcs to the sink) or releases them
    into the group's pool at the class's price. Arcs are added in bulk, in batches whose
    tails and heads are apart (:meth:`.FlowNetwork.add_arcs` then links them in C): release
    arcs (class order), source to members, members to the sink, source to pools, pools to
    members. Every node's arcs come in the order (classes, then members, then groups) that
    fixes the solver's tie-breaking: the solver only ever reads a node's arcs in their
    order, never compares arcs of different nodes.
    """
    member_node = {m: 2 + i for i, m in enumerate(comp.members)}
    pool0 = 2 + len(comp.members)
    net = FlowNetwork(pool0 + len(groups.members))
    release0 = _add_release_arcs(net, classes, member_node, pool0)
    warm, total = _add_load_box(net, comp, plan, classes, member_node)
    starts = _add_pool_arcs(net, groups, classes, member_node, pool0, free_count)
    return net, _Arcs(release0, starts, warm, total)


def _add_release_arcs(
    net: FlowNetwork, classes: _Classes, member_node: dict[int, int], pool0: int
) -> int:
    """One arc per class, in class order, from its preferred member to its group's pool,
    priced :attr:`_Classes.claim_price` per claim and 1 per hint. Returns the first arc."""
    tails = list(map(member_node.__getitem__, classes.member))
    heads = list(map(add, classes.group, repeat(pool0)))
    costs = list(map((classes.claim_price, 1).__getitem__, classes.kind))
    return net.add_arcs(tails, heads, classes.sizes, costs)


def _add_load_box(
    net: FlowNetwork,
    comp: Component,
    plan: Mapping[int, Planned],
    classes: _Classes,
    member_node: dict[int, int],
) -> tuple[int, int]:
    """Each member's arc from the source (its preferred partitions) and its load box to the
    sink: ``x_i - 1`` at cost 0, then unit arcs costing ``BIG + W * (k - 1)`` for load ``k``
    (``W`` outweighs all stickiness, ``BIG`` every other cost of any plan). The cost-0 arcs
    carry the warm start. Returns ``(warm start flow, partitions to place)``."""
    source, sink = 0, 1
    n_claims, n_hints, k_claim = classes.n_claims, classes.n_hints, classes.claim_price
    preferred = classes.preferred
    w_load = k_claim * n_claims + n_hints + 1
    members = comp.members
    x = {m: len(plan[m]) for m in members}
    lo = {m: max(0, x[m] - 1) for m in members}
    total = sum(x.values())
    above = total - sum(lo.values())
    top = max(x.values()) + 1
    big = above * w_load * top + k_claim * n_claims + n_hints + 1
    start_flow = {m: min(preferred[m], lo[m]) for m in members}
    fed = [m for m in members if preferred[m]]
    net.add_arcs(
        [source] * len(fed),
        list(map(member_node.__getitem__, fed)),
        list(map(preferred.__getitem__, fed)),
        [0] * len(fed),
        list(map(start_flow.__getitem__, fed)),
    )
    tails: list[int] = []
    caps: list[int] = []
    costs: list[int] = []
    flows: list[int] = []
    for m in members:
        node = member_node[m]
        tails.append(node)
        caps.append(lo[m])
        costs.append(0)
        flows.append(start_flow[m])
        for k in range(lo[m] + 1, x[m] + 2):
            tails.append(node)
            caps.append(1)
            costs.append(big + w_load * (k - 1))
            flows.append(0)
    net.add_arcs(tails, [sink] * len(tails), caps, costs, flows)
    return sum(start_flow.values()), total


def _add_pool_arcs(
    net: FlowNetwork,
    groups: _TopicGroups,
    classes: _Classes,
    member_node: dict[int, int],
    pool0: int,
    free_count: list[int],
) -> list[int]:
    """Per group: an arc from the source for its free partitions (first batch), then one arc
    (cost 0, capacity the group's size) to each subscriber, in member order (second batch).
    Returns each group's first arc to a member."""
    source = 0
    sizes, first = classes.sizes, classes.first
    fed = [g for g, n in enumerate(free_count) if n]
    net.add_arcs(
        [source] * len(fed),
        list(map(add, fed, repeat(pool0))),
        list(map(free_count.__getitem__, fed)),
        [0] * len(fed),
    )
    tails: list[int] = []
    heads: list[int] = []
    caps: list[int] = []
    pool_starts: list[int] = []  # batch position of each group's first arc to a member
    for g, ms in enumerate(groups.members):
        pool_starts.append(len(tails))
        size = free_count[g] + sum(sizes[first[g] : first[g + 1]])
        tails += [pool0 + g] * len(ms)
        heads += map(member_node.__getitem__, ms)
        caps += [size] * len(ms)
    arc0 = net.add_arcs(tails, heads, caps, [0] * len(tails))
    # every arc has its reverse: batch position i is arc arc0 + 2 * i
    return [arc0 + 2 * i for i in pool_starts]


def _solve(
    net: FlowNetwork, arcs: _Arcs, n_classes: int, groups: _TopicGroups
) -> tuple[list[int], list[dict[int, int]]]:
    """Push the cheapest complete flow; return how many partitions each class releases (class
    order) and, per group, ``{member: partitions it takes from the pool}`` (member order,
    members taking nothing left out)."""
    pushed = net.push_min_cost(0, 1)
    if arcs.warm + pushed != arcs.total:  # pragma: no cover - x itself is a complete flow
        raise AssertionError("stickiness flow could not place every partition")
    released = net.flows(arcs.release0, n_classes)
    received = [
        {m: f for m, f in zip(ms, net.flows(start, len(ms)), strict=True) if f}
        for start, ms in zip(arcs.pool_starts, groups.members, strict=True)
    ]
    return released, received


def _realise_released(
    claims: Claims,
    comp: Component,
    groups: _TopicGroups,
    classes: _Classes,
    pools: list[list[int]],
    released: list[int],
    received: list[dict[int, int]],
) -> dict[int, list[int]]:
    """Turn the class flows back into partitions; the counts the flow fixed never change.

    A tied class's claimant keeps its first ``size - released`` partitions; an owner keeps
    its claims but what :func:`_release_claims` gives up. Each pool (its free partitions plus
    everything released into it) is then dealt in ascending order by :func:`_deal`.
    """
    owned, hints = claims.owned, claims.hints
    # Released claims by member: {group: amount}; tied classes handled one by one.
    cut: dict[int, dict[int, int]] = {}
    out: dict[int, list[int]] = {m: [] for m in comp.members}
    tied = classes.tied
    # Only classes that release something or are tied need a look (class order kept).
    for i in sorted({*compress(range(len(released)), released), *tied}):
        g, p, r = classes.group[i], classes.member[i], released[i]
        if i in tied:
            qs = tied[i]
            keep = len(qs) - r
            out[p].extend(qs[:keep])
            pools[g].extend(qs[keep:])
        else:
            cut.setdefault(p, {})[g] = r
    for m in comp.members:
        if m in cut:
            _release_claims(owned[m], cut[m], groups, hints, received, out[m], pools)
        else:
            out[m].extend(owned[m])
    # Members that only kept their claims hold them ascending already.
    touched = {*cut, *(classes.member[i] for i in tied)}
    for g, pool in enumerate(pools):
        if pool:
            pool.sort()
            touched.update(received[g])
            _deal(pool, dict(received[g]), hints, out)
    for m in touched:
        out[m].sort()
    return out


def _release_claims(
    claimed: Indices,
    cuts: dict[int, int],
    groups: _TopicGroups,
    hints: dict[int, int],
    received: list[dict[int, int]],
    kept: list[int],
    pools: list[list[int]],
) -> None:
    """One owner's valid claims (``claimed``, ascending) minus ``cuts[g]`` partitions of each
    group ``g`` it releases from: those go into ``pools[g]`` (first the partitions whose
    hinted claimant takes from that pool, then the highest), the rest onto ``kept``. The
    claims of one topic are one slice of ``claimed`` (two binary searches)."""
    offsets, counts = groups.layout.offsets, groups.layout.counts
    slices: list[tuple[int, int, int]] = []  # (start, end, group) in claimed
    for g in cuts:
        for t in groups.topics[g]:
            lo = bisect_left(claimed, offsets[t])
            hi = bisect_left(claimed, offsets[t] + counts[t], lo)
            if hi > lo:
                slices.append((lo, hi, g))
    slices.sort()
    by_group: dict[int, list[int]] = {g: [] for g in cuts}
    done = 0
    for lo, hi, g in slices:
        kept += claimed[done:lo]
        by_group[g] += claimed[lo:hi]
        done = hi
    kept += claimed[done:]
    for g, r in cuts.items():
        qs = by_group[g]
        d = len(qs) - r
        if hints:
            # Give up first the partitions whose losing claimant takes from this pool.
            takers = received[g]
            qs.sort(key=lambda q: (hints.get(q) in takers, q))
        kept.extend(qs[:d])
        pools[g].extend(qs[d:])


def _keeps_everything(
    claims: Claims,
    members: list[int],
    plan: Mapping[int, Planned],
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
        if qs is not owned[m] and list(map(owner_at, qs)).count(m) != len(owned[m]):
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
