"""The engine's entry points: a dispatcher over components and builders.

``sticky_assign`` resolves claims (:mod:`.claims`), splits the group into independent
components (:mod:`.components`), plans each with the quota builder when its subscriptions are
all equal and with the balancing builder otherwise (then made maximally sticky among
load-optimal plans by :mod:`.keep_flow`), and converts the dense plan back to
``(topic, partition)`` tuples. ``cooperative_assign`` applies the KIP-429 post-pass
(:mod:`.cooperative`) to the same plan.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .balance_builder import build_balanced_plan
from .claims import Claims, resolve_claims
from .components import split_components
from .cooperative import withhold_transfers
from .gc_pause import cyclic_gc_paused
from .keep_flow import maximise_kept
from .layout import Layout, build_layout
from .quota_builder import DensePart, build_quota_plan, fresh_quota_ranges
from .racks import build_rack_view, improve_rack_locality, rack_pass_applies
from .spec import MemberSpec, TopicPartitionTuple

__all__ = ["cooperative_assign", "plan_dense", "sticky_assign"]

Plan = dict[str, list[TopicPartitionTuple]]
PartitionRacks = Mapping[tuple[str, int], Iterable[str]]


def plan_dense(
    partitions_per_topic: Mapping[str, int],
    members: Iterable[MemberSpec],
    partition_racks: PartitionRacks | None = None,
) -> tuple[Layout, Claims, dict[int, list[int]]]:
    """Plan on dense indices: returns the layout, the validated claims and the eager plan
    ``{member index: ascending global partition indices}`` (every member index present)."""
    layout, claims, plan = _plan(partitions_per_topic, members, partition_racks)
    return layout, claims, {m: sorted(qs) for m, qs in plan.items()}


def _plan(
    partitions_per_topic: Mapping[str, int],
    members: Iterable[MemberSpec],
    partition_racks: PartitionRacks | None,
) -> tuple[Layout, Claims, dict[int, DensePart]]:
    """:func:`plan_dense`'s plan, where a member of a fresh equal-subscription component may
    hold a ``range`` (:func:`.quota_builder.fresh_quota_ranges`) instead of a list."""
    layout = build_layout(partitions_per_topic, members)
    claims = resolve_claims(layout)
    plan: dict[int, DensePart] = {m: [] for m in range(len(layout.member_ids))}
    view = build_rack_view(layout, partition_racks) if partition_racks else None
    for comp in split_components(layout):
        if comp.homogeneous:
            fresh = fresh_quota_ranges(layout, claims, comp) if view is None else None
            if fresh is not None:
                plan.update(fresh)
                continue
            part = build_quota_plan(layout, claims, comp)
        else:
            part = maximise_kept(layout, claims, comp, build_balanced_plan(layout, claims, comp))
        if view is not None and rack_pass_applies(view, comp, part):
            part = improve_rack_locality(layout, claims, comp, part, view)
        plan.update(part)
    return layout, claims, plan


def _to_tuples(layout: Layout, plan: Mapping[int, DensePart]) -> Plan:
    tuples = layout.partition_tuples()
    at = tuples.__getitem__
    out: Plan = {}
    for m, member_id in enumerate(layout.member_ids):
        qs = plan[m]
        if isinstance(qs, range):
            # ascending by construction: one C-level slice of the shared tuples
            out[member_id] = tuples[qs.start : qs.stop : qs.step]
        else:
            qs.sort()
            out[member_id] = list(map(at, qs))
    return out


def sticky_assign(
    partitions_per_topic: Mapping[str, int],
    members: Iterable[MemberSpec],
    *,
    partition_racks: PartitionRacks | None = None,
) -> Plan:
    """The eager sticky plan (KIP-54 goals, KIP-341 claims, KIP-881 racks).

    Every input member id is a key; each list is sorted by ``(topic, partition)``; every
    partition of a subscribed known topic is assigned to exactly one subscriber.
    ``partition_racks`` maps ``(topic, partition)`` to the racks holding a replica; with it,
    members with a rack get as many partitions of their rack as balance allows (balance
    first, racks second, stickiness third). Without rack information on either side the plan
    is exactly the plan without racks.
    """
    with cyclic_gc_paused():
        return _sticky_tuples(partitions_per_topic, members, partition_racks)


def cooperative_assign(
    partitions_per_topic: Mapping[str, int],
    members: Iterable[MemberSpec],
    *,
    partition_racks: PartitionRacks | None = None,
) -> Plan:
    """One KIP-429 round: the sticky plan minus every partition whose validated current owner
    is another member (and every partition whose ownership is tied)."""
    with cyclic_gc_paused():
        return _cooperative_tuples(partitions_per_topic, members, partition_racks)


# The two bodies run as their own calls so that the layout, claims and dense plan are freed
# when they return, before the collector comes back (see gc_pause's docstring).
def _sticky_tuples(
    partitions_per_topic: Mapping[str, int],
    members: Iterable[MemberSpec],
    partition_racks: PartitionRacks | None,
) -> Plan:
    layout, _, plan = _plan(partitions_per_topic, members, partition_racks)
    return _to_tuples(layout, plan)


def _cooperative_tuples(
    partitions_per_topic: Mapping[str, int],
    members: Iterable[MemberSpec],
    partition_racks: PartitionRacks | None,
) -> Plan:
    layout, claims, plan = _plan(partitions_per_topic, members, partition_racks)
    return _to_tuples(layout, withhold_transfers(plan, claims))
