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

from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import accumulate

import kafka_sticky_plugin.core.implementation as implementation

from .implementation import Indices, Planned
from .layout import Layout
from .spec import OwnedRuns, owned_runs

__all__ = ["TIED", "UNOWNED", "Claims", "Indices", "Planned", "resolve_claims"]


UNOWNED = -1
"""``owner[q]`` for a partition nobody validly claims."""

TIED = -2
"""``owner[q]`` for a partition claimed by several members at the same highest generation."""


@dataclass
class Claims:
    """Validated ownership.

    ``owner[q]`` is a member index, :data:`UNOWNED` or :data:`TIED`; ``hints`` maps a partition
    to the member index of its best losing claimant; ``owned[m]`` holds the partitions member
    ``m`` validly owns, ascending; ``claimed[m]`` holds member ``m``'s valid claims before the
    policy decided between claimants, ascending (``owned[m]`` is the part it won, the same
    array when it won them all), both :data:`Indices` arrays; ``ignored`` counts the invalid
    claims, over every member.
    """

    owner: list[int]
    hints: dict[int, int] = field(default_factory=dict)
    owned: list[Indices] = field(default_factory=list)
    claimed: list[Indices] = field(default_factory=list)
    ignored: int = 0
    #: ``m -> (claimed array, topic index per run, run lengths or None)`` for members whose
    #: claims were read from canonical runs, all valid (see :meth:`owned_by_topic`)
    runs: dict[int, tuple[Indices, list[int], Sequence[int] | None]] = field(
        default_factory=dict, repr=False, compare=False
    )

    def run_sizes(self, m: int) -> tuple[list[int], Sequence[int]] | None:
        """``(topic index per run, run lengths)`` of member ``m``'s owned partitions when
        ``owned[m]`` is the array its runs gave (all valid, all kept) and its runs carry
        lengths: topics ascending (``owned[m]`` is), every length positive, the lengths of a
        topic's runs adding up to its partitions in ``owned[m]``. ``None`` otherwise."""
        recorded = self.runs.get(m)
        if recorded is None or recorded[0] is not self.owned[m] or recorded[2] is None:
            return None
        return recorded[1], recorded[2]

    def owned_by_topic(self, m: int) -> dict[int, list[int]] | None:
        """``{topic index: member m's owned partitions of it}`` (topics ascending, each a new
        list, a slice of ``owned[m]``) when ``owned[m]`` is the array its runs gave, all valid
        and all kept: one slice per run. ``None`` otherwise (the caller splits ``owned[m]``
        itself)."""
        recorded = self.runs.get(m)
        if recorded is None or recorded[0] is not self.owned[m]:
            return None
        qs, topics, lengths = recorded
        if lengths is None:
            return dict(zip(topics, map(list, zip(qs)), strict=True))
        ends = list(accumulate(lengths))
        starts = [0, *ends[:-1]]
        return {t: qs[a:b].tolist() for t, a, b in zip(topics, starts, ends, strict=True)}


def resolve_claims(layout: Layout) -> Claims:
    """Apply the claims policy to every member's claims: its canonical runs
    (:func:`.spec.owned_runs`) or else its ``owned`` pairs.

    Three steps, one function each: every member's valid claims as ascending global indices
    (:func:`_valid_claims`), every partition given to its claimants' winner
    (:func:`_decide`), and each member's owned partitions, the claims it won. ``owned`` is
    ``claimed`` itself when no partition is claimed twice, and ``owned[m]`` is
    ``claimed[m]`` for a member that won every claim. ``runs`` records, for each member
    whose runs were all valid (and not empty), ``(claimed[m], topic index per run, run
    lengths or None)``.

    The compiled twin (:mod:`.implementation`), when in use, returns the same ``Claims``
    (identities included) for claims it vouches for; the rest of this function is the
    reference it twins.
    """
    specs = layout.specs
    runs = [owned_runs(spec) for spec in specs]
    twin = implementation.twin
    if twin is not None:
        made = twin.resolve_claims(
            layout.topics,
            layout.counts,
            layout.subscriptions,
            [spec.generation for spec in specs],
            runs,
            [spec.owned if r is None else None for r, spec in zip(runs, specs, strict=True)],
        )
        if made is not None:  # (owner, hints, owned, claimed, ignored, runs)
            return Claims(*made)
    valid_topics: dict[frozenset[int], dict[str, tuple[int, int]]] = {}
    claimed: list[Indices] = []
    recorded: dict[int, tuple[Indices, list[int], Sequence[int] | None]] = {}
    ignored = 0
    for m, spec in enumerate(specs):
        subscribed = layout.subscriptions[m]
        if subscribed not in valid_topics:
            valid_topics[subscribed] = _topic_places(layout, subscribed)
        mine = runs[m]
        topics, lengths, partitions = mine if mine is not None else _pairs_as_runs(spec.owned)
        valid = _valid_claims(valid_topics[subscribed], topics, lengths, partitions)
        claimed.append(valid)
        ignored += len(partitions) - len(valid)
        if mine is not None and valid and len(valid) == len(partitions):
            recorded[m] = (valid, [layout.topic_index[t] for t in topics], lengths)
    owner, hints = _decide(layout.total, claimed, [spec.generation for spec in specs])
    if hints is None:  # nothing contested: every claim kept
        return Claims(owner=owner, owned=claimed, claimed=claimed, ignored=ignored, runs=recorded)
    owned = [_won(owner, m, qs) for m, qs in enumerate(claimed)]
    return Claims(
        owner=owner, hints=hints, owned=owned, claimed=claimed, ignored=ignored, runs=recorded
    )


def _topic_places(layout: Layout, subscribed: frozenset[int]) -> dict[str, tuple[int, int]]:
    """``{name: (offset, count)}`` of the topics a member may validly claim: the known
    topics it subscribes to."""
    return {layout.topics[t]: (layout.offsets[t], layout.counts[t]) for t in subscribed}


def _pairs_as_runs(owned: tuple[tuple[str, int], ...]) -> OwnedRuns:
    """Claims as pairs, as runs of one partition each."""
    return tuple(topic for topic, _ in owned), None, [partition for _, partition in owned]


def _valid_claims(
    places: dict[str, tuple[int, int]],
    topics: tuple[str, ...],
    lengths: Sequence[int] | None,
    partitions: Sequence[int],
) -> Indices:
    """The global indices of the valid claims among ``partitions`` (run ``i`` being the next
    ``lengths[i]`` of them, of topic ``topics[i]``; one each when ``lengths`` is ``None``), in
    claim order, so ascending for canonical runs: a claim is valid when its topic is in
    ``places`` (:func:`_topic_places`) and ``0 <= partition < count``."""
    per_claim = topics if lengths is None else _each_claim_topic(topics, lengths)
    valid = array("i")
    for topic, partition in zip(per_claim, partitions, strict=False):
        place = places.get(topic)
        if place is not None and 0 <= partition < place[1]:
            valid.append(place[0] + partition)
    return valid


def _each_claim_topic(topics: tuple[str, ...], lengths: Sequence[int]) -> list[str]:
    """Each run's topic once per partition of the run."""
    out: list[str] = []
    for topic, size in zip(topics, lengths, strict=False):
        out.extend([topic] * size)
    return out


def _decide(
    total: int, claimed: list[Indices], gens: list[int]
) -> tuple[list[int], dict[int, int] | None]:
    """``(owner, hints)``: every partition's owner by the policy, from every member's valid
    claims (visited in member order, each claim in order); ``hints`` maps a contested
    partition to its best loser unless that is its owner (in the order the partitions first
    had a loser), ``None`` when no partition was claimed twice."""
    owner = [UNOWNED] * total
    contest = _Contest(owner, gens)
    for m, qs in enumerate(claimed):
        for q in qs:
            if owner[q] == UNOWNED:
                owner[q] = m
            else:
                contest.claim(q, m)
    if not contest.contested:
        return owner, None
    # a loser of a partition later tied above it is still only a hint; a hint that names the
    # final owner carries no information.
    return owner, {q: m for q, (_, m) in contest.best_loser.items() if owner[q] != m}


class _Contest:
    """The policy for a claim on a partition someone already claimed."""

    def __init__(self, owner: list[int], gens: list[int]) -> None:
        self.owner = owner
        self.gens = gens
        self.contested = False
        #: ``q -> (generation, members)`` of a partition tied so far
        self.ties: dict[int, tuple[int, list[int]]] = {}
        #: ``q -> (generation, member)`` of its best loser so far
        self.best_loser: dict[int, tuple[int, int]] = {}

    def claim(self, q: int, m: int) -> None:
        """Member ``m`` claims ``q``, which its owner so far (or tie) claimed first."""
        self.contested = True
        g, current = self.gens[m], self.owner[q]
        if current == TIED:
            tie_gen, tied = self.ties[q]
            if g > tie_gen:  # above the tie: every tied member loses
                self.owner[q] = m
                del self.ties[q]
                for loser in tied:
                    self.lose(q, loser)
            elif g == tie_gen:
                tied.append(m)
            else:
                self.lose(q, m)
            return
        held_gen = self.gens[current]
        if g > held_gen:
            self.lose(q, current)
            self.owner[q] = m
        elif g == held_gen:
            self.owner[q] = TIED
            self.ties[q] = (g, [current, m])
        else:
            self.lose(q, m)

    def lose(self, q: int, m: int) -> None:
        """Member ``m`` lost ``q``: kept if it is the best loser (highest generation, then
        smallest member index)."""
        g = self.gens[m]
        best = self.best_loser.get(q)
        if best is None or g > best[0] or (g == best[0] and m < best[1]):
            self.best_loser[q] = (g, m)


def _won(owner: list[int], m: int, qs: Indices) -> Indices:
    """The claims ``qs`` of member ``m`` it owns: ``qs`` itself when it won them all."""
    won = array("i", [q for q in qs if owner[q] == m])
    return qs if len(won) == len(qs) else won
