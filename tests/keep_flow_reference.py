"""The reference of ``core/keep_flow.py`` (issue 28): the stickiness flow as it was before
its bulk rewrite (classes counted run by run, the network built arc by arc in the original
order, solved by ``tests/flow_reference.py``), kept verbatim so that the engine's module can
be checked against it bit for bit (``tests/test_engine_keep_flow_bulk.py``). The proof is the
engine module's docstring."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import Counter
from dataclasses import dataclass
from itertools import compress
from operator import not_

from flow_reference import FlowNetwork

from kafka_sticky_plugin.core.claims import TIED, UNOWNED, Claims, Indices
from kafka_sticky_plugin.core.components import Component
from kafka_sticky_plugin.core.layout import Layout

__all__ = ["maximise_kept"]


def maximise_kept(
    layout: Layout, claims: Claims, comp: Component, plan: dict[int, list[int]]
) -> dict[int, list[int]]:
    """Return a plan with ``plan``'s sorted load vector (``plan`` must be load-optimal) that
    keeps the most valid claims, then the most hinted tied partitions; see the module
    docstring.

    Steps: :func:`_topic_groups`, :func:`_claim_classes`, :func:`_free_pools`,
    :func:`_build_network`, :func:`_solve`, :func:`_realise_released`.
    """
    owner, hints = claims.owner, claims.hints
    members = comp.members
    n_claims = sum(len(claims.owned[m]) for m in members)
    tied_hinted = [q for q, h in hints.items() if owner[q] == TIED and h in plan]
    if n_claims == 0 and not tied_hinted:
        return plan
    if _keeps_everything(claims, members, plan, tied_hinted):
        return plan
    groups = _topic_groups(layout, comp)
    classes = _claim_classes(layout, claims, comp, groups, n_claims, sorted(tied_hinted))
    pools = _free_pools(layout, claims, comp, groups, plan)
    net, arcs = _build_network(comp, plan, groups, classes, [len(pool) for pool in pools])
    released, received = _solve(net, arcs, len(classes.sizes), groups)
    return _realise_released(claims, comp, groups, classes, pools, released, received)


@dataclass
class _TopicGroups:
    """The component's topics grouped by subscriber set (numbered in topic order):
    ``of_topic[t]`` is topic ``t``'s group; ``members[g]`` the subscribers of group ``g``
    (ascending); ``of_partition[q]`` the group of every partition ``q`` up to the component's
    last topic (-1 outside the component)."""

    of_topic: dict[int, int]
    members: list[list[int]]
    of_partition: list[int]


def _topic_groups(layout: Layout, comp: Component) -> _TopicGroups:
    """Number the topic groups: topics with the same subscriber set (as a tuple of member
    indices) share one group, so one pool node serves them all."""
    offsets, counts, subs = layout.offsets, layout.counts, layout.subscriptions
    subscribers: dict[int, list[int]] = {t: [] for t in comp.topics}
    for m in comp.members:
        for t in subs[m]:
            subscribers[t].append(m)
    of_topic: dict[int, int] = {}
    group_members: list[list[int]] = []
    group_index: dict[tuple[int, ...], int] = {}
    for t in comp.topics:
        subscriber_set = tuple(subscribers[t])
        g = group_index.get(subscriber_set)
        if g is None:
            g = len(group_members)
            group_index[subscriber_set] = g
            group_members.append(subscribers[t])
        of_topic[t] = g
    of_partition: list[int] = [-1] * offsets[comp.topics[0]] if comp.topics else []
    for t in range(comp.topics[0], comp.topics[-1] + 1) if comp.topics else ():
        of_partition.extend([of_topic.get(t, -1)] * counts[t])
    return _TopicGroups(of_topic, group_members, of_partition)


@dataclass
class _Classes:
    """Partition classes (group, preferred member, kind), ascending as that tuple: kind 0 are
    a member's valid claims in one group (only counted: a class that releases nothing is kept
    whole), kind 1 the tied partitions of one group hinted to one member (``tied[i]`` lists
    them ascending; empty for kind 0). ``sizes[i]`` is the class's partition count;
    ``n_claims`` the number of valid claims (kind 0) and ``n_hints`` of hinted tied
    partitions (kind 1)."""

    group: list[int]
    member: list[int]
    kind: list[int]
    sizes: list[int]
    tied: list[list[int]]
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
    tied partitions (``tied_hinted``, ascending) per (group, claimant); see :class:`_Classes`."""
    offsets, counts, subs = layout.offsets, layout.counts, layout.subscriptions
    of_topic = groups.of_topic
    group_at = groups.of_partition.__getitem__
    owned = claims.owned
    # Class key (g, m, kind) as one integer, ordered as the tuple.
    stride = 2 * (max(comp.members) + 1)
    size_of: dict[int, int] = {}
    for m in comp.members:
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
            key = of_topic[t] * stride + base
            size_of[key] = size_of.get(key, 0) + j - i
            i = j
    tied_of: dict[int, list[int]] = {}
    hints = claims.hints
    for q in tied_hinted:
        key = of_topic[layout.topic_of(q)] * stride + 2 * hints[q] + 1
        tied_of.setdefault(key, []).append(q)
    for key, tied in tied_of.items():
        size_of[key] = len(tied)
    out = _Classes([], [], [], [], [], n_claims, len(tied_hinted))
    for key in sorted(size_of):
        g, rest = divmod(key, stride)
        p, kind = divmod(rest, 2)
        out.group.append(g)
        out.member.append(p)
        out.kind.append(kind)
        out.sizes.append(size_of[key])
        out.tied.append(tied_of.get(key, []))
    return out


def _free_pools(
    layout: Layout,
    claims: Claims,
    comp: Component,
    groups: _TopicGroups,
    plan: dict[int, list[int]],
) -> list[list[int]]:
    """Each group's free partitions, topic by topic: those nobody validly owns and tied ones
    whose hinted claimant is not in ``plan``. They enter the group's pool directly,
    preferring nobody."""
    offsets, counts = layout.offsets, layout.counts
    owner, hints = claims.owner, claims.hints
    pools: list[list[int]] = [[] for _ in groups.members]
    for t in comp.topics:
        start = offsets[t]
        end = start + counts[t]
        window = owner[start:end]
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
    plan: dict[int, list[int]],
    groups: _TopicGroups,
    classes: _Classes,
    free_count: list[int],
) -> tuple[FlowNetwork, _Arcs]:
    """The network of the module docstring with its warm start (cost 0, no negative residual
    arc: each member keeps up to ``x_i - 1`` of its preferred partitions).

    Nodes: 0 source, 1 sink, members, groups (pools). A member receives its preferred
    partitions from the source and either keeps them (its arcs to the sink) or releases them
    into the group's pool at the class's price. Arcs are added in bulk, in the order
    (classes, then members, then groups) that fixes the solver's tie-breaking.
    """
    member_node = {m: 2 + i for i, m in enumerate(comp.members)}
    pool0 = 2 + len(comp.members)
    net = FlowNetwork(pool0 + len(groups.members))
    release0, preferred = _add_release_arcs(net, classes, member_node, pool0)
    warm, total = _add_load_box(net, comp, plan, classes, member_node, preferred)
    starts = _add_pool_arcs(net, groups, classes, member_node, pool0, free_count)
    return net, _Arcs(release0, starts, warm, total)


def _add_release_arcs(
    net: FlowNetwork, classes: _Classes, member_node: dict[int, int], pool0: int
) -> tuple[int, dict[int, int]]:
    """One arc per class, in class order, from its preferred member to its group's pool,
    priced :attr:`_Classes.claim_price` per claim and 1 per hint. Returns
    the first arc and each member's preferred partition count."""
    k_claim = classes.claim_price
    preferred = dict.fromkeys(member_node, 0)
    tails: list[int] = []
    heads: list[int] = []
    costs: list[int] = []
    for g, p, kind, size in zip(
        classes.group, classes.member, classes.kind, classes.sizes, strict=True
    ):
        preferred[p] += size
        tails.append(member_node[p])
        heads.append(pool0 + g)
        costs.append(k_claim if kind == 0 else 1)
    return net.add_arcs(tails, heads, classes.sizes, costs), preferred


def _add_load_box(
    net: FlowNetwork,
    comp: Component,
    plan: dict[int, list[int]],
    classes: _Classes,
    member_node: dict[int, int],
    preferred: dict[int, int],
) -> tuple[int, int]:
    """Each member's arc from the source (its preferred partitions) and its load box to the
    sink: ``x_i - 1`` at cost 0, then unit arcs costing ``BIG + W * (k - 1)`` for load ``k``
    (``W`` outweighs all stickiness, ``BIG`` every other cost of any plan). The cost-0 arcs
    carry the warm start. Returns ``(warm start flow, partitions to place)``."""
    source, sink = 0, 1
    n_claims, n_hints, k_claim = classes.n_claims, classes.n_hints, classes.claim_price
    w_load = k_claim * n_claims + n_hints + 1
    members = comp.members
    x = {m: len(plan[m]) for m in members}
    lo = {m: max(0, x[m] - 1) for m in members}
    total = sum(x.values())
    above = total - sum(lo.values())
    top = max(x.values()) + 1
    big = above * w_load * top + k_claim * n_claims + n_hints + 1
    warm = 0
    tails: list[int] = []
    heads: list[int] = []
    caps: list[int] = []
    costs: list[int] = []
    flows: list[int] = []
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
    return warm, total


def _add_pool_arcs(
    net: FlowNetwork,
    groups: _TopicGroups,
    classes: _Classes,
    member_node: dict[int, int],
    pool0: int,
    free_count: list[int],
) -> list[int]:
    """Per group: an arc from the source for its free partitions, then one arc (cost 0,
    capacity the group's size) to each subscriber, in member order. Returns each group's
    first arc to a member."""
    source = 0
    group_size = list(free_count)
    for g, size in zip(classes.group, classes.sizes, strict=True):
        group_size[g] += size
    tails: list[int] = []
    heads: list[int] = []
    caps: list[int] = []
    costs: list[int] = []
    pool_starts: list[int] = []  # batch position of each group's first arc to a member
    for g, ms in enumerate(groups.members):
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
    # every arc has its reverse: batch position i is arc first + 2 * i
    return [first + 2 * i for i in pool_starts]


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
    for g, p, kind, size, qs, r in zip(
        classes.group,
        classes.member,
        classes.kind,
        classes.sizes,
        classes.tied,
        released,
        strict=True,
    ):
        if kind == 1:
            out[p].extend(qs[: size - r])
            pools[g].extend(qs[size - r :])
        elif r:
            cut.setdefault(p, {})[g] = r
    for m in comp.members:
        if m in cut:
            _release_claims(owned[m], cut[m], groups, hints, received, out[m], pools)
        else:
            out[m].extend(owned[m])
    for g, pool in enumerate(pools):
        pool.sort()
        _deal(pool, dict(received[g]), hints, out)
    for m in comp.members:
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
    hinted claimant takes from that pool, then the highest), the rest onto ``kept``."""
    group_at = groups.of_partition.__getitem__
    flags = list(map(cuts.__contains__, map(group_at, claimed)))
    kept.extend(compress(claimed, map(not_, flags)))
    released_qs = list(compress(claimed, flags))
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
        kept.extend(qs[:d])
        pools[g].extend(qs[d:])


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
