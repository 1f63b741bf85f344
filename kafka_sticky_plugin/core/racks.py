"""Rack awareness (KIP-881): balance first, partitions on a rack holding a replica second,
stickiness third.

Vocabulary: a *placement* of partition ``q`` on member ``m`` is a **mismatch** (a cross-rack
placement) when ``m`` has a rack, ``q`` has replica racks, and ``m``'s rack is not among them.
Every other placement (no member rack, no partition racks, or a matching rack) costs nothing.

The pass takes the component's plan without racks (load-optimal, and the stickiest such plan)
and, when that plan has a mismatch, replaces it by the lexicographically best load-optimal
plan: fewest mismatches, then most valid claims kept, then most hinted tied partitions given
back, then fewest other partitions moved from where the plan without racks put them. One exact
min-cost flow does it for every kind of component (:mod:`.rack_flow`, where the order and its
proof live), so which member carries which of the load-optimal loads may change, to where the
racked partitions need them.

:func:`rack_pass_applies` says when any of this runs; when it does not, the plan is exactly
the plan without racks (already optimal: it has no mismatch and the most kept partitions).

Modules: :mod:`.rack_view` (the shared view, :func:`rack_pass_applies`), :mod:`.rack_flow`
(the pass).
"""

from __future__ import annotations

from collections.abc import Mapping

from .claims import Claims, Planned
from .components import Component
from .layout import Layout
from .rack_flow import place_by_racks
from .rack_view import RackView, build_rack_view, rack_pass_applies

__all__ = ["RackView", "build_rack_view", "improve_rack_locality", "rack_pass_applies"]


def improve_rack_locality(
    layout: Layout,
    claims: Claims,
    comp: Component,
    plan: Mapping[int, Planned],
    view: RackView,
) -> dict[int, list[int]]:
    """Return the best load-optimal plan of the component in the order of :mod:`.rack_flow`
    (``plan``: its load-optimal plan without racks)."""
    return place_by_racks(layout, claims, comp, plan, view)
