"""KIP-429 post-pass: turn the eager sticky plan into one cooperative round.

A partition is *withheld* from its planned member when its validated current owner is another
member (it must be revoked by that owner first and is assigned in a later round), or when its
ownership was tied at the same generation (every claimant must give it up). The withheld set is
computed from validated ownership (:mod:`.claims`), never from raw claims.
"""

from __future__ import annotations

from .claims import TIED, Claims

__all__ = ["withhold_transfers"]


def withhold_transfers(plan: dict[int, list[int]], claims: Claims) -> dict[int, list[int]]:
    """Return ``plan`` without the partitions that would change hands in this round."""
    owner = claims.owner
    out: dict[int, list[int]] = {}
    for m, qs in plan.items():
        out[m] = [q for q in qs if owner[q] == m or (owner[q] < 0 and owner[q] != TIED)]
    return out
