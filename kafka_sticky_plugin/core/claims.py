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

import operator
from collections import deque
from dataclasses import dataclass, field
from itertools import chain, repeat

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
    """Apply the claims policy to every member's ``owned`` list.

    Speed: a leader may read a million claims. A member's claims become global indices in a
    few C-level passes over its canonical ``owned`` tuple when they are all valid, as they
    are from a healthy member; only a member with an invalid claim is filtered one claim at
    a time. When no partition is claimed twice (every healthy rebalance), one pass sets
    every owner (:func:`_claim_uncontested`); otherwise a member whose claims all land on
    unclaimed partitions takes them in bulk, and only contested claims walk the policy one
    by one.
    """
    owner = [UNOWNED] * layout.total
    specs = layout.specs
    if not any(spec.owned for spec in specs):
        return Claims(owner=owner, owned=[[] for _ in specs])
    offset_of = dict(zip(layout.topics, layout.offsets, strict=True))
    count_of = dict(zip(layout.topics, layout.counts, strict=True))
    min_count = min(layout.counts, default=0)
    allowed: dict[frozenset[int], frozenset[str]] = {}
    claimed: list[list[int]] = []
    for m, spec in enumerate(specs):
        subs = layout.subscriptions[m]
        if subs not in allowed:
            allowed[subs] = frozenset(map(layout.topics.__getitem__, subs))
        claimed.append(_claimed_indices(spec.owned, allowed[subs], offset_of, count_of, min_count))
    if _claim_uncontested(owner, claimed):
        return Claims(owner=owner, owned=claimed)
    hints = _claim_all(owner, claimed, [spec.generation for spec in specs])
    owned: list[list[int]] = []
    for m, qs in enumerate(claimed):
        held = list(map(owner.__getitem__, qs))
        owned.append(qs if held.count(m) == len(qs) else [q for q in qs if owner[q] == m])
    # a loser of a partition later tied above it is still only a hint; a hint that names the
    # final owner carries no information.
    final_hints = {q: m for q, (_, m) in hints.items() if owner[q] != m}
    return Claims(owner=owner, hints=final_hints, owned=owned)


def _claimed_indices(
    owned: tuple[tuple[str, int], ...],
    names: frozenset[str] | None,
    offset_of: dict[str, int],
    count_of: dict[str, int],
    min_count: int,
) -> list[int]:
    """Global indices of the valid claims in ``owned`` (canonical, so ascending): topics in
    ``names`` (known and subscribed; ``None``: every known topic), partitions in
    ``[0, count)``. All-valid claims (the usual case) cost a few C-level passes: a partition
    below ``min_count`` (the smallest partition count of any known topic) is in range."""
    if not owned:
        return []
    topics, partitions = zip(*owned, strict=True)
    if (
        (names is None or names.issuperset(topics))
        and min(partitions) >= 0
        and (
            max(partitions) < min_count
            or all(map(operator.lt, partitions, map(count_of.get, topics, repeat(0))))
        )
    ):
        try:
            return list(map(operator.add, map(offset_of.__getitem__, topics), partitions))
        except KeyError:
            pass  # an unknown topic: filtered below
    return [
        offset_of[topic] + partition
        for topic, partition in owned
        if (topic in names if names is not None else topic in offset_of)
        and 0 <= partition < count_of[topic]
    ]


def _claim_uncontested(owner: list[int], claimed: list[list[int]]) -> bool:
    """Give every claim to its claimant, in C, and return True when no partition is claimed
    twice: then every claim is uncontested and kept, whatever its generation, with no hint
    (the policy's result). Otherwise reset ``owner`` to :data:`UNOWNED` and return False.

    A member's claims are distinct (canonical pairs), so the partitions now owned number
    the claims exactly when no two members claim the same one.
    """
    members = chain.from_iterable(map(repeat, range(len(claimed)), map(len, claimed)))
    deque(map(operator.setitem, repeat(owner), chain.from_iterable(claimed), members), maxlen=0)
    if len(owner) - owner.count(UNOWNED) == sum(map(len, claimed)):
        return True
    owner[:] = repeat(UNOWNED, len(owner))
    return False


def _claim_all(
    owner: list[int], claimed: list[list[int]], gens: list[int]
) -> dict[int, tuple[int, int]]:
    """Set ``owner`` from every member's valid claims (ascending global indices, visited in
    member order); return the best loser ``(generation, member)`` of each contested
    partition."""
    tie_gen: dict[int, int] = {}
    tie_members: dict[int, list[int]] = {}
    hints: dict[int, tuple[int, int]] = {}

    def lose(q: int, m: int) -> None:
        g = gens[m]
        best = hints.get(q)
        if best is None or g > best[0] or (g == best[0] and m < best[1]):
            hints[q] = (g, m)

    for m, qs in enumerate(claimed):
        if not qs:
            continue
        if list(map(owner.__getitem__, qs)).count(UNOWNED) == len(qs):
            # Nobody claimed any of them yet: take them all, in C.
            deque(map(operator.setitem, repeat(owner), qs, repeat(m)), maxlen=0)
            continue
        g = gens[m]
        for q in qs:
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
    return hints
