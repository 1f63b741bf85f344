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
from bisect import bisect_left
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import accumulate, chain, compress, repeat

from . import implementation
from .layout import Layout
from .spec import MemberSpec, OwnedRuns, owned_runs

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
    ``m`` validly owns, ascending; ``claimed[m]`` lists member ``m``'s valid claims before the
    policy decided between claimants, ascending (``owned[m]`` is the part it won, the same
    list when it won them all); ``ignored`` counts the invalid claims, over every member.
    """

    owner: list[int]
    hints: dict[int, int] = field(default_factory=dict)
    owned: list[list[int]] = field(default_factory=list)
    claimed: list[list[int]] = field(default_factory=list)
    ignored: int = 0
    #: ``m -> (claimed list, topic index per run, run lengths or None)`` for members whose
    #: claims were read from canonical runs, all valid (see :meth:`owned_by_topic`)
    runs: dict[int, tuple[list[int], list[int], Sequence[int] | None]] = field(
        default_factory=dict, repr=False, compare=False
    )

    def run_sizes(self, m: int) -> tuple[list[int], Sequence[int]] | None:
        """``(topic index per run, run lengths)`` of member ``m``'s owned partitions when
        ``owned[m]`` is the list its runs gave (all valid, all kept) and its runs carry
        lengths: topics ascending (``owned[m]`` is), every length positive, the lengths of a
        topic's runs adding up to its partitions in ``owned[m]``. ``None`` otherwise."""
        recorded = self.runs.get(m)
        if recorded is None or recorded[0] is not self.owned[m] or recorded[2] is None:
            return None
        return recorded[1], recorded[2]

    def owned_by_topic(self, m: int) -> dict[int, list[int]] | None:
        """``{topic index: member m's owned partitions of it}`` (topics ascending, each list
        a slice of ``owned[m]``) when ``owned[m]`` is the list its runs gave, all valid and
        all kept: one C-level pass over its runs. ``None`` otherwise (the caller splits
        ``owned[m]`` itself)."""
        recorded = self.runs.get(m)
        if recorded is None or recorded[0] is not self.owned[m]:
            return None
        qs, topics, lengths = recorded
        if lengths is None:
            return dict(zip(topics, map(list, zip(qs)), strict=True))
        ends = list(accumulate(lengths))
        return dict(zip(topics, map(qs.__getitem__, map(slice, [0, *ends], ends)), strict=False))


def resolve_claims(layout: Layout) -> Claims:
    """Apply the claims policy to every member's ``owned`` list.

    The compiled twin (:mod:`.implementation`), when in use, returns the same ``Claims``
    (identities included) for claims it vouches for; the rest of this function is the
    reference it twins.

    Speed: a leader may read a million claims. A member's claims become global indices in a
    few C-level passes (``zip``/``map`` over its canonical runs, :func:`.spec.owned_runs`,
    or else its canonical ``owned`` tuple) when they are all valid, as they are from a
    healthy member; only a member with an invalid claim is filtered one run (or claim) at a
    time. When no partition is claimed twice (every healthy rebalance), one
    pass sets every owner (:func:`_claim_uncontested`); otherwise a member whose claims all
    land on unclaimed partitions takes them in bulk, and only contested claims walk the
    policy one by one.
    """
    runs = list(map(owned_runs, layout.specs))
    specs = layout.specs
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
    owner = [UNOWNED] * layout.total
    if not any(r[2] if r is not None else s.owned for r, s in zip(runs, specs, strict=True)):
        nothing: list[list[int]] = [[] for _ in layout.specs]
        return Claims(owner=owner, owned=nothing, claimed=nothing)
    offset_of = dict(zip(layout.topics, layout.offsets, strict=True))
    count_of = dict(zip(layout.topics, layout.counts, strict=True))
    min_count = min(layout.counts, default=0)
    every_topic = frozenset(range(len(layout.topics)))
    allowed: dict[frozenset[int], frozenset[str] | None] = {every_topic: None}
    columns = _RunColumns(layout)
    claimed: list[list[int]] = []
    by_runs: dict[int, tuple[list[int], list[int], Sequence[int] | None]] = {}
    for m, spec in enumerate(layout.specs):
        subs = layout.subscriptions[m]
        mine = runs[m]
        if mine is not None:
            valid = _claimed_run_indices(mine, subs, columns, min_count)
            if valid is not None:
                claimed.append(valid[0])
                if valid[1]:
                    by_runs[m] = (valid[0], valid[1], mine[1])
                continue
        # a claim to filter out (or claims as pairs): by the subscribed topics' names
        if subs not in allowed:
            allowed[subs] = frozenset(map(layout.topics.__getitem__, subs))
        names = allowed[subs]
        if mine is None:
            claimed.append(_claimed_indices(spec.owned, names, offset_of, count_of, min_count))
        else:
            claimed.append(_valid_run_indices(mine, names, columns))
    ignored = sum(map(_claim_count, runs, specs)) - sum(map(len, claimed))
    if _claim_uncontested(owner, claimed):
        return Claims(owner=owner, owned=claimed, claimed=claimed, ignored=ignored, runs=by_runs)
    hints = _claim_all(owner, claimed, [spec.generation for spec in layout.specs])
    owned: list[list[int]] = []
    for m, qs in enumerate(claimed):
        held = list(map(owner.__getitem__, qs))
        owned.append(qs if held.count(m) == len(qs) else [q for q in qs if owner[q] == m])
    # a loser of a partition later tied above it is still only a hint; a hint that names the
    # final owner carries no information.
    final_hints = {q: m for q, (_, m) in hints.items() if owner[q] != m}
    return Claims(
        owner=owner,
        hints=final_hints,
        owned=owned,
        claimed=claimed,
        ignored=ignored,
        runs=by_runs,
    )


def _claim_count(runs: OwnedRuns | None, spec: MemberSpec) -> int:
    """How many partitions ``spec`` claims, valid or not (``runs``: its runs, if built so)."""
    return len(runs[2]) if runs is not None else len(spec.owned)


class _RunColumns:
    """The topic indices and offsets of runs' topic tuples, looked up once per distinct tuple
    (members whose owned arrays share a layout share one topics tuple, see the codec's
    ``OneEachLayouts``), and the layout's per-topic ``offsets`` and ``counts`` by topic
    index. ``None`` for a tuple naming a topic outside the layout."""

    __slots__ = ("_index_of", "_memo", "_spreads", "counts", "offsets")

    #: Spreads kept by :meth:`spread` (the first ones met).
    SPREADS = 64

    def __init__(self, layout: Layout) -> None:
        self._index_of = layout.topic_index
        self.offsets = layout.offsets
        self.counts = layout.counts
        self._memo: dict[int, tuple[tuple[str, ...], tuple[list[int], list[int]] | None]] = {}
        #: ``id(lengths) -> (lengths, topics, per-partition offsets)``
        self._spreads: dict[int, tuple[tuple[int, ...], tuple[str, ...], list[int]]] = {}

    def spread(
        self, topics: tuple[str, ...], lengths: Sequence[int], offsets: list[int]
    ) -> Iterable[int]:
        """:func:`_spread` of ``offsets`` (those of ``topics``, see :meth:`of`) and
        ``lengths``, kept as a list when ``lengths`` is a tuple: the codec's learned layouts
        give every member matching one the same ``topics`` and ``lengths`` tuples (members of
        one bucket own runs of the same topics and lengths, only their partitions differ),
        so the list is shared by identity, the key costing nothing when nothing repeats."""
        if type(lengths) is not tuple:
            return _spread(offsets, lengths)
        spreads = self._spreads
        hit = spreads.get(id(lengths))
        if hit is not None and hit[0] is lengths and hit[1] is topics:
            return hit[2]
        found = list(_spread(offsets, lengths))
        if len(spreads) < self.SPREADS:
            # the entry keeps ``lengths`` alive, so that its id stays unique
            spreads[id(lengths)] = (lengths, topics, found)
        return found

    def of(self, topics: tuple[str, ...]) -> tuple[list[int], list[int]] | None:
        """``(topic indices, offsets)`` of ``topics``, or ``None`` if one of them is
        unknown."""
        hit = self._memo.get(id(topics))
        if hit is not None and hit[0] is topics:
            return hit[1]
        try:
            indices = list(map(self._index_of.__getitem__, topics))
            found: tuple[list[int], list[int]] | None = (
                indices,
                list(map(self.offsets.__getitem__, indices)),
            )
        except KeyError:
            found = None
        # the memo keeps ``topics`` alive, so that its id stays unique
        self._memo[id(topics)] = (topics, found)
        return found


def _claimed_run_indices(
    runs: OwnedRuns, subs: frozenset[int], columns: _RunColumns, min_count: int
) -> tuple[list[int], list[int]] | None:
    """:func:`_claimed_indices` of canonical runs (the same ascending global indices) and
    each run's topic index when every claim is valid, else ``None`` (the caller filters them
    one run at a time, :func:`_valid_run_indices`). Validity is checked per run, in C: its
    topic is known and in ``subs`` (topic indices), it is in range when its first partition
    is not negative and its last is below its topic's count (partitions increase within a
    run); every partition then becomes ``offset + partition`` in one C-level pass."""
    topics, lengths, partitions = runs
    if not partitions:
        return [], []
    known = columns.of(topics)
    if known is None or not subs.issuperset(known[0]):
        return None
    indices, offsets = known
    if lengths is None:
        low, high = min(partitions), max(partitions)
        spread: Iterable[int] = offsets
    else:
        low, high = _run_bounds(lengths, partitions)
        spread = columns.spread(topics, lengths, offsets)
    if low >= 0 and (
        high < min_count
        or all(
            map(
                operator.lt,
                _lasts(lengths, partitions),
                map(columns.counts.__getitem__, indices),
            )
        )
    ):
        return list(map(operator.add, spread, partitions)), indices
    return None


#: Runs of one partition at least this many times as numerous as longer runs are copied in
#: slices by :func:`_spread` (a repeat per run costs more).
_MOSTLY_ONES = 8


def _spread(offsets: list[int], lengths: Sequence[int]) -> Iterable[int]:
    """Each run's offset once per partition of the run, in run order. When most runs hold
    one partition (a member owning one partition of most of its topics), the offsets of the
    runs of one are copied in slices between the longer runs, which alone are repeated."""
    if (len(lengths) - lengths.count(1)) * _MOSTLY_ONES > len(lengths):
        return chain.from_iterable(map(repeat, offsets, lengths))
    longer = compress(range(len(lengths)), map(operator.ne, lengths, repeat(1)))
    pieces: list[Iterable[int]] = []
    add = pieces.append
    done = 0
    for i in longer:
        add(offsets[done:i])
        add(repeat(offsets[i], lengths[i]))
        done = i + 1
    add(offsets[done:])
    return chain.from_iterable(pieces)


#: Runs averaging fewer partitions than this are bounded by ``min``/``max`` over all their
#: partitions (cheaper than picking each run's ends).
_SHORT_RUNS = 4


def _run_bounds(lengths: Sequence[int], partitions: Sequence[int]) -> tuple[int, int]:
    """The smallest and largest partition of non-empty canonical runs (partitions increase
    within a run: the smallest first partition and the largest last one)."""
    if len(partitions) < _SHORT_RUNS * len(lengths):
        return min(partitions), max(partitions)
    ends = list(accumulate(lengths))
    firsts = map(partitions.__getitem__, map(operator.sub, ends, lengths))
    return min(firsts), max(_lasts(lengths, partitions, ends))


def _lasts(
    lengths: Sequence[int] | None, partitions: Sequence[int], ends: list[int] | None = None
) -> Sequence[int]:
    """Each canonical run's last (largest) partition; ``ends``: ``accumulate(lengths)``."""
    if lengths is None:
        return partitions
    ends = list(accumulate(lengths)) if ends is None else ends
    return list(map(partitions.__getitem__, map(operator.sub, ends, repeat(1))))


def _valid_run_indices(
    runs: OwnedRuns, names: frozenset[str] | None, columns: _RunColumns
) -> list[int]:
    """The valid claims of canonical ``runs`` one run at a time (a member with an invalid
    claim): each run's valid partitions are a slice, found by binary search."""
    topics, lengths, partitions = runs
    sizes: Sequence[int] = [1] * len(topics) if lengths is None else lengths
    out: list[int] = []
    start = 0
    for topic, size in zip(topics, sizes, strict=True):
        end = start + size
        where = columns.of((topic,)) if names is None or topic in names else None
        if where is not None:
            offset, count = where[1][0], columns.counts[where[0][0]]
            lo = bisect_left(partitions, 0, start, end)
            hi = bisect_left(partitions, count, lo, end)
            out.extend(map(offset.__add__, partitions[lo:hi]))
        start = end
    return out


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
