"""KIP-429 post-pass: turn the eager sticky plan into one cooperative round.

A partition is *withheld* from its planned member when its validated current owner is another
member (it must be revoked by that owner first and is assigned in a later round), or when its
ownership was tied at the same generation (every claimant must give it up). The withheld set is
computed from validated ownership (:mod:`.claims`), never from raw claims.
"""

from __future__ import annotations

from .claims import UNOWNED, Claims

__all__ = ["withhold_transfers"]


def withhold_transfers(plan: dict[int, list[int]], claims: Claims) -> dict[int, list[int]]:
    """Return ``plan`` without the partitions that would change hands in this round.

    A member whose planned partitions are all its own or unowned keeps its list as is (one
    C-level look-up pass); only the others are filtered partition by partition.
    """
    owner = claims.owner
    at = owner.__getitem__
    out: dict[int, list[int]] = {}
    for m, qs in plan.items():
        held = list(map(at, qs))
        if held.count(m) + held.count(UNOWNED) == len(qs):
            out[m] = qs
        else:
            out[m] = [q for q, o in zip(qs, held, strict=True) if o in (m, UNOWNED)]
    return out
