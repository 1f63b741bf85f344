"""Exact rack-aware stickiness (KIP-881) for one component, whatever its subscriptions.

The order
---------

Among all plans of the component, the pass returns one that is, lexicographically:

1. **load-optimal** (the sorted load vector of every load-optimal plan: ``base``/``base + 1``
   with equal subscriptions, the decreasingly minimal vector otherwise, see :mod:`.keep_flow`);
2. with the **fewest mismatches** (cross-rack placements, :mod:`.racks`);
3. keeping the **most valid claims** (partitions staying with their validated owner);
4. giving the most hinted tied partitions back to their hinted claimant (KIP-341 hint);
5. moving the fewest of the remaining (*free*) partitions away from the member the plan
   without racks gave them to, so that a plan with nothing to gain comes back unchanged
   apart from claims it could not keep anyway.

This is the order of Java's KIP-881 implementation (kafka-clients 4.4
``AbstractStickyAssignor``: "prioritizing balanced assignment over rack alignment. Previously
owned partitions may be reassigned to improve rack locality"): balance first, racks second,
stickiness third. Java reaches it greedily (owned partitions on a matching rack first, a
rack-aware round robin, then the rest), so it may end with more mismatches or fewer kept
partitions than this order allows; this pass is exact. One vocabulary difference is kept on
purpose: a partition without replica racks is never a mismatch here (Java counts it as one
for a consumer with a rack), so that missing metadata never moves a partition.

Why it is exact
---------------

Every partition ``q`` of the component has one *preferred* member ``pref(q)`` and a price: its
validated owner (price ``K``); else, for a tied partition, its hinted claimant if that member
is in the component (price ``H``); else the member holding it in the plan without racks
(price 1). With ``n_free``, ``n_hint``, ``n_claim`` the numbers of each kind, ``H = n_free +
1`` outweighs every free move, ``K = H * n_hint + n_free + 1`` every hint and free move, and
``MIS = K * n_claim + H * n_hint + n_free + 1`` every stickiness cost, so for any plan

    ``cost = MIS * mismatches + K * lost claims + H * lost hints + moved free partitions``

orders plans exactly as levels 2-5 do. Level 1 is the load box of :mod:`.keep_flow` (same
argument, unchanged: the load vectors of complete plans form an M-convex set, the
load-optimal ones are the minimisers of ``F(l) = sum l (l - 1) / 2``, and every one of them is
within one, coordinatewise, of the plan without racks ``x``): per member an arc of capacity
``x - 1`` at cost 0 and unit arcs at ``BIG + W * (k - 1)`` for load ``k``, with ``W`` above
every ``cost`` and ``BIG`` above every other cost of any flow. So a cheapest complete flow
of the network below is a load-optimal plan of least ``cost``:

- partitions are aggregated into *classes* (topic group = subscriber set, preferred member,
  replica-rack class, kind): two partitions of a class are interchangeable for every term;
  the rack class is a partition's replica racks intersected with the component's member racks
  (a rack no member has changes no mismatch), or "none" for a partition without replica racks;
- a class whose preferred member does not mismatch it feeds the member from the source
  (keeping costs 0) and may be *released* into its pool ``(group, rack class)`` at its price;
  a class its member mismatches gets its own node (source -> node, node -> member at ``MIS``,
  node -> pool at its price);
- a pool sends to *hubs* ``(group, member rack)`` at ``MIS`` when that rack mismatches the
  pool's rack class (0 otherwise), and a hub to each of its members at 0.

Every plan is a flow of exactly its ``cost`` (route each partition kept by ``pref(q)`` through
its class, each other one through its pool and the hub of its new member), and every integral
flow is realised (:func:`_realise`) as a plan of exactly the flow's cost: releases and hub
deliveries are counts, and whichever partitions realise them cost the same, because an
optimal flow never sends a class's released partitions back to its own member through the
pool (keeping them directly would be cheaper by the price). So the realised plan is
lexicographically best among all load-optimal plans.

The flow starts from a zero-cost flow with no negative residual arc (every member keeps up to
``x - 1`` of its preferred, non-mismatched partitions), so :class:`~.flow.FlowNetwork`'s
successive shortest paths end in a cheapest complete flow. Network size: members + classes
that mismatch their member + pools + hubs nodes; one arc per class (three for a mismatched
one), a few per member, (rack classes x member racks) per topic group.

Realisation: a class releases evenly spaced partitions of its ascending list (spread over its
topics); a pool's partitions (ascending) are dealt round-robin over its hubs, and each hub's
over its members (ascending member index), each up to the count the flow fixed, so topics stay
spread. Everything is a function of dense indices, never of input order or hashing.

Bulk: no step takes one Python call per partition. The per-partition facts (rack class, kind,
one int class code) are filled by per-topic C-level ``map``/slice passes, each member's
classes are one ``Counter`` of codes, released classes are split by one ``compress`` per
class, and a deal hands each taker stride slices (one per distinct count); only tied
partitions are visited one at a time. ``tests/rack_flow_reference.py`` keeps the one-step
version of these steps, and the plans are checked equal bit for bit.
"""

from __future__ import annotations

import operator
from collections import Counter, deque
from collections.abc import Mapping
from itertools import compress, repeat
from operator import not_, setitem

# The module, not its ``twin`` (read at each call, so tests can switch it).
import kafka_sticky_plugin.core.implementation as implementation

from ..errors import InvariantViolation
from .claims import TIED, Claims, Planned
from .components import Component
from .flow import FlowNetwork
from .layout import Layout
from .rack_view import NO_RACK, RackView

__all__ = ["place_by_racks"]

CLAIM, HINT, FREE = 0, 1, 2
"""Kinds of preference, in decreasing price (see the module docstring)."""

ClassKey = tuple[int, int, int]
"""(topic group, rack class, kind) of one member's preferred partitions."""


def place_by_racks(
    layout: Layout, claims: Claims, comp: Component, plan: Mapping[int, Planned], view: RackView
) -> dict[int, list[int]]:
    """The lexicographically best load-optimal plan of the module docstring, given the
    component's load-optimal plan without racks ``plan`` (every member of ``comp`` a key).

    Steps: :class:`_Facts` (rack classes, topic groups, preferences), :func:`_build_network`,
    :func:`_solve`, :func:`_realise`. The compiled twin's plan when it gives one
    (:mod:`.implementation`: the same plan; ``twin/src/rack_flow.rs``).
    """
    twin = implementation.twin
    if twin is not None:
        placed = twin.place_by_racks(
            comp.members,
            comp.topics,
            layout.offsets,
            layout.counts,
            layout.subscriptions,
            claims.owner,
            claims.hints,
            claims.owned,
            plan,
            view.member_rack,
            view.rack_sets,
            view.partition_set,
        )
        if placed is not None:
            return dict(zip(comp.members, placed, strict=True))
    facts = _Facts(layout, claims, comp, plan, view)
    net, arcs = _build_network(facts, {m: len(plan[m]) for m in comp.members})
    flows = _solve(net, arcs)
    return _realise(facts, arcs, flows)


class _Facts:
    """Dense per-partition facts over the whole layout (meaningful on the component only):
    ``rack_class[q]``, ``kind[q]`` and ``code[q]``, the partition's class key (topic group,
    rack class, kind) as one int ordered as the tuple (:meth:`key`); per member its preferred
    partitions ``prefs[m]`` (ascending); ``class_racks[r]`` (``None``: no replica racks);
    ``group_members[g]`` (ascending); ``bucket[m]`` (member rack or :data:`NO_RACK`).

    Built in bulk: every per-partition list is filled by C-level ``map``/slice passes per
    topic; only tied partitions are looked at one at a time."""

    def __init__(
        self,
        layout: Layout,
        claims: Claims,
        comp: Component,
        plan: Mapping[int, Planned],
        view: RackView,
    ) -> None:
        self.members = comp.members
        self.bucket = {m: view.member_rack[m] for m in comp.members}
        total = layout.total
        self.rack_class = [0] * total
        self.code = [0] * total
        self.class_racks: list[frozenset[int] | None] = []
        self.group_members: list[list[int]] = []
        self.kind = [CLAIM] * total
        self.prefs: dict[int, list[int]] = {}
        self.counts = [0, 0, 0]  # per kind
        group_of = self._classify_partitions(layout, comp, view)
        self._prefer(layout, claims, comp, plan)
        self._encode(layout, comp, group_of)

    def _classify_partitions(
        self, layout: Layout, comp: Component, view: RackView
    ) -> dict[int, int]:
        """Rack classes (numbered none first, then by size and sorted rack indices, among the
        classes the component's partitions have) and topic groups (numbered in topic order);
        returns each topic's group."""
        comp_racks = frozenset(self.bucket.values()) - {NO_RACK}
        sets, of_q = view.rack_sets, view.partition_set
        used = {0}  # the class "no replica racks" is numbered even when unused
        for t in comp.topics:
            start = layout.offsets[t]
            used.update(of_q[start : start + layout.counts[t]])
        effective = {i: (sets[i] & comp_racks if i else None) for i in used}
        distinct = sorted(
            set(effective.values()), key=lambda r: (-1,) if r is None else (len(r), *sorted(r))
        )
        number = {r: i for i, r in enumerate(distinct)}
        self.class_racks = distinct
        class_of = [0] * len(sets)
        for i, eff in effective.items():
            class_of[i] = number[eff]
        subscribers: dict[int, list[int]] = {t: [] for t in comp.topics}
        for m in comp.members:
            for t in layout.subscriptions[m]:
                subscribers[t].append(m)
        group_index: dict[tuple[int, ...], int] = {}
        group_of: dict[int, int] = {}
        for t in comp.topics:
            key = tuple(subscribers[t])
            g = group_index.get(key)
            if g is None:
                g = group_index[key] = len(self.group_members)
                self.group_members.append(subscribers[t])
            group_of[t] = g
            start, n = layout.offsets[t], layout.counts[t]
            self.rack_class[start : start + n] = map(class_of.__getitem__, of_q[start : start + n])
        return group_of

    def _prefer(
        self, layout: Layout, claims: Claims, comp: Component, plan: Mapping[int, Planned]
    ) -> None:
        """Each partition's preferred member and kind: its validated owner (a claim), else the
        hinted claimant in the component of a tied partition (a hint), else its holder in
        ``plan`` (free)."""
        owner, hints, kind = claims.owner, claims.hints, self.kind
        in_comp = set(comp.members)
        negative = (0).__gt__
        hinted: dict[int, list[int]] = {}
        any_free = False
        for t in comp.topics:
            start, n = layout.offsets[t], layout.counts[t]
            window = owner[start : start + n]
            if min(window, default=0) >= 0:
                continue
            any_free = True
            qs = range(start, start + n)
            deque(
                map(setitem, repeat(kind), compress(qs, map(negative, window)), repeat(FREE)),
                maxlen=0,
            )
            if TIED in window:
                for q in compress(qs, map(TIED.__eq__, window)):
                    h = hints.get(q)
                    if h is not None and h in in_comp:
                        kind[q] = HINT
                        hinted.setdefault(h, []).append(q)
        n_hint = n_free = 0
        is_free = FREE.__eq__
        for m in comp.members:
            mine = list(claims.owned[m])
            if any_free:
                held = plan[m]
                free = list(compress(held, map(is_free, map(kind.__getitem__, held))))
                n_free += len(free)
                extra = hinted.get(m, [])
                n_hint += len(extra)
                if free or extra:
                    mine.extend(free)
                    mine.extend(extra)
                    mine.sort()
            self.counts[CLAIM] += len(claims.owned[m])
            self.prefs[m] = mine
        self.counts[HINT], self.counts[FREE] = n_hint, n_free

    def _encode(self, layout: Layout, comp: Component, group_of: dict[int, int]) -> None:
        """``code[q] = (group * rack classes + rack class) * 3 + kind``, per topic in C."""
        n_classes = len(self.class_racks)
        times3 = (3).__mul__
        for t in comp.topics:
            start, n = layout.offsets[t], layout.counts[t]
            row = map(
                operator.add,
                map(times3, self.rack_class[start : start + n]),
                self.kind[start : start + n],
            )
            base = group_of[t] * n_classes * 3
            self.code[start : start + n] = map(base.__add__, row) if base else row

    def key(self, code: int) -> ClassKey:
        """The (group, rack class, kind) of a class code."""
        rest, kind = divmod(code, 3)
        g, r = divmod(rest, len(self.class_racks))
        return g, r, kind

    def mismatch(self, member: int, rack_class: int) -> bool:
        """True when ``member`` taking a partition of ``rack_class`` is a cross-rack placement."""
        return _mismatch(self.bucket[member], self.class_racks[rack_class])

    def class_counts(self, m: int) -> dict[ClassKey, int]:
        """Member ``m``'s preferred partitions counted by (group, rack class, kind)."""
        counted = Counter(map(self.code.__getitem__, self.prefs[m]))
        return {self.key(c): n for c, n in counted.items()}


def _code(facts: _Facts, key: ClassKey) -> int:
    """The inverse of :meth:`_Facts.key`."""
    g, r, kind = key
    return (g * len(facts.class_racks) + r) * 3 + kind


def _mismatch(rack: int, racks: frozenset[int] | None) -> bool:
    return rack != NO_RACK and racks is not None and rack not in racks


class _Arcs:
    """Where :func:`_build_network` put things (arc ids) and the network's shape."""

    def __init__(self) -> None:
        self.keys: list[tuple[int, ClassKey]] = []  # (member, class key), in class order
        self.release: list[int] = []  # per class: its arc into its pool
        self.keep: list[int] = []  # per class: its class node's arc to the member, or -1
        self.pools: list[tuple[int, int]] = []  # (group, rack class), pool order
        self.pool_hubs: list[list[tuple[int, int]]] = []  # per pool: (hub, arc)
        self.hubs: list[tuple[int, int]] = []  # (group, bucket), hub order
        self.hub_members: list[list[tuple[int, int]]] = []  # per hub: (member, arc)
        self.warm = 0
        self.total = 0


def _prices(counts: list[int]) -> tuple[int, int, int]:
    """``(K, H, MIS)`` of the module docstring from the counts of each kind."""
    n_claim, n_hint, n_free = counts
    hint = n_free + 1
    claim = hint * n_hint + n_free + 1
    mis = claim * n_claim + hint * n_hint + n_free + 1
    return claim, hint, mis


def _build_network(facts: _Facts, load: dict[int, int]) -> tuple[FlowNetwork, _Arcs]:
    """The network of the module docstring, with its warm start. Nodes: 0 source, 1 sink,
    members, pools, hubs, then one node per class its member mismatches."""
    members = facts.members
    arcs = _Arcs()
    claim_price, hint_price, mis = _prices(facts.counts)
    price = (claim_price, hint_price, 1)
    per_member = {m: facts.class_counts(m) for m in members}
    pool_index: dict[tuple[int, int], int] = {}
    for m in members:
        for g, r, _ in per_member[m]:
            pool_index.setdefault((g, r), 0)
    arcs.pools = sorted(pool_index)
    pool_index = {key: i for i, key in enumerate(arcs.pools)}
    hub_index: dict[tuple[int, int], int] = {}
    for g, ms in enumerate(facts.group_members):
        for b in sorted({facts.bucket[m] for m in ms}):
            hub_index[(g, b)] = len(arcs.hubs)
            arcs.hubs.append((g, b))
    n_mismatched = sum(facts.mismatch(m, r) for m in members for (_, r, _) in per_member[m])
    member_node = {m: 2 + i for i, m in enumerate(members)}
    pool0 = 2 + len(members)
    hub0 = pool0 + len(arcs.pools)
    class0 = hub0 + len(arcs.hubs)
    net = FlowNetwork(class0 + n_mismatched)
    source = 0

    kept_free: dict[int, int] = dict.fromkeys(members, 0)  # preferred, not mismatched
    next_class = class0
    for m in members:
        node = member_node[m]
        for key in sorted(per_member[m]):
            g, r, kind = key
            size = per_member[m][key]
            pool = pool0 + pool_index[(g, r)]
            arcs.keys.append((m, key))
            if facts.mismatch(m, r):
                net.add_arc(source, next_class, size, 0)
                arcs.keep.append(net.add_arc(next_class, node, size, mis))
                arcs.release.append(net.add_arc(next_class, pool, size, price[kind]))
                next_class += 1
            else:
                kept_free[m] += size
                arcs.keep.append(-1)
                arcs.release.append(net.add_arc(node, pool, size, price[kind]))
    _add_load_box(net, arcs, facts, load, member_node, kept_free, mis)
    pool_size = [0] * len(arcs.pools)
    for m in members:
        for (g, r, _), size in per_member[m].items():
            pool_size[pool_index[(g, r)]] += size
    for i, (g, r) in enumerate(arcs.pools):
        row = []
        for b in sorted({facts.bucket[m] for m in facts.group_members[g]}):
            h = hub_index[(g, b)]
            cost = mis if _mismatch(b, facts.class_racks[r]) else 0
            row.append((h, net.add_arc(pool0 + i, hub0 + h, pool_size[i], cost)))
        arcs.pool_hubs.append(row)
    for h, (g, b) in enumerate(arcs.hubs):
        cap = sum(pool_size[i] for i, (g2, _) in enumerate(arcs.pools) if g2 == g)
        arcs.hub_members.append(
            [
                (m, net.add_arc(hub0 + h, member_node[m], cap, 0))
                for m in facts.group_members[g]
                if facts.bucket[m] == b
            ]
        )
    return net, arcs


def _add_load_box(
    net: FlowNetwork,
    arcs: _Arcs,
    facts: _Facts,
    load: dict[int, int],
    member_node: dict[int, int],
    kept_free: dict[int, int],
    mis: int,
) -> None:
    """Each member's arc from the source (its preferred partitions it does not mismatch) and
    its load box to the sink: ``x - 1`` at cost 0 (carrying the warm start), then unit arcs at
    ``BIG + W * (k - 1)`` for load ``k``."""
    source, sink = 0, 1
    claim_price, hint_price, _ = _prices(facts.counts)
    n_claim, n_hint, n_free = facts.counts
    total = n_claim + n_hint + n_free
    other = mis * total + claim_price * n_claim + hint_price * n_hint + n_free
    w_load = other + 1
    lo = {m: max(0, load[m] - 1) for m in facts.members}
    above = total - sum(lo.values())
    top = max(load.values(), default=0) + 1
    big = above * w_load * top + other + 1
    for m in facts.members:
        node = member_node[m]
        start = min(kept_free[m], lo[m])
        arcs.warm += start
        if kept_free[m]:
            net.add_arc(source, node, kept_free[m], 0, start)
        net.add_arc(node, sink, lo[m], 0, start)
        for k in range(lo[m] + 1, load[m] + 2):
            net.add_arc(node, sink, 1, big + w_load * (k - 1))
    arcs.total = total


class _Flows:
    """The solved counts: per class (class order) released and, for a class node, kept;
    per pool ``{hub: count}``; per hub ``{member: count}``."""

    def __init__(self, net: FlowNetwork, arcs: _Arcs) -> None:
        self.released = [net.flow(a) for a in arcs.release]
        self.to_hubs = [{h: net.flow(a) for h, a in row} for row in arcs.pool_hubs]
        self.to_members = [{m: net.flow(a) for m, a in row} for row in arcs.hub_members]


def _solve(net: FlowNetwork, arcs: _Arcs) -> _Flows:
    """Push the cheapest complete flow and read it."""
    if arcs.warm + net.push_min_cost(0, 1) != arcs.total:
        raise InvariantViolation("rack pass: the flow does not place every partition (engine bug)")
    return _Flows(net, arcs)


def _spread(qs: list[int], n: int) -> list[bool]:
    """Flags choosing ``n`` evenly spaced items of ``qs`` (``n <= len(qs)``)."""
    flags = [False] * len(qs)
    for j in range(n):
        flags[(2 * j + 1) * len(qs) // (2 * n)] = True
    return flags


def _deal(qs: list[int], wants: dict[int, int], out: dict[int, list[int]]) -> None:
    """Deal ``qs`` round-robin over the keys of ``wants`` (ascending) with a count left: the
    ``i``-th round gives one partition to each key still wanting more than ``i``.

    In bulk: between two consecutive distinct counts the set of takers is fixed, so that
    stretch of rounds is one block of ``qs`` and each taker's share is one stride slice of it
    (one C-level ``extend`` per taker and distinct count, never one step per partition)."""
    takers = [(k, n) for k, n in sorted(wants.items()) if n > 0]
    if sum(n for _, n in takers) != len(qs):
        raise InvariantViolation("rack pass: class counts do not add up (engine bug)")
    i = done = 0
    for level in sorted({n for _, n in takers}):
        active = [k for k, n in takers if n > done]
        width = len(active)
        block = qs[i : i + width * (level - done)]
        for j, k in enumerate(active):
            out[k].extend(block[j::width])
        i += len(block)
        done = level


def _realise(facts: _Facts, arcs: _Arcs, flows: _Flows) -> dict[int, list[int]]:
    """Turn the counts into partitions (see the module docstring); every count is met
    exactly, so the plan costs exactly what the flow does."""
    cuts: dict[int, dict[ClassKey, int]] = {}
    for (m, key), n in zip(arcs.keys, flows.released, strict=True):
        if n:
            cuts.setdefault(m, {})[key] = n
    out: dict[int, list[int]] = {m: [] for m in facts.members}
    pool_qs: dict[tuple[int, int], list[int]] = {key: [] for key in arcs.pools}
    code_at = facts.code.__getitem__
    for m in facts.members:
        qs = facts.prefs[m]
        cut = cuts.get(m)
        if not cut:
            out[m].extend(qs)
            continue
        cut_codes = {_code(facts, key): n for key, n in cut.items()}
        codes = list(map(code_at, qs))
        flags = list(map(cut_codes.__contains__, codes))
        out[m].extend(compress(qs, map(not_, flags)))
        by_code = {c: list(compress(qs, map(c.__eq__, codes))) for c in cut_codes}
        for key, n in cut.items():
            chosen = by_code[_code(facts, key)]
            picks = _spread(chosen, n)
            out[m].extend(compress(chosen, map(not_, picks)))
            pool_qs[(key[0], key[1])].extend(compress(chosen, picks))
    hub_qs: dict[int, list[int]] = {h: [] for h in range(len(arcs.hubs))}
    for i, pool in enumerate(arcs.pools):
        qs = pool_qs[pool]
        qs.sort()
        _deal(qs, flows.to_hubs[i], hub_qs)
    for h, qs in hub_qs.items():
        qs.sort()
        _deal(qs, flows.to_members[h], out)
    for m in facts.members:
        out[m].sort()
    return out
