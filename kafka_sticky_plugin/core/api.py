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

import kafka_sticky_plugin.core.implementation as implementation

from .balance_builder import build_balanced_plan, topic_subscribers
from .claims import Claims, Planned, resolve_claims
from .components import Component, split_components
from .cooperative import withhold_transfers
from .gc_pause import cyclic_gc_paused
from .keep_flow import maximise_kept
from .layout import Layout, build_layout
from .quota_builder import DensePart, build_quota_plan, fresh_quota_ranges
from .rack_view import RackView
from .racks import build_rack_view, improve_rack_locality, rack_pass_applies
from .spec import MemberSpec, TopicPartitionTuple

__all__ = [
    "DensePlan",
    "cooperative_assign",
    "make_dense_plan",
    "plan_component",
    "plan_dense",
    "sticky_assign",
]

Plan = dict[str, list[TopicPartitionTuple]]
PartitionRacks = Mapping[tuple[str, int], Iterable[str]]


def plan_dense(
    partitions_per_topic: Mapping[str, int],
    members: Iterable[MemberSpec],
    partition_racks: PartitionRacks | None = None,
) -> tuple[Layout, Claims, dict[int, list[int]]]:
    """Plan on dense indices: returns the layout, the validated claims and the eager plan
    ``{member index: ascending global partition indices}`` (every member index present)."""
    layout, claims, plan, _ = _plan(partitions_per_topic, members, partition_racks)
    return layout, claims, {m: sorted(qs) for m, qs in plan.items()}


def _plan(
    partitions_per_topic: Mapping[str, int],
    members: Iterable[MemberSpec],
    partition_racks: PartitionRacks | None,
) -> tuple[Layout, Claims, dict[int, DensePart], RackView | None]:
    """:func:`plan_dense`'s plan, where a member of a fresh equal-subscription component may
    hold a ``range`` (:func:`.quota_builder.fresh_quota_ranges`) instead of a list, and the
    rack view the rack pass read (``None`` when it had none to read)."""
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
            part = plan_component(layout, claims, comp)
        if view is not None and rack_pass_applies(view, comp, part):
            part = improve_rack_locality(layout, claims, comp, part, view)
        plan.update(part)
    return layout, claims, plan, view


def plan_component(layout: Layout, claims: Claims, comp: Component) -> Mapping[int, Planned]:
    """A heterogeneous component's plan without racks: the balancing builder's load-optimal
    plan (:func:`.balance_builder.build_balanced_plan`), then the one of its load vector
    keeping the most claims (:func:`.keep_flow.maximise_kept`). The compiled twin's plan when
    it gives one (:mod:`.implementation`: both steps on one read of the component, the same
    plan)."""
    twin = implementation.twin
    if twin is not None:
        planned = twin.plan_component(
            comp.members,
            comp.topics,
            layout.offsets,
            layout.counts,
            layout.subscriptions,
            claims.owner,
            claims.owned,
            claims.hints,
        )
        if planned is not None:
            return implementation.component_plan(comp.members, planned, claims.owned)
    subscribers = topic_subscribers(layout.subscriptions, comp)  # shared by both, only read
    balanced = build_balanced_plan(layout, claims, comp, subscribers)
    return maximise_kept(layout, claims, comp, balanced, subscribers)


def _to_tuples(layout: Layout, plan: Mapping[int, DensePart]) -> Plan:
    tuples = layout.partition_tuples()
    return {
        member_id: _member_tuples(tuples, plan[m]) for m, member_id in enumerate(layout.member_ids)
    }


def _member_tuples(tuples: list[TopicPartitionTuple], qs: DensePart) -> list[TopicPartitionTuple]:
    """One member's planned partitions (``qs``, ascending) as sorted ``(topic, partition)``
    tuples; ``tuples`` is :meth:`.Layout.partition_tuples`."""
    if isinstance(qs, range):
        # ascending by construction: one C-level slice of the shared tuples
        return tuples[qs.start : qs.stop : qs.step]
    return list(map(tuples.__getitem__, qs))


class DensePlan:
    """One assignment's plan on dense indices, for a caller that converts members one by one
    (the leader's bytes path): ``layout.member_ids[m]`` gets :meth:`partitions` ``(m)``, the
    same list :func:`sticky_assign` / :func:`cooperative_assign` give that member.

    :meth:`keeps_claims` lets the caller skip the conversion of a member whose plan is
    exactly its validated claims (most members of a rebalance). ``racks`` is the rack view
    the engine read (:func:`.rack_view.build_rack_view`), or ``None`` when it built none (no
    replica racks given, no member rack, or every partition's replica racks name every
    member's rack). Every member's list in ``plan`` is sorted here, once, in place.
    """

    __slots__ = ("_claims", "_plan", "_tuples", "layout", "racks")

    def __init__(
        self,
        layout: Layout,
        claims: Claims,
        plan: Mapping[int, DensePart],
        racks: RackView | None = None,
    ) -> None:
        # a member planned exactly its claims holds its claims' own array, and a range is
        # ascending: both are sorted already
        for qs in plan.values():
            if isinstance(qs, list):
                qs.sort()
        self.layout = layout
        self._claims = claims
        self._plan = plan
        self.racks = racks
        self._tuples: list[TopicPartitionTuple] | None = None

    def keeps_claims(self, m: int) -> bool:
        """True when member ``m`` is planned exactly its validated claims (the partitions of
        ``layout.specs[m].owned`` that :mod:`.claims` kept for it), no more, no fewer."""
        owned = self._claims.owned[m]
        qs = self._plan[m]
        if len(qs) != len(owned):
            return False
        if isinstance(qs, range):
            return not owned  # a range comes from a fresh component: nothing was owned
        return qs is owned or list(qs) == owned.tolist()

    @property
    def claims(self) -> Claims:
        """The validated claims the plan was made from (read-only)."""
        return self._claims

    def valid_claims(self, m: int) -> int:
        """How many of member ``m``'s claims were validated for it."""
        return len(self._claims.owned[m])

    def indices(self, m: int) -> DensePart:
        """Member ``m``'s planned global partition indices, ascending (the layout's
        ``(topic, partition)`` order), read-only: a list, its claims' own ``array("i")``
        (:data:`.claims.Planned`) or a ``range``; :meth:`partitions` ``(m)`` is their
        tuples."""
        return self._plan[m]

    def partitions(self, m: int) -> list[TopicPartitionTuple]:
        """Member ``m``'s planned partitions, sorted ``(topic, partition)`` tuples."""
        if self._tuples is None:
            self._tuples = self.layout.partition_tuples()
        return _member_tuples(self._tuples, self._plan[m])

    def all_partitions(self) -> Plan:
        """``{member_id: partitions(m)}`` for every member, in member order."""
        return _to_tuples(self.layout, self._plan)


def make_dense_plan(
    partitions_per_topic: Mapping[str, int],
    members: Iterable[MemberSpec],
    *,
    cooperative: bool = False,
    partition_racks: PartitionRacks | None = None,
) -> DensePlan:
    """:func:`sticky_assign`'s plan (``cooperative``: :func:`cooperative_assign`'s, the
    sticky plan with the transfers withheld) as a :class:`DensePlan` (the caller pauses the
    collector, as the leader does)."""
    layout, claims, plan, racks = _plan(partitions_per_topic, members, partition_racks)
    return DensePlan(
        layout, claims, withhold_transfers(plan, claims) if cooperative else plan, racks
    )


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
        # One expression: the dense plan is freed before the collector comes back (see
        # gc_pause's docstring).
        return make_dense_plan(
            partitions_per_topic, members, partition_racks=partition_racks
        ).all_partitions()


def cooperative_assign(
    partitions_per_topic: Mapping[str, int],
    members: Iterable[MemberSpec],
    *,
    partition_racks: PartitionRacks | None = None,
) -> Plan:
    """One KIP-429 round: the sticky plan minus every partition whose validated current owner
    is another member (and every partition whose ownership is tied)."""
    with cyclic_gc_paused():
        return make_dense_plan(
            partitions_per_topic, members, cooperative=True, partition_racks=partition_racks
        ).all_partitions()
