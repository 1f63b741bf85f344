"""Checkers for the guarantees of a plan, shared by users and every test tier.

Each checker raises :class:`~kafka_sticky_plugin.errors.InvariantViolation` with a message
that names the member and the partition at fault, and returns ``None`` when the plan is fine.

- :func:`check_valid`: every member is a key, lists are sorted, every item is an existing
  partition of a topic its member subscribes to, and no partition is given twice;
- :func:`check_complete`: every partition of a subscribed known topic is assigned (eager);
- :func:`check_balanced`: load optimality (no chain of moves along subscriptions lowers a
  member of load L while raising one at L - 2 or less; for equal subscriptions: max - min <= 1);
- :func:`check_sticky`: in a homogeneous group every member keeps ``min(valid owned, final
  count)`` of its validly owned partitions;
- :func:`check_topic_spread`: in a homogeneous group no *spread swap* exists: no members
  ``a``, ``b`` and topics ``t != u`` where ``a`` holds a moved partition of ``t`` (one it did
  not validly own), ``b`` a moved partition of ``u``, ``c_t(a) >= c_t(b) + 2`` and
  ``c_u(b) >= c_u(a) + 1`` (with no claims at all: every topic within one per member);
- :func:`check_cooperative`: no member is given a partition whose validated owner is another
  member, nor one whose ownership is tied (KIP-429);
- :func:`check_plan`: all of the above that apply.

"Validated owner" follows the engine's claims policy (:mod:`kafka_sticky_plugin.core.claims`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence

from .core.claims import TIED, Claims, resolve_claims
from .core.layout import Layout, build_layout
from .core.spec import MemberSpec
from .errors import InvariantViolation

__all__ = [
    "check_balanced",
    "check_complete",
    "check_cooperative",
    "check_plan",
    "check_sticky",
    "check_topic_spread",
    "check_valid",
]

PlanLike = Mapping[str, Sequence[tuple[str, int]]]


def _members(members: Iterable[MemberSpec]) -> list[MemberSpec]:
    return list(members)


def check_valid(
    partitions_per_topic: Mapping[str, int], members: Iterable[MemberSpec], plan: PlanLike
) -> None:
    """Keys, sorting, existence, subscription and uniqueness."""
    specs = _members(members)
    ids = {s.member_id for s in specs}
    missing = ids - set(plan)
    if missing:
        raise InvariantViolation(f"member {sorted(missing)[0]!r} is missing from the plan")
    extra = set(plan) - ids
    if extra:
        raise InvariantViolation(f"plan has a key {sorted(extra)[0]!r} that is not a member")
    topics_of: dict[str, set[str]] = {}
    for s in specs:
        topics_of.setdefault(s.member_id, set()).update(s.topics)
    seen: dict[tuple[str, int], str] = {}
    for member_id, items in plan.items():
        previous: tuple[str, int] | None = None
        for item in items:
            topic, partition = item[0], item[1]
            tp = (topic, partition)
            if previous is not None and tp <= previous:
                raise InvariantViolation(
                    f"member {member_id!r}: list not sorted or has a repeat at {topic}-{partition}"
                )
            previous = tp
            count = partitions_per_topic.get(topic)
            if count is None or not 0 <= partition < count:
                raise InvariantViolation(
                    f"member {member_id!r} is given {topic}-{partition}, which does not exist"
                )
            if topic not in topics_of[member_id]:
                raise InvariantViolation(
                    f"member {member_id!r} is given {topic}-{partition} but does not subscribe "
                    f"to {topic!r}"
                )
            other = seen.get(tp)
            if other is not None:
                raise InvariantViolation(
                    f"partition {topic}-{partition} is given to both {other!r} and {member_id!r}"
                )
            seen[tp] = member_id


def check_complete(
    partitions_per_topic: Mapping[str, int], members: Iterable[MemberSpec], plan: PlanLike
) -> None:
    """Every partition of every subscribed known topic is assigned to someone."""
    subscribed = {t for s in members for t in s.topics if t in partitions_per_topic}
    assigned = {(item[0], item[1]) for items in plan.values() for item in items}
    for topic in sorted(subscribed):
        for p in range(partitions_per_topic[topic]):
            if (topic, p) not in assigned:
                raise InvariantViolation(f"partition {topic}-{p} is subscribed but not assigned")


def check_balanced(
    partitions_per_topic: Mapping[str, int], members: Iterable[MemberSpec], plan: PlanLike
) -> None:
    """Load optimality: no improving chain of moves along subscriptions exists."""
    specs = _members(members)
    layout = build_layout(partitions_per_topic, specs)
    index = {mid: i for i, mid in enumerate(layout.member_ids)}
    load = [0] * len(layout.member_ids)
    held: list[set[int]] = [set() for _ in layout.member_ids]
    for member_id, items in plan.items():
        m = index[member_id]
        load[m] = len(items)
        for item in items:
            t = layout.topic_index.get(item[0])
            if t is not None:
                held[m].add(t)
    active = [m for m in range(len(load)) if layout.subscriptions[m]]
    if not active or max(load[m] for m in active) - min(load[m] for m in active) <= 1:
        return
    subscribers: dict[int, list[int]] = {}
    for m in active:
        for t in layout.subscriptions[m]:
            subscribers.setdefault(t, []).append(m)
    for source in sorted(active, key=lambda m: -load[m]):
        limit = load[source] - 2
        visited = {source}
        expanded: set[int] = set()
        queue = deque([source])
        while queue:
            x = queue.popleft()
            for t in sorted(held[x] - expanded):
                expanded.add(t)
                for y in subscribers.get(t, []):
                    if y in visited:
                        continue
                    if load[y] <= limit:
                        raise InvariantViolation(
                            f"not load-optimal: member {layout.member_ids[source]!r} "
                            f"(load {load[source]}) can pass a partition along subscriptions "
                            f"to member {layout.member_ids[y]!r} (load {load[y]}) through "
                            f"topic {layout.topics[t]!r}"
                        )
                    visited.add(y)
                    queue.append(y)


def _homogeneous_group(
    partitions_per_topic: Mapping[str, int], members: Iterable[MemberSpec]
) -> tuple[Layout, list[int], Claims] | None:
    """The layout, the subscribed members' indices and the validated claims of a group
    whose subscribed members all subscribe to the same topics; ``None`` for any other group
    (the checks that only hold in a homogeneous group skip it)."""
    layout = build_layout(partitions_per_topic, _members(members))
    subscribed = [m for m in range(len(layout.member_ids)) if layout.subscriptions[m]]
    if not subscribed or len({layout.subscriptions[m] for m in subscribed}) != 1:
        return None
    return layout, subscribed, resolve_claims(layout)


def check_sticky(
    partitions_per_topic: Mapping[str, int], members: Iterable[MemberSpec], plan: PlanLike
) -> None:
    """In a homogeneous group every member keeps ``min(valid owned, final count)``."""
    homogeneous = _homogeneous_group(partitions_per_topic, members)
    if homogeneous is None:
        return
    layout, subscribed, claims = homogeneous
    tuples = layout.partition_tuples()
    for m in subscribed:
        member_id = layout.member_ids[m]
        final = {(item[0], item[1]) for item in plan[member_id]}
        owned = [tuples[q] for q in claims.owned[m]]
        kept = sum(1 for tp in owned if tp in final)
        want = min(len(owned), len(final))
        if kept < want:
            lost = sorted(tp for tp in owned if tp not in final)[0]
            raise InvariantViolation(
                f"member {member_id!r} kept {kept} of its {len(owned)} owned partitions with "
                f"{len(final)} assigned (at least {want} expected); e.g. it lost "
                f"{lost[0]}-{lost[1]}"
            )


def check_topic_spread(
    partitions_per_topic: Mapping[str, int], members: Iterable[MemberSpec], plan: PlanLike
) -> None:
    """In a homogeneous group, no two members can swap two moved partitions to narrow a topic
    gap of two or more while keeping every other gap between them within one; with no valid
    claim at all, every topic is spread within one partition per member."""
    homogeneous = _homogeneous_group(partitions_per_topic, members)
    if homogeneous is None:
        return
    layout, subscribed, claims = homogeneous
    counts: dict[int, dict[str, int]] = {}
    moved: dict[int, set[str]] = {}
    for m in subscribed:
        c: dict[str, int] = {}
        mv: set[str] = set()
        for item in plan[layout.member_ids[m]]:
            topic = item[0]
            c[topic] = c.get(topic, 0) + 1
            if claims.owner[layout.offsets[layout.topic_index[topic]] + item[1]] != m:
                mv.add(topic)
        counts[m], moved[m] = c, mv
    names = layout.member_ids
    if not any(claims.owned[m] for m in subscribed) and not claims.hints:
        for t in layout.topics:
            got = [counts[m].get(t, 0) for m in subscribed]
            if max(got) - min(got) > 1:
                raise InvariantViolation(
                    f"topic {t!r} is spread {min(got)}..{max(got)} per member in a group "
                    "with no claims"
                )
        return
    for a in subscribed:
        for b in subscribed:
            if a == b:
                continue
            for t in moved[a]:
                if counts[a][t] < counts[b].get(t, 0) + 2:
                    continue
                for u in moved[b]:
                    if u != t and counts[b][u] >= counts[a].get(u, 0) + 1:
                        raise InvariantViolation(
                            f"topic spread: {names[a]!r} holds {counts[a][t]} of {t!r} and "
                            f"{names[b]!r} {counts[b].get(t, 0)}; swapping a moved {t!r} "
                            f"partition for {names[b]!r}'s moved {u!r} partition narrows it"
                        )


def check_cooperative(
    partitions_per_topic: Mapping[str, int], members: Iterable[MemberSpec], plan: PlanLike
) -> None:
    """No partition is handed to a member while another member validly owns it (KIP-429)."""
    specs = _members(members)
    layout = build_layout(partitions_per_topic, specs)
    claims = resolve_claims(layout)
    index = {mid: i for i, mid in enumerate(layout.member_ids)}
    for member_id, items in plan.items():
        m = index.get(member_id)
        for item in items:
            t = layout.topic_index.get(item[0])
            if t is None or m is None:
                continue
            owner = claims.owner[layout.offsets[t] + item[1]]
            if owner == TIED:
                raise InvariantViolation(
                    f"member {member_id!r} is given {item[0]}-{item[1]}, whose ownership is "
                    "tied at the same generation and must first be revoked by every claimant"
                )
            if owner >= 0 and owner != m:
                raise InvariantViolation(
                    f"member {member_id!r} is given {item[0]}-{item[1]} while "
                    f"{layout.member_ids[owner]!r} still owns it"
                )


def check_plan(
    partitions_per_topic: Mapping[str, int],
    members: Iterable[MemberSpec],
    plan: PlanLike,
    *,
    cooperative: bool = False,
) -> None:
    """Run every checker that applies: all of them for an eager plan; for a cooperative round
    validity, the cooperative contract and stickiness (completeness and balance hold only once
    the rounds have converged)."""
    specs = _members(members)
    check_valid(partitions_per_topic, specs, plan)
    if cooperative:
        check_cooperative(partitions_per_topic, specs, plan)
        return
    check_complete(partitions_per_topic, specs, plan)
    check_balanced(partitions_per_topic, specs, plan)
    check_sticky(partitions_per_topic, specs, plan)
    check_topic_spread(partitions_per_topic, specs, plan)
