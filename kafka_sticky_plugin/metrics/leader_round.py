"""What one leader assignment did, read from the engine's own results (pure).

Only the leader sees every member's claims and the whole plan, so only it can say how many
partitions moved and why a claim was not honoured. :func:`leader_round` reads the engine's
:class:`~kafka_sticky_plugin.core.api.DensePlan`: its validated claims
(:class:`~kafka_sticky_plugin.core.claims.Claims`: each member's valid claims, the claims
owner of every partition, the invalid claims counted) and the plan, both on dense partition
indices. Every claim is one of:

- **invalid**: an unknown topic, a topic the claimant does not subscribe to, or a partition
  out of range (ignored by the engine);
- **stale**: another member claims the same partition with a higher generation;
- **contested**: several members claim it at the same highest generation (nobody owns it);
- **honoured**: the single valid owner keeps it in the plan;
- otherwise the owner loses it to balance: that partition **moved** (under cooperative-sticky
  it is withheld this round and revoked by its owner; under sticky it goes to another member).

So ``honoured + moved + stale + contested + invalid == claims``. Partitions of members that
left are claimed by nobody and are not counted as moved.

Rack locality counts the plan's partitions that have replica racks and whose member reports
a rack: ``rack_local`` of those ``rack_eligible`` have a replica in the member's rack.

Cost: linear in partitions and claims, nothing rebuilt as ``(topic, partition)`` tuples
except to look up replica racks (keyed so by the caller): the counts of the healthy case
(no partition claimed twice) are a C-level pass over each member's plan; only the claims a
member lost to another claimant are visited one by one, as the engine visited them.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Mapping
from dataclasses import dataclass
from itertools import repeat
from operator import contains
from typing import cast

from ..core.api import DensePlan
from ..core.claims import TIED, Claims

__all__ = ["LeaderRound", "leader_round"]

Partition = tuple[str, int]


@dataclass(frozen=True)
class LeaderRound:
    """One leader assignment: timings (seconds) and counts (see the module docstring).

    ``describe_s`` is the time spent computing this description, part of the leader's
    latency as the other three steps are."""

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
    describe_s: float = 0.0


def leader_round(
    plan: DensePlan,
    readable: int,
    unreadable: int,
    partition_racks: Mapping[Partition, Iterable[str]] | None,
    *,
    decode_s: float,
    engine_s: float,
    encode_s: float,
) -> LeaderRound:
    """Classify every claim the engine read against its ``plan`` (see the module docstring);
    ``readable`` and ``unreadable``: how many members the leader could and could not read."""
    claims = plan.claims
    members = range(len(plan.layout.member_ids))
    valid = sum(map(len, claims.claimed))
    won = sum(map(len, claims.owned))  # partitions with a single valid owner
    honoured = partitions = 0
    for m in members:
        planned = plan.indices(m)
        partitions += len(planned)
        if claims.owned[m]:
            honoured += _kept(claims, m, planned)
    contested = _contested(claims, [spec.generation for spec in plan.layout.specs])
    local, eligible = _rack_locality(plan, partition_racks)
    return LeaderRound(
        decode_s=decode_s,
        engine_s=engine_s,
        encode_s=encode_s,
        members=readable + unreadable,
        unreadable=unreadable,
        partitions=partitions,
        claims=valid + claims.ignored,
        honoured=honoured,
        moved=won - honoured,
        stale=valid - won - contested,
        contested=contested,
        invalid=claims.ignored,
        rack_local=local,
        rack_eligible=eligible,
    )


def _kept(claims: Claims, m: int, planned: Iterable[int]) -> int:
    """How many of member ``m``'s ``planned`` partitions it validly owns (one C-level pass)."""
    return list(map(claims.owner.__getitem__, planned)).count(m)


def _contested(claims: Claims, generations: list[int]) -> int:
    """How many valid claims are at the highest generation of a tied partition (the policy
    gives it to nobody). Only a member that lost some of its valid claims can hold one."""
    owner = claims.owner
    tied = [
        (q, generations[m])
        for m, (mine, won) in enumerate(zip(claims.claimed, claims.owned, strict=True))
        if len(won) < len(mine)
        for q in mine
        if owner[q] == TIED
    ]
    highest: dict[int, int] = {}
    for q, generation in tied:
        highest[q] = max(generation, highest.get(q, generation))
    return sum(generation == highest[q] for q, generation in tied)


def _rack_locality(
    plan: DensePlan, partition_racks: Mapping[Partition, Iterable[str]] | None
) -> tuple[int, int]:
    """``(rack_local, rack_eligible)``: each racked member's planned partitions with replica
    racks, and those with one in its rack (C-level passes over its plan)."""
    layout = plan.layout
    racked = [(m, spec.rack) for m, spec in enumerate(layout.specs) if spec.rack]
    if not partition_racks or not racked:
        return 0, 0
    tuples = layout.partition_tuples()
    # ``rack in racks`` reads any iterable of names (the type the adapters pass is a tuple)
    racks_of = cast(Callable[[Partition, tuple[()]], Container[str]], partition_racks.get)
    local = eligible = 0
    for m, rack in racked:
        keys = map(tuples.__getitem__, plan.indices(m))
        replicas: list[Container[str]] = list(filter(None, map(racks_of, keys, repeat(()))))
        eligible += len(replicas)
        local += sum(map(contains, replicas, repeat(rack)))
    return local, eligible
