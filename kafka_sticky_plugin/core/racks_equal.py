"""The rack pass for a homogeneous component (every member may take every partition): exact
at the level of rack buckets (see :mod:`.racks` for the whole pass and its guarantees)."""

from __future__ import annotations

from collections import deque

from .claims import Claims
from .components import Component
from .rack_view import NO_RACK, RackView, deal

__all__ = ["improve_homogeneous"]


def improve_homogeneous(
    claims: Claims, comp: Component, plan: dict[int, list[int]], view: RackView
) -> dict[int, list[int]]:
    """Exact at bucket level. Balance fixes only the multiset of loads (``base`` or
    ``base + 1``), so the ``P % M`` extra slots go where the racked partitions need them.

    Partitions with the same replica racks form a *class*; the flow state is, per bucket and
    class, the partitions placed there (split into "owned by a member of this bucket" and the
    rest), so an augmenting path costs O(buckets x classes), not O(partitions).

    Steps: :func:`_classify`, :func:`_keep_owned`, :func:`_place_pending` (racked partitions
    into buckets), :func:`_capacities`, :func:`_assign_members` (buckets to members).
    """
    owner = claims.owner
    members = comp.members
    total = sum(len(plan[m]) for m in members)
    base, extras = divmod(total, len(members))
    bucket_of = {m: view.member_rack[m] for m in members}
    buckets = sorted(set(bucket_of.values()))
    rooms = _Rooms(
        buckets, {b: sum(1 for m in members if bucket_of[m] == b) for b in buckets}, base, extras
    )
    allowed, racked, neutral = _classify(plan, members, buckets, view)
    holders = _Holders(buckets, owner, bucket_of)
    pending = _keep_owned(racked, allowed, owner, bucket_of, rooms, holders)
    unmatched = _place_pending(pending, allowed, rooms, holders)
    placed_in = {b: holders.placed(b) for b in buckets}
    capacity = _capacities(claims, members, bucket_of, placed_in, rooms, base)
    return _assign_members(owner, members, bucket_of, placed_in, neutral + unmatched, capacity)


def _classify(
    plan: dict[int, list[int]], members: list[int], buckets: list[int], view: RackView
) -> tuple[dict[frozenset[int], list[int]], list[tuple[int, frozenset[int]]], list[int]]:
    """Split the component's partitions (ascending) into *racked* ones, each with its class
    (its replica racks), and *neutral* ones (no rack information: never a mismatch). Returns
    ``(allowed, racked, neutral)`` with ``allowed[c]`` the buckets (ascending) that do not
    mismatch class ``c``: its racks and the bucket of members without a rack."""
    allowed: dict[frozenset[int], list[int]] = {}
    racked: list[tuple[int, frozenset[int]]] = []
    neutral: list[int] = []
    get = view.partition_racks.get
    for q in sorted(q for m in members for q in plan[m]):
        racks = get(q)
        if racks:
            if racks not in allowed:
                allowed[racks] = [b for b in buckets if b == NO_RACK or b in racks]
            racked.append((q, racks))
        else:
            neutral.append(q)
    return allowed, racked, neutral


class _Holders:
    """The flow state: per bucket and class, the partitions placed there as
    ``(owned by a member of this bucket, others)``; a move takes from the others first."""

    def __init__(self, buckets: list[int], owner: list[int], bucket_of: dict[int, int]) -> None:
        self.by_bucket: dict[int, dict[frozenset[int], tuple[list[int], list[int]]]] = {
            b: {} for b in buckets
        }
        self.owner = owner
        self.bucket_of = bucket_of

    def put_all(self, qs: list[int], c: frozenset[int], b: int) -> None:
        """Place partitions of class ``c`` in bucket ``b`` (owned by a member of ``b`` or not)."""
        lists = self.by_bucket[b].get(c)
        if lists is None:
            lists = self.by_bucket[b][c] = ([], [])
        own, other = lists
        owner, bucket_of = self.owner, self.bucket_of
        for q in qs:
            o = owner[q]
            (own if o >= 0 and bucket_of.get(o) == b else other).append(q)

    def move(self, c: frozenset[int], src: int, dst: int) -> None:
        """Move one partition of class ``c`` from bucket ``src`` to ``dst``, one not owned by
        a member of ``src`` if there is one."""
        lists = self.by_bucket[src][c]
        moved = lists[1].pop() if lists[1] else lists[0].pop()
        self.put_all([moved], c, dst)

    def placed(self, b: int) -> list[int]:
        """Every partition placed in bucket ``b``, class by class (owned ones first)."""
        out: list[int] = []
        for own, other in self.by_bucket[b].values():
            out.extend(own)
            out.extend(other)
        return out


def _keep_owned(
    racked: list[tuple[int, frozenset[int]]],
    allowed: dict[frozenset[int], list[int]],
    owner: list[int],
    bucket_of: dict[int, int],
    rooms: _Rooms,
    holders: _Holders,
) -> dict[frozenset[int], list[int]]:
    """Owned partitions whose owner's bucket matches them stay in that bucket while it has
    room (in partition order, as one at a time would); return the rest, by class, waiting
    for :func:`_place_pending`."""
    pending: dict[frozenset[int], list[int]] = {}
    staying: dict[tuple[int, frozenset[int]], list[int]] = {}
    for q, c in racked:
        o = owner[q]
        b = bucket_of.get(o, NO_RACK) if o >= 0 else NO_RACK
        if o >= 0 and o in bucket_of and b in allowed[c] and rooms.has(b):
            rooms.take(b)
            staying.setdefault((b, c), []).append(q)
        else:
            pending.setdefault(c, []).append(q)
    for (b, c), qs in staying.items():
        holders.put_all(qs, c, b)
    return pending


def _place_pending(
    pending: dict[frozenset[int], list[int]],
    allowed: dict[frozenset[int], list[int]],
    rooms: _Rooms,
    holders: _Holders,
) -> list[int]:
    """A maximum flow of the waiting partitions into buckets that match them, most
    constrained classes first: each takes the first allowed bucket with room, else room is
    made along an augmenting path (:func:`_augmenting_path`). Returns the partitions that
    fit no matching bucket (*unmatched*)."""
    unmatched: list[int] = []
    for c in sorted(pending, key=lambda c: (len(allowed[c]), sorted(c))):
        qs = pending[c]
        i = 0
        while i < len(qs):
            # Direct placements in bulk: each partition takes the first allowed bucket with
            # room, so the buckets fill in order.
            for b in allowed[c]:
                k = min(rooms.free(b), len(qs) - i)
                if k > 0:
                    rooms.take_many(b, k)
                    holders.put_all(qs[i : i + k], c, b)
                    i += k
            if i == len(qs):
                break
            moves = _augmenting_path(c, allowed, holders, rooms)
            if moves is None:
                # nothing reachable has room: no later partition of this class fits either
                unmatched.extend(qs[i:])
                break
            rooms.take(moves[0][2])
            for cls, src, dst in moves:
                holders.move(cls, src, dst)
            holders.put_all([qs[i]], c, moves[-1][1])
            i += 1
    return unmatched


def _capacities(
    claims: Claims,
    members: list[int],
    bucket_of: dict[int, int],
    placed_in: dict[int, list[int]],
    rooms: _Rooms,
    base: int,
) -> dict[int, int]:
    """Member capacities that add up to the buckets' fill: ``base`` everywhere, each bucket's
    extras to its members owning the most there, the remaining extras to the largest
    owners."""
    owner = claims.owner
    owned_in: dict[int, int] = dict.fromkeys(members, 0)
    for b, qs in placed_in.items():
        for q in qs:
            o = owner[q]
            if o >= 0 and bucket_of.get(o) == b:
                owned_in[o] += 1
    capacity = dict.fromkeys(members, base)
    for b in placed_in:
        ranked = sorted((m for m in members if bucket_of[m] == b), key=lambda m: (-owned_in[m], m))
        for m in ranked[: rooms.extra_used[b]]:
            capacity[m] += 1
    spare = sorted(
        (m for m in members if capacity[m] == base), key=lambda m: (-len(claims.owned[m]), m)
    )
    for m in spare[: rooms.extras]:
        capacity[m] += 1
    return capacity


def _assign_members(
    owner: list[int],
    members: list[int],
    bucket_of: dict[int, int],
    placed_in: dict[int, list[int]],
    unplaced: list[int],
    capacity: dict[int, int],
) -> dict[int, list[int]]:
    """Each bucket's partitions to its members (ascending): an owner in the bucket keeps its
    own while under capacity, the rest are dealt round-robin; then the partitions no bucket
    holds (``unplaced``: neutral and unmatched) go to their owner with room, else round-robin
    over every member. Every member ends at exactly its capacity."""
    assigned: dict[int, list[int]] = {m: [] for m in members}
    for b, qs in placed_in.items():
        rest = []
        for q in sorted(qs):
            o = owner[q]
            if o >= 0 and bucket_of.get(o) == b and len(assigned[o]) < capacity[o]:
                assigned[o].append(q)
            else:
                rest.append(q)
        deal(rest, [m for m in members if bucket_of[m] == b], assigned, capacity)
    rest = []
    for q in sorted(unplaced):
        o = owner[q]
        if o >= 0 and o in capacity and len(assigned[o]) < capacity[o]:
            assigned[o].append(q)
        else:
            rest.append(q)
    deal(rest, members, assigned, capacity)
    for m in members:
        assigned[m].sort()
    return assigned


class _Rooms:
    """Free places per bucket: ``base`` per member, plus at most one extra per member while
    extras remain (``extras`` is the number not yet used)."""

    def __init__(self, buckets: list[int], size: dict[int, int], base: int, extras: int) -> None:
        self.size = size
        self.room = {b: base * size[b] for b in buckets}
        self.extra_used = dict.fromkeys(buckets, 0)
        self.extras = extras

    def has(self, b: int) -> bool:
        return self.room[b] > 0 or (self.extras > 0 and self.extra_used[b] < self.size[b])

    def take(self, b: int) -> None:
        if self.room[b] > 0:
            self.room[b] -= 1
        else:
            self.extra_used[b] += 1
            self.extras -= 1

    def free(self, b: int) -> int:
        """How many :meth:`take` calls on ``b`` would succeed in a row."""
        return self.room[b] + min(self.size[b] - self.extra_used[b], self.extras)

    def take_many(self, b: int, k: int) -> None:
        """``k`` :meth:`take` calls on ``b`` (``k <= free(b)``): base room first, then extras."""
        from_room = min(k, self.room[b])
        self.room[b] -= from_room
        self.extra_used[b] += k - from_room
        self.extras -= k - from_room


def _augmenting_path(
    c: frozenset[int],
    allowed: dict[frozenset[int], list[int]],
    holders: _Holders,
    rooms: _Rooms,
) -> list[tuple[frozenset[int], int, int]] | None:
    """Breadth-first over buckets for a new partition of class ``c``: it enters a full allowed
    bucket, which passes one partition of some class to another bucket allowed for that class,
    ... until a bucket with room. Returns the moves ``(class, from, to)`` in the order to apply
    them (the first fills the bucket with room), with the entry bucket as the last ``from``;
    ``None`` when no bucket with room is reachable."""
    parent: dict[int, tuple[int, frozenset[int]] | None] = {}
    queue: deque[int] = deque()
    for b in allowed[c]:
        parent[b] = None
        queue.append(b)
    while queue:
        b = queue.popleft()
        for cls, (own, other) in holders.by_bucket[b].items():
            if not own and not other:
                continue
            for b2 in allowed[cls]:
                if b2 in parent:
                    continue
                parent[b2] = (b, cls)
                if rooms.has(b2):
                    moves: list[tuple[frozenset[int], int, int]] = []
                    node = b2
                    link = parent[node]
                    while link is not None:
                        src, moved_cls = link
                        moves.append((moved_cls, src, node))
                        node = src
                        link = parent[node]
                    return moves
                queue.append(b2)
    return None
