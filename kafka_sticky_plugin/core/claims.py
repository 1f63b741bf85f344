"""Ownership claims: which member validly owns which partition before the plan is made.

The policy (the one the fixed implementations converged on, KIP-341 and KIP-792):

- a claim for an unknown topic, a topic the claimant does not subscribe to, a negative
  partition or a partition at or beyond the partition count is ignored;
- an uncontested claim is kept, whatever its generation;
- a contested claim goes to the single highest generation; lower claimants are remembered
  only as a *hint* of a previous owner (the highest-generation loser, smallest member index
  on ties);
- a tie at the highest generation invalidates the partition for every claimant (``TIED``):
  eager assigns it freely, cooperative gives it to nobody this round.

The result does not depend on the order of members or claims: members are visited in
``member_id`` order and every decision is a function of (generation, member index).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .layout import Layout

__all__ = ["TIED", "UNOWNED", "Claims", "resolve_claims"]

UNOWNED = -1
"""``owner[q]`` for a partition nobody validly claims."""

TIED = -2
"""``owner[q]`` for a partition claimed by several members at the same highest generation."""


@dataclass
class Claims:
    """Validated ownership.

    ``owner[q]`` is a member index, :data:`UNOWNED` or :data:`TIED`; ``hints`` maps a partition
    to the member index of its best losing claimant; ``owned[m]`` lists the partitions member
    ``m`` validly owns, ascending.
    """

    owner: list[int]
    hints: dict[int, int] = field(default_factory=dict)
    owned: list[list[int]] = field(default_factory=list)


def resolve_claims(layout: Layout) -> Claims:
    """Apply the claims policy to every member's ``owned`` list."""
    owner = [UNOWNED] * layout.total
    tie_gen: dict[int, int] = {}
    tie_members: dict[int, list[int]] = {}
    hints: dict[int, tuple[int, int]] = {}  # q -> (generation, member) of the best loser
    gens = [spec.generation for spec in layout.specs]
    topic_index = layout.topic_index
    offsets = layout.offsets
    counts = layout.counts

    def lose(q: int, m: int) -> None:
        g = gens[m]
        best = hints.get(q)
        if best is None or g > best[0] or (g == best[0] and m < best[1]):
            hints[q] = (g, m)

    for m, spec in enumerate(layout.specs):
        subs = layout.subscriptions[m]
        g = gens[m]
        for topic, partition in spec.owned:
            t = topic_index.get(topic)
            if t is None or t not in subs or partition < 0 or partition >= counts[t]:
                continue
            q = offsets[t] + partition
            current = owner[q]
            if current == UNOWNED:
                owner[q] = m
                continue
            if current == TIED:
                tg = tie_gen[q]
                if g > tg:
                    owner[q] = m
                    del tie_gen[q]
                    for loser in tie_members.pop(q):
                        lose(q, loser)
                elif g == tg:
                    tie_members[q].append(m)
                else:
                    lose(q, m)
                continue
            held_gen = gens[current]
            if g > held_gen:
                lose(q, current)
                owner[q] = m
            elif g == held_gen:
                owner[q] = TIED
                tie_gen[q] = g
                tie_members[q] = [current, m]
            else:
                lose(q, m)

    owned: list[list[int]] = [[] for _ in layout.specs]
    for q, m in enumerate(owner):
        if m >= 0:
            owned[m].append(q)
    # a loser of a partition later tied above it is still only a hint; a hint that names the
    # final owner carries no information.
    final_hints = {q: m for q, (_, m) in hints.items() if owner[q] != m}
    return Claims(owner=owner, hints=final_hints, owned=owned)
