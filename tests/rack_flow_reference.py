"""The one-step reference of ``core/rack_flow.py`` (issue 28): the first exact rack pass's
per-partition steps (facts and realisation, one Python step per partition), kept as they
were committed, on the engine's own network and solver, so that the bulk steps can be
checked against them bit for bit (``tests/test_engine_rack_bulk.py``). The order, proof and
network are the engine module's."""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Mapping
from itertools import compress, repeat
from operator import not_

from kafka_sticky_plugin.core.claims import TIED, Claims, Planned
from kafka_sticky_plugin.core.components import Component
from kafka_sticky_plugin.core.layout import Layout
from kafka_sticky_plugin.core.rack_flow import (
    FREE,
    HINT,
    ClassKey,
    _Arcs,
    _build_network,
    _Facts,
    _Flows,
    _solve,
    _spread,
)
from kafka_sticky_plugin.core.rack_view import NO_RACK, RackView
from kafka_sticky_plugin.errors import InvariantViolation

__all__ = ["place_by_racks"]


def place_by_racks(
    layout: Layout, claims: Claims, comp: Component, plan: dict[int, list[int]], view: RackView
) -> dict[int, list[int]]:
    """The engine's ``place_by_racks`` with the one-step facts and realisation."""
    facts = _OneStepFacts(layout, claims, comp, plan, view)
    net, arcs = _build_network(facts, {m: len(plan[m]) for m in comp.members})
    flows = _solve(net, arcs)
    return _realise(facts, arcs, flows)


class _OneStepFacts(_Facts):
    """Dense per-partition facts over the whole layout (meaningful on the component only):
    ``rack_class[q]``, ``group[q]`` (topic group), ``kind[q]``; per member its preferred
    partitions ``prefs[m]`` (ascending); ``class_racks[r]`` (``None``: no replica racks);
    ``group_members[g]`` (ascending); ``bucket[m]`` (member rack or :data:`NO_RACK`)."""

    def _classify_partitions(
        self, layout: Layout, comp: Component, view: RackView
    ) -> dict[int, int]:
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
        self.group = [-1] * layout.total
        group_of: dict[int, int] = {}
        for t in comp.topics:
            key = tuple(subscribers[t])
            g = group_index.get(key)
            if g is None:
                g = group_index[key] = len(self.group_members)
                self.group_members.append(subscribers[t])
            group_of[t] = g
            start, n = layout.offsets[t], layout.counts[t]
            self.group[start : start + n] = repeat(g, n)
            self.rack_class[start : start + n] = map(
                class_of.__getitem__, map(get, range(start, start + n))
            )
        return group_of

    def _prefer(
        self, layout: Layout, claims: Claims, comp: Component, plan: Mapping[int, Planned]
    ) -> None:
        """Each partition's preferred member and kind: its validated owner (a claim), else the
        hinted claimant in the component of a tied partition (a hint), else its holder in
        ``plan`` (free)."""
        owner, hints, kind = claims.owner, claims.hints, self.kind
        in_comp = set(comp.members)
        self.prefs = {m: list(claims.owned[m]) for m in comp.members}
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

    def _encode(self, layout: Layout, comp: Component, group_of: dict[int, int]) -> None:
        """No class codes: the reference counts and cuts by tuples."""

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


def _deal(qs: list[int], wants: dict[int, int], out: dict[int, list[int]]) -> None:
    """Deal ``qs`` round-robin over the keys of ``wants`` (ascending) with a count left, one
    partition at a time."""
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


def _realise(facts: _OneStepFacts, arcs: _Arcs, flows: _Flows) -> dict[int, list[int]]:
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
