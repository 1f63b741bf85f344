"""The reference of ``metrics/leader_round.py`` (issue 37): the leader's round description as
it was before it read the engine's own results, kept verbatim below this docstring (its
classification rebuilt from the members' claims and the plan as ``(topic, partition)``
tuples, per member and per topic), so that the metrics module can be checked against it on
every input (``tests/test_metrics_leader_round.py``). Its meaning is the metrics module's
docstring."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat
from operator import itemgetter

from kafka_sticky_plugin.core import MemberSpec

__all__ = ["LeaderRound", "leader_round"]

Partition = tuple[str, int]


@dataclass(frozen=True)
class LeaderRound:
    """One leader assignment: timings (seconds) and counts (see the module docstring)."""

    decode_s: float
    engine_s: float
    encode_s: float
    members: int
    unreadable: int
    partitions: int
    claims: int
    honoured: int
    moved: int
    stale: int
    contested: int
    invalid: int
    rack_local: int
    rack_eligible: int


def leader_round(
    specs: Sequence[MemberSpec],
    unreadable: int,
    partitions_per_topic: Mapping[str, int],
    plan: Mapping[str, Iterable[Partition]],
    partition_racks: Mapping[Partition, Iterable[str]] | None,
    *,
    decode_s: float,
    engine_s: float,
    encode_s: float,
) -> LeaderRound:
    """Classify every claim of ``specs`` against ``plan`` (see the module docstring).

    Speed (a leader may read a million claims): each member's valid claims are one C-level
    set intersection with its topics' partitions, and when no partition is claimed twice (a
    healthy group) honoured claims are one intersection with the member's plan; only a
    group with duplicate claims walks them one by one."""
    universe: dict[str, frozenset[Partition]] = {}
    valid: list[tuple[MemberSpec, Collection[Partition]]] = []
    invalid = 0
    for spec in specs:
        owned = spec.owned
        if not owned:
            continue
        if _all_valid(owned, spec.topics, partitions_per_topic):
            valid.append((spec, owned))
            continue
        mine: set[Partition] = set()
        for topic in set(map(itemgetter(0), owned)) & set(spec.topics):
            if topic not in universe:
                count = partitions_per_topic.get(topic, 0)
                universe[topic] = frozenset(zip(repeat(topic), range(count)))
            mine |= universe[topic].intersection(owned)  # iterates ``owned`` only
        invalid += len(owned) - len(mine)
        valid.append((spec, mine))
    total_valid = sum(len(mine) for _, mine in valid)
    if len(set().union(*(mine for _, mine in valid))) == total_valid:  # no partition claimed twice
        honoured = sum(_kept(mine, plan.get(spec.member_id, ())) for spec, mine in valid)
        counts = (honoured, total_valid - honoured, 0, 0)
    else:
        counts = _contested(valid, plan)
    local, eligible = _rack_locality(specs, plan, partition_racks)
    honoured, moved, stale, contested = counts
    return LeaderRound(
        decode_s=decode_s,
        engine_s=engine_s,
        encode_s=encode_s,
        members=len(specs) + unreadable,
        unreadable=unreadable,
        partitions=sum(len(list(partitions)) for partitions in plan.values()),
        claims=sum(len(spec.owned) for spec in specs),
        honoured=honoured,
        moved=moved,
        stale=stale,
        contested=contested,
        invalid=invalid,
        rack_local=local,
        rack_eligible=eligible,
    )


def _all_valid(
    owned: tuple[Partition, ...], topics: Iterable[str], partitions_per_topic: Mapping[str, int]
) -> bool:
    """Whether every claim of a canonical ``owned`` (sorted, one topic) is a partition of a
    subscribed topic: its first and last claims bound the rest. Claims of several topics
    answer ``False`` (the caller then checks them one set at a time)."""
    topic = owned[0][0]
    if owned[-1][0] != topic or topic not in topics:
        return False
    return owned[0][1] >= 0 and owned[-1][1] < partitions_per_topic.get(topic, 0)


def _kept(mine: Collection[Partition], planned: Iterable[Partition]) -> int:
    """How many of ``mine`` are in ``planned`` (a member's plan, canonical)."""
    if not isinstance(planned, (list, tuple)):
        planned = list(planned)
    if len(planned) == len(mine) and list(planned) == list(mine):
        return len(mine)  # the member keeps exactly what it claimed (C-level compare)
    return len(set(planned).intersection(mine))


def _contested(
    valid: Sequence[tuple[MemberSpec, Collection[Partition]]],
    plan: Mapping[str, Iterable[Partition]],
) -> tuple[int, int, int, int]:
    """(honoured, moved, stale, contested) when some partitions have several claimants."""
    owner_of: dict[Partition, str] = {}
    for member_id, partitions in plan.items():
        for tp in partitions:
            owner_of[tp] = member_id
    # partition -> (highest generation, claimants at it, claims below it)
    best: dict[Partition, tuple[int, list[str], int]] = {}
    for spec, mine in valid:
        for tp in mine:
            seen = best.get(tp)
            if seen is None or spec.generation > seen[0]:
                below = 0 if seen is None else seen[2] + len(seen[1])
                best[tp] = (spec.generation, [spec.member_id], below)
            elif spec.generation == seen[0]:
                seen[1].append(spec.member_id)
            else:
                best[tp] = (seen[0], seen[1], seen[2] + 1)
    honoured = moved = stale = contested = 0
    for tp, (_, claimants, below) in best.items():
        stale += below
        if len(claimants) > 1:
            contested += len(claimants)
        elif owner_of.get(tp) == claimants[0]:
            honoured += 1
        else:
            moved += 1
    return honoured, moved, stale, contested


def _rack_locality(
    specs: Sequence[MemberSpec],
    plan: Mapping[str, Iterable[Partition]],
    partition_racks: Mapping[Partition, Iterable[str]] | None,
) -> tuple[int, int]:
    if not partition_racks:
        return 0, 0
    rack_of = {spec.member_id: spec.rack for spec in specs if spec.rack}
    local = eligible = 0
    for member_id, partitions in plan.items():
        rack = rack_of.get(member_id)
        if rack is None:
            continue
        for tp in partitions:
            racks = partition_racks.get(tp)
            if racks:
                eligible += 1
                local += rack in set(racks)
    return local, eligible
