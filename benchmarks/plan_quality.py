"""The quality of any peer's plan, measured by our own code on the bytes it sent back.

Members (subscriptions, owned partitions, generations, racks) are read from the same input
metadata every peer got, with our codec and the leader's own claim rules
(:func:`kafka_sticky_plugin.adapters.kafka_python._leader.member_spec`); each peer's
assignment bytes are read with our codec; load-optimality is
:func:`kafka_sticky_plugin.invariants.check_balanced`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kafka_sticky_plugin.adapters.kafka_python._leader import member_spec
from kafka_sticky_plugin.codec import decode_assignment, decode_subscription
from kafka_sticky_plugin.core import MemberSpec
from kafka_sticky_plugin.errors import InvariantViolation
from kafka_sticky_plugin.invariants import check_balanced

Plan = dict[str, list[tuple[str, int]]]


def input_members(protocol: str, metadata: Mapping[str, bytes]) -> list[MemberSpec]:
    """What our leader reads from the metadata every peer got."""
    return [member_spec(m, decode_subscription(raw), protocol) for m, raw in metadata.items()]


def plan_of(assignments: Mapping[str, bytes], members: Sequence[MemberSpec]) -> Plan:
    """Each member's partitions, sorted, from a peer's assignment bytes (a member the peer left
    out gets an empty list; a key that is not a member is kept, and counted as invalid)."""
    plan: Plan = {s.member_id: [] for s in members}
    for member_id, raw in assignments.items():
        plan[member_id] = sorted(decode_assignment(raw).partitions)
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
    subscriptions lowers the top load (our ``check_balanced``); ``cross_rack``: partitions
    given to a member with a rack that holds no replica (only with replica racks)."""
    spec_of = {s.member_id: s for s in members}
    topics_of = {s.member_id: set(s.topics) for s in members}
    owner: dict[tuple[str, int], str] = {}
    twice = invalid = cross = 0
    for member_id, items in plan.items():
        subscribed = topics_of.get(member_id)
        rack = spec_of[member_id].rack if member_id in spec_of else None
        for tp in items:
            if tp in owner:
                twice += 1
                continue
            owner[tp] = member_id
            count = partitions.get(tp[0], 0)
            if subscribed is None or tp[0] not in subscribed or not 0 <= tp[1] < count:
                invalid += 1
            elif partition_racks is not None and rack is not None:
                cross += rack not in partition_racks.get(tp, ())
    wanted = {t for s in members for t in s.topics if t in partitions}
    unassigned = sum(partitions[t] for t in wanted) - sum(
        1 for tp in owner if tp[0] in wanted and 0 <= tp[1] < partitions[tp[0]]
    )
    loads = [len(plan[s.member_id]) for s in members if s.topics]
    moved = sum(1 for s in members for tp in s.owned if owner.get(tp) != s.member_id)
    optimal: bool | None = None
    if not twice and not invalid:
        try:
            check_balanced(partitions, members, {m: plan[m] for m in spec_of})
            optimal = True
        except InvariantViolation:
            optimal = False
    row: dict[str, object] = {
        "twice": twice,
        "invalid": invalid,
        "unassigned": unassigned,
        "spread": max(loads) - min(loads) if loads else 0,
        "moved": moved,
        "optimal": optimal,
    }
    if partition_racks is not None:
        row["cross_rack"] = cross
    return row
