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

from array import array
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat
from operator import add, itemgetter, lt, setitem

from ..core.api import DensePlan
from ..core.claims import TIED, Claims
from ..core.layout import Layout
from ..core.replica_racks import ReplicaRacks

__all__ = ["LeaderRound", "leader_round"]

Partition = tuple[str, int]


@dataclass(frozen=True)
class LeaderRound:
    """One leader assignment: timings (seconds) and counts (see the module docstring).

    ``describe_s`` is the time spent computing this description, part of the leader's
    latency as the other three steps are; ``racks_s`` the time the hooks spent reading the
    replica racks from the cluster metadata before the engine (0 when no member has a rack:
    they are not read), part of it too, as Java reads them inside the assignor's
    ``assign()``."""

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
    racks_s: float = 0.0


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
    honoured = 0
    sizes = []  # how many partitions each member is planned
    for m in members:
        planned = plan.indices(m)
        sizes.append(len(planned))
        if claims.owned[m]:
            honoured += _kept(claims, m, planned)
    contested = _contested(claims, [spec.generation for spec in plan.layout.specs])
    local, eligible = _rack_locality(plan, sizes, partition_racks)
    return LeaderRound(
        decode_s=decode_s,
        engine_s=engine_s,
        encode_s=encode_s,
        members=readable + unreadable,
        unreadable=unreadable,
        partitions=sum(sizes),
        claims=valid + claims.ignored,
        honoured=honoured,
        moved=won - honoured,
        stale=valid - won - contested,
        contested=contested,
        invalid=claims.ignored,
        rack_local=local,
        rack_eligible=eligible,
    )


def _kept(claims: Claims, m: int, planned: Sequence[int]) -> int:
    """How many of member ``m``'s ``planned`` partitions (ascending) it validly owns: all of
    them when they are its claims' own array (most members of a rebalance: the engine hands a
    member planned exactly its claims that array), else one C-level pass over their owners."""
    if planned is claims.owned[m]:
        return len(planned)
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
    plan: DensePlan, sizes: Sequence[int], partition_racks: Mapping[Partition, Iterable[str]] | None
) -> tuple[int, int]:
    """``(rack_local, rack_eligible)`` over the racked members' planned partitions (``sizes``:
    how many each member is planned), read from the engine's rack view (replica racks per
    partition index). Without one, every replica rack list names every member's rack: each
    listed partition is local."""
    layout = plan.layout
    racked = [m for m, spec in enumerate(layout.specs) if spec.rack]
    if not partition_racks or not racked:
        return 0, 0
    view = plan.racks
    if view is None:
        if _lists_every_partition(layout, partition_racks):
            eligible = sum(map(sizes.__getitem__, racked))
        else:
            listed = _listed(layout, partition_racks)
            eligible = sum(sum(map(listed.__getitem__, plan.indices(m))) for m in racked)
        return eligible, eligible
    local = eligible = 0
    for m in racked:
        held = list(map(view.partition_set.__getitem__, plan.indices(m)))  # replica rack sets
        for racks in set(held) - {0}:  # set 0: no replica racks
            eligible += held.count(racks)
            if view.member_rack[m] in view.rack_sets[racks]:
                local += held.count(racks)
    return local, eligible


def _lists_every_partition(
    layout: Layout, partition_racks: Mapping[Partition, Iterable[str]]
) -> bool:
    """Whether every partition of the layout is a key of ``partition_racks``: one look per
    topic when they are :class:`~..core.replica_racks.ReplicaRacks` (what the hooks pass,
    knowing it since they built them); otherwise whether the keys are exactly the layout's
    partitions, told in four C-level passes when it is plain (as many keys as partitions,
    every one a known topic and an int partition below every topic's count: distinct keys,
    so all of them). ``False`` when that is not so plain (then :func:`_listed` tells each
    partition)."""
    if isinstance(partition_racks, ReplicaRacks):
        return partition_racks.lists_every_partition(
            dict(zip(layout.topics, layout.counts, strict=True))
        )
    if len(partition_racks) != layout.total or not layout.total:
        return False
    if not set(map(itemgetter(0), partition_racks)) <= layout.topic_index.keys():
        return False
    partitions: list[int] = list(map(itemgetter(1), partition_racks))
    try:  # an unsigned array holds ints (and bools, equal to them) from 0 up, nothing else
        array("Q", partitions)
    except (TypeError, OverflowError):
        return False
    return max(partitions) < min(layout.counts)


def _listed(layout: Layout, partition_racks: Mapping[Partition, Iterable[str]]) -> bytearray:
    """``out[q]`` is 1 when partition ``q`` is a key of ``partition_racks`` (entries of unknown
    topics or partitions out of range are ignored). When every key is a known topic and an
    in-range int partition (what the adapters pass), a few C-level passes."""
    out = bytearray(layout.total)
    topics = list(map(itemgetter(0), partition_racks))
    partitions = list(map(itemgetter(1), partition_racks))
    try:
        ts = list(map(layout.topic_index.__getitem__, topics))
        bulk = (
            set(map(type, partitions)) <= {int}
            and min(partitions, default=0) >= 0
            and all(map(lt, partitions, map(layout.counts.__getitem__, ts)))
        )
    except KeyError:
        bulk = False
    if bulk:
        qs = map(add, map(layout.offsets.__getitem__, ts), partitions)
        deque(map(setitem, repeat(out), qs, repeat(1)), maxlen=0)
        return out
    for topic, partition in partition_racks:
        t = layout.topic_index.get(topic)
        if t is not None and isinstance(partition, int) and 0 <= partition < layout.counts[t]:
            out[layout.offsets[t] + partition] = 1
    return out
