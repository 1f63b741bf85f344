"""The one-step reference of ``core/rack_flow.py`` (issue 28): the first exact rack pass, one
Python step per partition, kept as it was committed (only its imports and its read of the
dense rack view adapted) so that the bulk pass can be checked against it bit for bit
(``tests/test_engine_rack_bulk.py``). The order, proof and network are the engine module's."""

from __future__ import annotations

from collections import Counter, deque
from itertools import compress, repeat
from operator import not_

from kafka_sticky_plugin.errors import InvariantViolation
from kafka_sticky_plugin.core.claims import TIED, Claims
from kafka_sticky_plugin.core.components import Component
from kafka_sticky_plugin.core.flow import FlowNetwork
from kafka_sticky_plugin.core.layout import Layout
from kafka_sticky_plugin.core.rack_view import NO_RACK, RackView

__all__ = ["place_by_racks"]  # the reference: same name, same signature

CLAIM, HINT, FREE = 0, 1, 2
"""Kinds of preference, in decreasing price (see the module docstring)."""

ClassKey = tuple[int, int, int]
"""(topic group, rack class, kind) of one member's preferred partitions."""


def place_by_racks(
    layout: Layout, claims: Claims, comp: Component, plan: dict[int, list[int]], view: RackView
) -> dict[int, list[int]]:
    """The lexicographically best load-optimal plan of the module docstring, given the
    component's load-optimal plan without racks ``plan`` (every member of ``comp`` a key).

    Steps: :class:`_Facts` (rack classes, topic groups, preferences), :func:`_build_network`,
    :func:`_solve`, :func:`_realise`.
    """
    facts = _Facts(layout, claims, comp, plan, view)
    net, arcs = _build_network(facts, {m: len(plan[m]) for m in comp.members})
    flows = _solve(net, arcs)
    return _realise(facts, arcs, flows)


class _Facts:
    """Dense per-partition facts over the whole layout (meaningful on the component only):
    ``rack_class[q]``, ``group[q]`` (topic group), ``kind[q]``; per member its preferred
    partitions ``prefs[m]`` (ascending); ``class_racks[r]`` (``None``: no replica racks);
    ``group_members[g]`` (ascending); ``bucket[m]`` (member rack or :data:`NO_RACK`)."""

    def __init__(
        self,
        layout: Layout,
        claims: Claims,
        comp: Component,
        plan: dict[int, list[int]],
        view: RackView,
    ) -> None:
        self.members = comp.members
        self.bucket = {m: view.member_rack[m] for m in comp.members}
        total = layout.total
        self.rack_class = [0] * total
        self.group = [-1] * total
        self.class_racks: list[frozenset[int] | None] = []
        self.group_members: list[list[int]] = []
        self._classify_partitions(layout, comp, view)
        self.kind = [CLAIM] * total
        self.prefs: dict[int, list[int]] = {m: list(claims.owned[m]) for m in comp.members}
        self.counts = [0, 0, 0]  # per kind
        self._prefer(layout, claims, comp, plan)

    def _classify_partitions(self, layout: Layout, comp: Component, view: RackView) -> None:
        """Rack classes (numbered none first, then by sorted rack indices) and topic groups
        (numbered in topic order)."""
        comp_racks = frozenset(self.bucket.values()) - {NO_RACK}
        sets, of_q = view.rack_sets, view.partition_set

        def get(q: int) -> frozenset[int] | None:
            return sets[of_q[q]] or None

        effective: dict[frozenset[int] | None, frozenset[int] | None] = {None: None}
        for t in comp.topics:
            start = layout.offsets[t]
            for racks in set(map(get, range(start, start + layout.counts[t]))):
                if racks not in effective:
                    effective[racks] = racks & comp_racks  # type: ignore[operator]
        distinct = sorted(
            set(effective.values()), key=lambda r: (-1,) if r is None else (len(r), *sorted(r))
        )
        number = {r: i for i, r in enumerate(distinct)}
        self.class_racks = distinct
        class_of = {racks: number[eff] for racks, eff in effective.items()}
        subscribers: dict[int, list[int]] = {t: [] for t in comp.topics}
        for m in comp.members:
            for t in layout.subscriptions[m]:
                subscribers[t].append(m)
        group_index: dict[tuple[int, ...], int] = {}
        for t in comp.topics:
            key = tuple(subscribers[t])
            g = group_index.get(key)
            if g is None:
                g = group_index[key] = len(self.group_members)
                self.group_members.append(subscribers[t])
            start, n = layout.offsets[t], layout.counts[t]
            self.group[start : start + n] = repeat(g, n)
            self.rack_class[start : start + n] = map(
                class_of.__getitem__, map(get, range(start, start + n))
            )

    def _prefer(
        self, layout: Layout, claims: Claims, comp: Component, plan: dict[int, list[int]]
    ) -> None:
        """Each partition's preferred member and kind: its validated owner (a claim), else the
        hinted claimant in the component of a tied partition (a hint), else its holder in
        ``plan`` (free)."""
        owner, hints, kind = claims.owner, claims.hints, self.kind
        in_comp = set(comp.members)
        holder: list[int] | None = None
        extra: dict[int, list[int]] = {}
        for t in comp.topics:
            start = layout.offsets[t]
            window = owner[start : start + layout.counts[t]]
            if min(window, default=0) >= 0:
                continue
            if holder is None:
                holder = [-1] * layout.total
                for m in comp.members:
                    deque(map(holder.__setitem__, plan[m], repeat(m)), maxlen=0)
            for i, o in enumerate(window):
                if o >= 0:
                    continue
                q = start + i
                h = hints.get(q) if o == TIED else None
                if h is not None and h in in_comp:
                    kind[q] = HINT
                    extra.setdefault(h, []).append(q)
                else:
                    kind[q] = FREE
                    extra.setdefault(holder[q], []).append(q)
        for m, qs in extra.items():
            mine = self.prefs[m]
            mine.extend(qs)
            mine.sort()
        for m in comp.members:
            for k in map(kind.__getitem__, self.prefs[m]):
                self.counts[k] += 1

    def mismatch(self, member: int, rack_class: int) -> bool:
        """True when ``member`` taking a partition of ``rack_class`` is a cross-rack placement."""
        return _mismatch(self.bucket[member], self.class_racks[rack_class])

    def class_counts(self, m: int) -> dict[ClassKey, int]:
        """Member ``m``'s preferred partitions counted by (group, rack class, kind)."""
        qs = self.prefs[m]
        return dict(
            Counter(
                zip(
                    map(self.group.__getitem__, qs),
                    map(self.rack_class.__getitem__, qs),
                    map(self.kind.__getitem__, qs),
                    strict=True,
                )
            )
        )


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
    """Deal ``qs`` round-robin over the keys of ``wants`` (ascending) with a count left."""
    takers = [(k, n) for k, n in sorted(wants.items()) if n > 0]
    i = 0
    while takers:
        nxt = []
        for k, n in takers:
            out[k].append(qs[i])
            i += 1
            if n > 1:
                nxt.append((k, n - 1))
        takers = nxt
    if i != len(qs):
        raise InvariantViolation("rack pass: class counts do not add up (engine bug)")


def _realise(facts: _Facts, arcs: _Arcs, flows: _Flows) -> dict[int, list[int]]:
    """Turn the counts into partitions (see the module docstring); every count is met
    exactly, so the plan costs exactly what the flow does."""
    cuts: dict[int, dict[ClassKey, int]] = {}
    for (m, key), n in zip(arcs.keys, flows.released, strict=True):
        if n:
            cuts.setdefault(m, {})[key] = n
    out: dict[int, list[int]] = {m: [] for m in facts.members}
    pool_qs: dict[tuple[int, int], list[int]] = {key: [] for key in arcs.pools}
    group_at, class_at, kind_at = (
        facts.group.__getitem__,
        facts.rack_class.__getitem__,
        facts.kind.__getitem__,
    )
    for m in facts.members:
        qs = facts.prefs[m]
        cut = cuts.get(m)
        if not cut:
            out[m].extend(qs)
            continue
        keys = list(zip(map(group_at, qs), map(class_at, qs), map(kind_at, qs), strict=True))
        flags = list(map(cut.__contains__, keys))
        out[m].extend(compress(qs, map(not_, flags)))
        by_key: dict[ClassKey, list[int]] = {}
        for q, key in compress(zip(qs, keys, strict=True), flags):
            by_key.setdefault(key, []).append(q)
        for key, n in cut.items():
            chosen = by_key[key]
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
