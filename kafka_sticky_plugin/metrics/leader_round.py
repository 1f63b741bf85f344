"""What one leader assignment did, computed from the leader's own input and plan (pure).

Only the leader sees every member's claims and the whole plan, so only it can say how many
partitions moved and why a claim was not honoured. :func:`leader_round` reads the decoded
members (:class:`~kafka_sticky_plugin.core.MemberSpec`: owned partitions, generation, rack)
and the plan ``{member_id: [(topic, partition), ...]}`` and classifies every claim by the
claims policy of :mod:`kafka_sticky_plugin.core.claims`:

- **invalid**: an unknown topic, a topic the claimant does not subscribe to, or a partition
  out of range (ignored by the engine);
- **stale**: another member claims the same partition with a higher generation;
- **contested**: several members claim it at the same highest generation (nobody owns it);
- **honoured**: the single valid owner keeps it in the plan;
- otherwise the owner loses it to balance: that partition **moved** (under cooperative-sticky
  it is withheld this round and revoked by its owner; under sticky it goes to another member).

So ``honoured + moved + stale + contested + invalid == claims`` (a unit test checks it).
Partitions of members that left are claimed by nobody and are not counted as moved.

Rack locality counts the plan's partitions that have replica racks and whose member reports
a rack: ``rack_local`` of those ``rack_eligible`` have a replica in the member's rack.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..core import MemberSpec

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
    """Classify every claim of ``specs`` against ``plan`` (see the module docstring)."""
    owner_of: dict[Partition, str] = {}
    for member_id, partitions in plan.items():
        for tp in partitions:
            owner_of[tp] = member_id
    # partition -> (highest generation, claimants at it, claims below it)
    best: dict[Partition, tuple[int, list[str], int]] = {}
    invalid = 0
    for spec in specs:
        topics = frozenset(spec.topics)
        for tp in spec.owned:
            topic, partition = tp
            if topic not in topics or not 0 <= partition < partitions_per_topic.get(topic, 0):
                invalid += 1
                continue
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
    local, eligible = _rack_locality(specs, plan, partition_racks)
    return LeaderRound(
        decode_s=decode_s,
        engine_s=engine_s,
        encode_s=encode_s,
        members=len(specs) + unreadable,
        unreadable=unreadable,
        partitions=len(owner_of),
        claims=sum(len(spec.owned) for spec in specs),
        honoured=honoured,
        moved=moved,
        stale=stale,
        contested=contested,
        invalid=invalid,
        rack_local=local,
        rack_eligible=eligible,
    )


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
