"""The pure assignment engine: typed specs in, a plan out. No bytes, no clients, no I/O.

Public API (fixed):

- :class:`MemberSpec`
- :func:`sticky_assign` — the eager sticky plan (KIP-54 goals, KIP-341 generations).
- :func:`cooperative_assign` — one KIP-429 round: the sticky plan with every partition whose
  validated current owner is another member withheld.

Both return every input member id as a key, each list sorted by ``(topic, partition)``; the
result does not depend on the order of members or of their owned partitions.
"""

from __future__ import annotations

from .api import cooperative_assign, sticky_assign
from .spec import MemberSpec

__all__ = ["MemberSpec", "cooperative_assign", "sticky_assign"]
