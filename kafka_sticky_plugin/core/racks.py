"""Rack awareness (KIP-881): after balance, prefer giving a member partitions with a replica in
its rack; stickiness comes third.

Vocabulary: a *placement* of partition ``q`` on member ``m`` is a **mismatch** when ``m`` has a
rack, ``q`` has replica racks, and ``m``'s rack is not among them. Every other placement (no
member rack, no partition racks, or a matching rack) costs nothing.

The rack pass never unbalances the plan: it takes the plan made without racks (whose loads
are optimal) and redistributes partitions among members of one component, to minimise
mismatches, then to keep owned partitions, then to move as little as possible.

- Homogeneous components (every member may take every partition) are solved exactly at the
  level of *buckets* (one bucket per member rack, plus one for members without a rack): a
  maximum flow of racked partitions into buckets that do not mismatch them, by augmenting
  paths over the few buckets; owned partitions start in their owner's bucket so that the
  flow only moves them to make room for a match. Within a bucket, members keep their own
  partitions first. The multiset of loads is kept (``base`` or ``base + 1``); which members
  get the extra partitions may change, to where racked partitions need them.
- Heterogeneous components keep every member's exact load and are solved exactly as well: a
  transportation problem between partition *classes* (topic, replica racks) and member
  *groups* (subscription, rack), solved as a min-cost flow (:mod:`.flow`) that starts from
  the plan without racks with its mismatched placements taken out and puts them back along
  cheapest paths. The cost is lexicographic (mismatches, then partitions taken from their
  validated owner, then partitions moved), so the result has the fewest mismatches of every
  assignment with these loads and subscriptions, and a plan with none avoidable comes back
  unchanged. Cost: a few shortest-path phases over (classes + groups) nodes and (classes x
  subscribing groups) arcs, plus linear passes over the partitions.

:func:`rack_pass_applies` says when any of this runs; when it does not, the plan is exactly
the plan without racks.

Modules: :mod:`.rack_view` (the shared view, :func:`rack_pass_applies`), :mod:`.racks_equal`
(homogeneous components), :mod:`.racks_different` (heterogeneous components).
"""

from __future__ import annotations

from .claims import Claims
from .components import Component
from .layout import Layout
from .rack_view import RackView, build_rack_view, rack_pass_applies
from .racks_different import improve_heterogeneous
from .racks_equal import improve_homogeneous

__all__ = ["RackView", "build_rack_view", "improve_rack_locality", "rack_pass_applies"]


def improve_rack_locality(
    layout: Layout,
    claims: Claims,
    comp: Component,
    plan: dict[int, list[int]],
    view: RackView,
) -> dict[int, list[int]]:
    """Return a plan with fewer (or equal) mismatches and the same multiset of loads (the same
    load per member when the component is heterogeneous)."""
    if comp.homogeneous:
        return improve_homogeneous(claims, comp, plan, view)
    return improve_heterogeneous(layout, claims, comp, plan, view)
