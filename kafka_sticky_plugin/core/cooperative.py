"""KIP-429 post-pass: turn the eager sticky plan into one cooperative round.

A partition is *withheld* from its planned member when its validated current owner is another
member (it must be revoked by that owner first and is assigned in a later round), or when its
ownership was tied at the same generation (every claimant must give it up). The withheld set is
computed from validated ownership (:mod:`.claims`), never from raw claims.
"""

from __future__ import annotations

from collections.abc import Mapping

from .claims import UNOWNED, Claims
from .quota_builder import DensePart

__all__ = ["withhold_transfers"]


def withhold_transfers(plan: Mapping[int, DensePart], claims: Claims) -> dict[int, DensePart]:
    """Return ``plan`` without the partitions that would change hands in this round.

    A member whose planned partitions are all its own or unowned keeps its list as is (one
    C-level look-up pass); only the others are filtered partition by partition.
    """
    owner = claims.owner
    if owner.count(UNOWNED) == len(owner):
        return dict(plan)  # nobody owns anything: nothing changes hands
    at = owner.__getitem__
    out: dict[int, DensePart] = {}
    for m, qs in plan.items():
        held = list(map(at, qs))
        if held.count(m) + held.count(UNOWNED) == len(qs):
            out[m] = qs
        else:
            out[m] = [q for q, o in zip(qs, held, strict=True) if o in (m, UNOWNED)]
    return out
