"""The rack pass for a heterogeneous component (different subscriptions): a min-cost flow
between partition classes and member groups (see :mod:`.racks` for the whole pass)."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import InvariantViolation
from .claims import Claims
from .components import Component
from .flow import FlowNetwork
from .layout import Layout
from .rack_view import NO_RACK, RackView, deal

__all__ = ["improve_heterogeneous"]


def improve_heterogeneous(
    layout: Layout, claims: Claims, comp: Component, plan: dict[int, list[int]], view: RackView
) -> dict[int, list[int]]:
    """Exact for any subscriptions: a transportation problem between partition *classes* and
    member *groups*, solved as a min-cost flow from the plan without racks.

    - A class is (topic, replica racks seen by this component): its partitions are
      interchangeable for every member. Racks no member of the component has are dropped;
      partitions without rack information form their own class per topic (never a mismatch).
    - A group is (subscription class, rack): its members may take the same partitions at the
      same cost. Members without a rack form their own group per subscription.
    - ``x[c][g]`` units of class ``c`` go to group ``g``, with ``sum_g x[c][g]`` the size of the
      class and ``sum_c x[c][g]`` the group's load in the plan without racks (so every member
      can keep its own load), and ``x[c][g] > 0`` only when ``g`` subscribes ``c``'s topic.

    The cost is lexicographic: mismatches first, then partitions that leave a validated owner
    holding them in the plan without racks, then partitions that leave their holder in that
    plan (each unit of ``x[c][g]`` beyond what ``g`` held of ``c`` is one move). The search
    starts from that plan with its mismatched placements taken out (a cheapest flow of its
    value: every remaining placement costs nothing) and adds them back along cheapest paths
    (:class:`FlowNetwork`), so the result is a cheapest flow: the fewest mismatches of all
    assignments with these loads and subscriptions, then the fewest owned partitions lost, then
    the fewest moves. A plan with no avoidable mismatch therefore comes back unchanged (any
    move would cost). :func:`_realise` turns the class counts back into partitions, moving
    exactly the partitions the flow counts as moved.

    Steps: :func:`_member_groups`, :func:`_partition_classes`, :func:`_held_counts`,
    :func:`_build_network`, :func:`_class_units`, :func:`_realise`.
    """
    members = comp.members
    groups = _member_groups(layout, comp, view)
    classes = _partition_classes(layout, comp, view)
    held = _held_counts(claims, comp, plan, groups, classes)
    load = {m: len(plan[m]) for m in members}
    net, arcs, placed = _build_network(groups, classes, held, load)
    units = _class_units(net, arcs, placed, sum(classes.size))
    return _realise(claims, members, plan, load, groups, classes, held, units)


@dataclass
class _Groups:
    """Member groups (subscription, rack), ordered by their first (smallest) member:
    ``members[g]`` ascending, ``rack[g]`` (:data:`NO_RACK` for members without one),
    ``subs[g]`` the subscribed topics; ``of[m]`` is member ``m``'s group."""

    members: list[list[int]]
    rack: list[int]
    subs: list[frozenset[int]]
    of: dict[int, int]


def _member_groups(layout: Layout, comp: Component, view: RackView) -> _Groups:
    """Group the members that may take the same partitions at the same cost."""
    member_rack = view.member_rack
    group_index: dict[tuple[frozenset[int], int], int] = {}
    out = _Groups([], [], [], {})
    for m in comp.members:
        key = (layout.subscriptions[m], member_rack[m])
        g = group_index.get(key)
        if g is None:
            g = group_index[key] = len(out.members)
            out.members.append([])
            out.rack.append(member_rack[m])
            out.subs.append(key[0])
        out.members[g].append(m)
        out.of[m] = g
    return out


@dataclass
class _Classes:
    """Partition classes (topic, replica racks of this component), ordered by (topic, first
    partition): ``racks[c]`` (``None``: no rack information), ``size[c]``,
    ``of_topic[t]`` a topic's classes, ``of[q]`` partition ``q``'s class."""

    racks: list[frozenset[int] | None]
    size: list[int]
    of_topic: dict[int, list[int]]
    of: dict[int, int]

    def mismatch(self, c: int, rack: int) -> bool:
        """True when a member of ``rack`` taking class ``c`` is a mismatch."""
        racks = self.racks[c]
        return rack != NO_RACK and racks is not None and rack not in racks


def _partition_classes(layout: Layout, comp: Component, view: RackView) -> _Classes:
    """Classify every partition of the component: racks no member of the component has are
    dropped, so partitions that differ only there are interchangeable."""
    member_rack = view.member_rack
    comp_racks = frozenset(member_rack[m] for m in comp.members) - {NO_RACK}
    get = view.partition_racks.get
    seen: dict[frozenset[int], frozenset[int]] = {}
    out = _Classes([], [], {}, {})
    class_racks, class_size, class_of = out.racks, out.size, out.of
    for t in comp.topics:
        local: dict[frozenset[int] | None, int] = {}
        start = layout.offsets[t]
        for q in range(start, start + layout.counts[t]):
            racks = get(q)
            eff: frozenset[int] | None = None
            if racks:
                eff = seen.get(racks)
                if eff is None:
                    eff = seen[racks] = racks & comp_racks
            c = local.get(eff)
            if c is None:
                c = local[eff] = len(class_racks)
                class_racks.append(eff)
                class_size.append(0)
                out.of_topic.setdefault(t, []).append(c)
            class_size[c] += 1
            class_of[q] = c
    return out


def _held_counts(
    claims: Claims,
    comp: Component,
    plan: dict[int, list[int]],
    groups: _Groups,
    classes: _Classes,
) -> list[dict[int, list[int]]]:
    """The plan without racks, aggregated: ``held[g][c] = [partitions of class c held by
    group g, of which validly owned by their holder]``."""
    owner = claims.owner
    class_of = classes.of
    held: list[dict[int, list[int]]] = [{} for _ in groups.members]
    for m in comp.members:
        per_class = held[groups.of[m]]
        for q in plan[m]:
            c = class_of[q]
            counts = per_class.get(c)
            if counts is None:
                counts = per_class[c] = [0, 0]
            counts[0] += 1
            if owner[q] == m:
                counts[1] += 1
    return held


def _build_network(
    groups: _Groups,
    classes: _Classes,
    held: list[dict[int, list[int]]],
    load: dict[int, int],
) -> tuple[FlowNetwork, list[list[tuple[int, int]]], int]:
    """The transportation network, started from the plan without racks minus its mismatched
    placements (a cheapest flow of its value: every remaining placement costs nothing).

    Nodes: 0 source, classes ``1 .. C``, groups ``C + 1 .. C + G``, sink ``C + G + 1``. Per
    (group, subscribed class) up to three arcs, priced lexicographically (mismatch, then an
    owned partition leaving its owner, then a move): stay with the owner, stay, arrive.
    Returns the network, per group its ``(class, arc)`` pairs, and the flow already placed.
    """
    class_size = classes.size
    n_classes, n_groups = len(class_size), len(groups.members)
    total = sum(class_size)
    moved_unit = 1
    owned_unit = total + 1  # > any number of moves
    mismatch_unit = owned_unit * total + total + 1  # > any trade of owned kept and moves
    source, sink = 0, n_classes + n_groups + 1
    net = FlowNetwork(n_classes + n_groups + 2)
    placed = [0] * n_classes  # flow kept from the plan (matching placements only)
    arcs: list[list[tuple[int, int]]] = [[] for _ in groups.members]  # per group: (class, arc)
    group_placed = [0] * n_groups
    for g in range(n_groups):
        node = 1 + n_classes + g
        per_class = held[g]
        rack = groups.rack[g]
        for t in sorted(groups.subs[g]):
            for c in classes.of_topic.get(t, ()):
                bad = classes.mismatch(c, rack)
                base = mismatch_unit if bad else 0
                n_held, n_owned = per_class.get(c, (0, 0))
                # (capacity, cost, initial flow): stay with the owner, stay, arrive
                for amount, cost, initial in (
                    (n_owned, base - owned_unit, 0 if bad else n_owned),
                    (n_held - n_owned, base, 0 if bad else n_held - n_owned),
                    (class_size[c], base + moved_unit, 0),
                ):
                    if amount:
                        arcs[g].append((c, net.add_arc(1 + c, node, amount, cost, initial)))
                if not bad:
                    placed[c] += n_held
                    group_placed[g] += n_held
    for c in range(n_classes):
        net.add_arc(source, 1 + c, class_size[c], 0, placed[c])
    for g in range(n_groups):
        demand = sum(load[m] for m in groups.members[g])
        net.add_arc(1 + n_classes + g, sink, demand, 0, group_placed[g])
    return net, arcs, sum(placed)


def _class_units(
    net: FlowNetwork, arcs: list[list[tuple[int, int]]], placed: int, total: int
) -> list[dict[int, int]]:
    """Push the rest of the flow (``placed`` of ``total`` partitions are placed already)
    along cheapest paths to the sink (the last node) and read the result: ``units[g][c]``
    partitions of class ``c`` go to group ``g``."""
    if placed + net.push_min_cost(0, net.n - 1) != total:
        raise InvariantViolation("rack pass: the flow does not place every partition (engine bug)")
    units: list[dict[int, int]] = [{} for _ in arcs]
    for g, group_arcs in enumerate(arcs):
        for c, a in group_arcs:
            f = net.flow(a)
            if f:
                units[g][c] = units[g].get(c, 0) + f
    return units


def _realise(
    claims: Claims,
    members: list[int],
    plan: dict[int, list[int]],
    load: dict[int, int],
    groups: _Groups,
    classes: _Classes,
    held: list[dict[int, list[int]]],
    units: list[dict[int, int]],
) -> dict[int, list[int]]:
    """Partitions for class counts ``units[g][c]`` (``held[g][c]`` starts with the count in
    the plan without racks), every member getting exactly ``load[m]`` partitions.

    - In each (group, class), the partitions held there by the plan without racks stay with
      their holder up to the new count (:func:`_keep_held`); the rest are released to their
      class's pool.
    - A released partition goes back to its validated owner when the owner's group receives its
      class and the owner has room; the others fill the receiving groups in ascending group
      order, by partition index, and are dealt round-robin over each group's members with
      room (ascending member index), so topics stay spread.

    The number of partitions that change member is exactly the number released.
    """
    group_of, group_members = groups.of, groups.members
    owner = claims.owner
    assigned, pool = _keep_held(owner, members, plan, groups, classes, units)
    need: list[dict[int, int]] = [{} for _ in group_members]
    for g, per_class in enumerate(units):
        for c, n in per_class.items():
            extra = n - held[g].get(c, (0,))[0]
            if extra > 0:
                need[g][c] = extra

    incoming: list[list[int]] = [[] for _ in group_members]
    for c in sorted(pool):
        rest = []
        for q in sorted(pool[c]):
            o = owner[q]
            g = group_of.get(o, -1) if o >= 0 else -1
            if g >= 0 and need[g].get(c, 0) > 0 and len(assigned[o]) < load[o]:
                assigned[o].append(q)
                need[g][c] -= 1
            else:
                rest.append(q)
        i = 0
        for g in range(len(group_members)):
            n = need[g].get(c, 0)
            incoming[g].extend(rest[i : i + n])
            i += n
        if i != len(rest):
            raise InvariantViolation("rack pass: class counts do not add up (engine bug)")
    for g, qs in enumerate(incoming):
        qs.sort()
        deal(qs, group_members[g], assigned, load)
    for m in members:
        if len(assigned[m]) != load[m]:
            raise InvariantViolation("rack pass: a member's load changed (engine bug)")
        assigned[m].sort()
    return assigned


def _keep_held(
    owner: list[int],
    members: list[int],
    plan: dict[int, list[int]],
    groups: _Groups,
    classes: _Classes,
    units: list[dict[int, int]],
) -> tuple[dict[int, list[int]], dict[int, list[int]]]:
    """Each holder keeps its partitions of the plan without racks while its group's count of
    their class (``units``) lasts: validly owned ones first, then the others, each in member
    and partition order. Returns ``(kept per member, released per class)``."""
    group_of, class_of = groups.of, classes.of
    assigned: dict[int, list[int]] = {m: [] for m in members}
    quota = [dict(per_class) for per_class in units]
    pool: dict[int, list[int]] = {}
    for owned_pass in (True, False):
        for m in members:
            left = quota[group_of[m]]
            mine = assigned[m]
            for q in plan[m]:
                if (owner[q] == m) is not owned_pass:
                    continue
                c = class_of[q]
                if left.get(c, 0) > 0:
                    left[c] -= 1
                    mine.append(q)
                else:
                    pool.setdefault(c, []).append(q)
    return assigned, pool
