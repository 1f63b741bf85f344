"""The quality of any peer's plan, measured by our own code on the bytes it sent back.

Members (subscriptions, owned partitions, generations, racks) are read from the same input
metadata every peer got, with our codec and the leader's own claim rules
(:func:`kafka_sticky_plugin.assignor.leader.member_spec`); each peer's
assignment bytes are read with our codec; load-optimality is
:func:`kafka_sticky_plugin.invariants.check_balanced`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from kafka_sticky_plugin.assignor.leader import member_spec
from kafka_sticky_plugin.codec import decode_assignment, decode_subscription
from kafka_sticky_plugin.core import MemberSpec
from kafka_sticky_plugin.core.gc_pause import cyclic_gc_paused
from kafka_sticky_plugin.errors import InvariantViolation
from kafka_sticky_plugin.invariants import check_balanced

Plan = dict[str, list[tuple[str, int]]]


def input_members(protocol: str, metadata: Mapping[str, bytes]) -> list[MemberSpec]:
    """What our leader reads from the metadata every peer got (its own decoder and claim
    rules, cyclic GC paused as in the leader)."""
    with cyclic_gc_paused():
        return [
            member_spec(member_id, decode_subscription(raw), protocol)
            for member_id, raw in metadata.items()
        ]


def plan_of(assignments: Mapping[str, bytes], members: Sequence[MemberSpec]) -> Plan:
    """Each member's partitions from a peer's assignment bytes (a member the peer left out gets
    an empty list; a key that is not a member is kept, and its items count as invalid)."""
    plan: Plan = {s.member_id: [] for s in members}
    with cyclic_gc_paused():
        for member_id, raw in assignments.items():
            plan[member_id] = list(decode_assignment(raw).partitions)
    return plan


def quality(
    partitions: Mapping[str, int],
    members: Sequence[MemberSpec],
    plan: Plan,
    partition_racks: Mapping[tuple[str, int], tuple[str, ...]] | None = None,
) -> dict[str, object]:
    """``twice``: partitions given to more than one member; ``invalid``: items that do not
    exist, belong to no member or to a topic the member does not subscribe;
    ``unassigned``: subscribed partitions nobody got (a cooperative first round withholds
    transfers, so it is expected there); ``spread``: max - min load over members with a
    subscription; ``moved``: previously owned partitions (as our leader reads the claims)
    whose owner is now someone else or nobody; ``optimal``: no chain of moves along
    subscriptions lowers the top load (our ``check_balanced``; not judged when items are
    given twice or are invalid); ``cross_rack``: partitions given to a member with a rack
    that holds no replica (only with replica racks)."""
    index = {s.member_id: i for i, s in enumerate(members)}
    owner = {t: [-1] * n for t, n in partitions.items()}  # member index per partition
    twice = invalid = cross = given = 0
    for member_id, items in plan.items():
        m = index.get(member_id, -2)
        spec = members[m] if m >= 0 else None
        subscribed = set(spec.topics) if spec is not None else set()
        rack = spec.rack if spec is not None else None
        for topic, p in items:
            row = owner.get(topic)
            if row is None or topic not in subscribed or not 0 <= p < len(row):
                invalid += 1
                continue
            if row[p] != -1:
                twice += 1
                continue
            row[p] = m
            given += 1
            if partition_racks is not None and rack is not None:
                cross += rack not in partition_racks.get((topic, p), ())
    wanted = {t for s in members for t in s.topics if t in partitions}
    unassigned = sum(partitions[t] for t in wanted) - given
    loads = [len(plan[s.member_id]) for s in members if s.topics]
    spread = max(loads) - min(loads) if loads else 0
    moved = 0
    for m, s in enumerate(members):
        for topic, p in s.owned:
            row = owner.get(topic)
            moved += row is None or not 0 <= p < len(row) or row[p] != m
    return figures(
        partitions,
        members,
        (twice, invalid, unassigned, spread, moved),
        lambda: {s.member_id: plan[s.member_id] for s in members},
        cross if partition_racks is not None else None,
    )


def figures(
    partitions: Mapping[str, int],
    members: Sequence[MemberSpec],
    counts: tuple[int, int, int, int, int],
    plan: Callable[[], Plan],
    cross_rack: int | None,
) -> dict[str, object]:
    """The quality row from ``counts`` (twice, invalid, unassigned, spread, moved):
    ``optimal`` is judged only when nothing is given twice or is invalid, and with
    :func:`check_balanced` on ``plan()`` (every member's partitions) only when the spread is
    above 1 (within 1 is optimal whatever the subscriptions); ``cross_rack`` only with
    replica racks (``None``: none)."""
    twice, invalid, unassigned, spread, moved = counts
    optimal: bool | None = None
    if not twice and not invalid:
        optimal = True
        if spread > 1:
            try:
                check_balanced(partitions, members, plan())
            except InvariantViolation:
                optimal = False
    out: dict[str, object] = {
        "twice": twice,
        "invalid": invalid,
        "unassigned": unassigned,
        "spread": spread,
        "moved": moved,
        "optimal": optimal,
    }
    if cross_rack is not None:
        out["cross_rack"] = cross_rack
    return out
