"""The leader's round description read from the engine's results (issue 37) against its
reference (``tests/leader_round_reference.py``: the description rebuilt from the members'
claims and the plan as tuples), on seeded groups with racks, stale, contested and invalid
claims, under eager and cooperative, read from objects and from JoinGroup bytes."""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping

import leader_round_reference as reference
import pytest

from kafka_sticky_plugin.assignor.leader import MemberMetadata, read_group
from kafka_sticky_plugin.assignor.strategies import strategy_named
from kafka_sticky_plugin.codec import encode_subscription, subscription_of
from kafka_sticky_plugin.core import MemberSpec
from kafka_sticky_plugin.core.replica_racks import ReplicaRacks
from kafka_sticky_plugin.metrics import LeaderRound, RebalanceMetrics, leader_round
from kafka_sticky_plugin.metrics.observe import assign_observed

PROTOCOLS = ("sticky", "cooperative-sticky")
SEEDS = range(300)
COUNTS = (
    "members",
    "unreadable",
    "partitions",
    "claims",
    "honoured",
    "moved",
    "stale",
    "contested",
    "invalid",
    "rack_local",
    "rack_eligible",
)

Racks = dict[tuple[str, int], Iterable[str]]


def _group(
    rng: random.Random,
) -> tuple[dict[str, int], list[MemberSpec], Racks | None]:
    """Topics (some unknown to the cluster), members claiming partitions that are theirs,
    another member's (at a lower, equal or higher generation), unknown, unsubscribed or out
    of range; racks on some members and partitions (missing and empty entries, and racks no
    member is on, too)."""
    topics = [f"t{i}" for i in range(rng.randint(1, 6))]
    known = {t: rng.randint(0, 12) for t in topics if rng.random() < 0.9}
    racks = [f"r{i}" for i in range(rng.randint(1, 3))]
    pool = [(t, p) for t in topics for p in range(-1, known.get(t, 3) + 2)]
    specs = []
    for i in range(rng.randint(1, 9)):
        subscribed = rng.sample(topics, rng.randint(1, len(topics)))
        mine = [tp for tp in pool if tp[0] in subscribed or rng.random() < 0.05]
        owned = rng.sample(mine, min(len(mine), rng.randint(0, 8)))
        specs.append(
            MemberSpec(
                member_id=f"m{i}",
                topics=subscribed,
                owned=owned,
                generation=rng.choice([-1, 1, 2, 2, 3]),
                rack=rng.choice([None, *racks]),
            )
        )
    if rng.random() < 0.3:
        return known, specs, None
    values: list[Iterable[str]] = [(), ["zz"], *([r] for r in racks), tuple(racks)]
    listed = 0.8
    if rng.random() < 0.3:  # every replica list names every rack: the engine needs no view
        values = [tuple(racks), list(racks)]
        listed = rng.choice([0.8, 1.0])
    partition_racks: Racks = {
        (t, p): rng.choice(values)
        for t, n in known.items()
        for p in range(n)
        if rng.random() < listed
    }
    if rng.random() < 0.3:  # entries the engine ignores: an unknown topic, out of range
        partition_racks[("unknown", 0)] = values[-1]
        partition_racks[(topics[0], known.get(topics[0], 0))] = values[-1]
        partition_racks[(topics[0], -1)] = values[-1]
    return known, specs, partition_racks


class Recorded(RebalanceMetrics):
    """A recorder that also keeps every round it was given."""

    def __init__(self) -> None:
        super().__init__("g")
        self.rounds: list[LeaderRound] = []

    def leader_assigned(self, round_: LeaderRound) -> None:
        self.rounds.append(round_)
        super().leader_assigned(round_)


def _counts(round_: LeaderRound | reference.LeaderRound) -> dict[str, int]:
    return {name: getattr(round_, name) for name in COUNTS}


def _described(
    protocol: str,
    counts: Mapping[str, int],
    specs: list[MemberSpec],
    racks: Mapping[tuple[str, int], Iterable[str]] | None,
    unreadable: int = 0,
) -> tuple[dict[str, int], dict[str, int]]:
    """(new, reference) counts of the engine's plan of ``specs``."""
    plan = strategy_named(protocol).assign_dense(counts, specs, partition_racks=racks)
    new = leader_round(
        plan, len(specs), unreadable, racks, decode_s=0.0, engine_s=0.0, encode_s=0.0
    )
    old = reference.leader_round(
        specs,
        unreadable,
        counts,
        plan.all_partitions(),
        racks,
        decode_s=0.0,
        engine_s=0.0,
        encode_s=0.0,
    )
    return _counts(new), _counts(old)


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("seed", SEEDS)
def test_description_equals_the_reference(seed: int, protocol: str) -> None:
    print(f"seed={seed}")
    counts, specs, racks = _group(random.Random(seed))
    new, old = _described(protocol, counts, specs, racks)
    assert new == old


def member_bytes(specs: list[MemberSpec]) -> list[MemberMetadata]:
    """Each spec as the subscription bytes its member would send (v3: owned partitions,
    generation and rack)."""
    return [
        MemberMetadata(
            s.member_id,
            encode_subscription(
                subscription_of(
                    s.topics, owned_partitions=s.owned, generation_id=s.generation, rack_id=s.rack
                )
            ),
        )
        for s in specs
    ]


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("seed", SEEDS[:100])
def test_description_from_bytes_equals_the_reference(seed: int, protocol: str) -> None:
    """The same through the leader's bytes path (claims read as runs), one member unreadable:
    what the hooks record equals the reference on the decoded group."""
    print(f"seed={seed}")
    counts, specs, racks = _group(random.Random(seed))
    members = member_bytes(specs)
    members.append(MemberMetadata("garbage", b"\x00"))
    group = read_group(protocol, members)
    metrics = Recorded()
    out = assign_observed(metrics, group, counts, racks, decode_s=0.0)
    recorded = metrics.rounds
    assert out == group.assign(counts, partition_racks=racks)
    plan = group.plan(counts, partition_racks=racks)
    old = reference.leader_round(
        group.specs, 1, counts, plan, racks, decode_s=0.0, engine_s=0.0, encode_s=0.0
    )
    assert _counts(recorded[0]) == _counts(old)
    assert recorded[0].describe_s >= 0.0


def _as_hooks_pass(racks: Racks) -> ReplicaRacks:
    """``racks`` as the adapters' ``replica_racks`` builds them: keys that are no partition
    (negative; the engine and the description ignore them) left out."""
    return ReplicaRacks.from_pairs({key: r for key, r in racks.items() if key[1] >= 0})


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("seed", SEEDS)
def test_description_from_replica_racks_equals_the_reference(seed: int, protocol: str) -> None:
    """The hooks' typed replica racks (which tell in one look per topic that every partition
    is listed) give the description the plain dict gives, and the reference's."""
    print(f"seed={seed}")
    counts, specs, racks = _group(random.Random(seed))
    if racks is None:
        return
    typed = _as_hooks_pass(racks)
    new, old = _described(protocol, counts, specs, typed)
    assert new == old
    assert new == _described(protocol, counts, specs, racks)[0]


def test_replica_racks_reach_both_answers_without_a_rack_view() -> None:
    """Over the seeds, groups without a rack view whose typed racks list every partition
    and groups whose typed racks do not are both drawn, with racked members planned."""
    seen = {"whole": 0, "not whole": 0}
    for seed in SEEDS:
        counts, specs, racks = _group(random.Random(seed))
        if racks is None:
            continue
        typed = _as_hooks_pass(racks)
        plan = strategy_named("sticky").assign_dense(counts, specs, partition_racks=typed)
        if plan.racks is None and any(s.rack for s in specs) and any(counts.values()):
            seen["whole" if typed.lists_every_partition(counts) else "not whole"] += 1
    assert all(v >= 10 for v in seen.values()), seen


def test_the_groups_reach_every_kind_of_claim() -> None:
    """The generator is not vacuous: over the seeds every count is seen non-zero."""
    seen = dict.fromkeys([*COUNTS, "rack_local without a rack view"], 0)
    for seed in SEEDS:
        counts, specs, racks = _group(random.Random(seed))
        new, _ = _described("cooperative-sticky", counts, specs, racks)
        for name, value in new.items():
            seen[name] += value > 0
        plan = strategy_named("sticky").assign_dense(counts, specs, partition_racks=racks)
        seen["rack_local without a rack view"] += plan.racks is None and new["rack_local"] > 0
    assert all(seen[name] >= 10 for name in seen if name != "unreadable"), seen


def spec(
    member: str, owned: list[tuple[str, int]], generation: int, rack: str | None = None
) -> MemberSpec:
    return MemberSpec(member_id=member, topics=["t"], owned=owned, generation=generation, rack=rack)


def test_leader_round_classifies_every_claim() -> None:
    """honoured + moved + stale + contested + invalid == claims."""
    specs = [
        spec("a", [("t", 0), ("t", 1), ("t", 2), ("t", 9)], 5),  # t-9 out of range
        spec("b", [("t", 2), ("t", 3)], 4),  # t-2 stale (a has generation 5)
        spec("c", [("t", 4)], 5),
        spec("d", [("t", 4)], 5),  # t-4 contested by c and d
    ]
    new, old = _described("sticky", {"t": 6}, specs, None, unreadable=1)
    assert new == old
    # a owns t-0..2 and keeps two (4 members, 6 partitions), b keeps t-3
    assert [new[k] for k in ("honoured", "moved", "stale", "contested", "invalid")] == [
        3,
        1,
        1,
        2,
        1,
    ]
    assert new["claims"] == 8 and new["members"] == 5 and new["partitions"] == 6


def test_leader_round_rack_locality() -> None:
    """Only members with a rack and partitions with replica racks count."""
    specs = [spec("a", [("t", 0), ("t", 1)], 1, rack="r1"), spec("b", [("t", 2), ("t", 3)], 1)]
    racks: Racks = {("t", 0): ["r1"], ("t", 1): ["r2"], ("t", 2): ["r1"], ("t", 3): ["r2"]}
    new, old = _described("sticky", {"t": 4}, specs, racks)
    assert new == old
    # racks before stickiness: a gets t-0 and t-2 (on r1), b (no rack) t-1 and t-3
    assert (new["rack_local"], new["rack_eligible"]) == (2, 2)
    assert (new["honoured"], new["moved"]) == (2, 2)
    del racks[("t", 2)]  # t-2 without replica racks: still no mismatch, and not eligible
    new, old = _described("sticky", {"t": 4}, specs, racks)
    assert new == old
    assert (new["rack_local"], new["rack_eligible"], new["honoured"]) == (1, 1, 2)


@pytest.mark.parametrize(
    ("key", "listed"),
    [(("t", 1), 4), (("t", True), 4), (("t", 1.5), 3), (("t", -1), 3), (("u", 1), 3)],
)
def test_rack_locality_without_a_rack_view_tells_every_key(
    key: tuple[str, object], listed: int
) -> None:
    """Replica racks naming every member's rack (the engine builds no rack view) on as many
    keys as partitions, one of them ``key`` in place of ``("t", 1)``: the partitions listed
    are those a key equals (``True == 1``; a float, a negative partition or an unknown topic
    lists none), however plain the keys look."""
    specs = [spec("a", [("t", 0), ("t", 1)], 1, rack="r1"), spec("b", [], -1, rack="r1")]
    racks: Racks = {("t", 0): ("r1",), key: ("r1",), ("t", 2): ("r1",), ("t", 3): ("r1",)}  # type: ignore[dict-item]
    plan = strategy_named("sticky").assign_dense({"t": 4}, specs, partition_racks=racks)
    assert plan.racks is None
    new, old = _described("sticky", {"t": 4}, specs, racks)
    assert new == old
    assert (new["rack_local"], new["rack_eligible"]) == (listed, listed)


def test_leader_round_cooperative_counts_withheld_partitions_as_moved() -> None:
    """A newcomer's share is withheld from its owner's claims: moved, not honoured."""
    specs = [spec("a", [("t", p) for p in range(4)], 3), spec("b", [], -1)]
    new, old = _described("cooperative-sticky", {"t": 4}, specs, None)
    assert new == old
    assert (new["honoured"], new["moved"], new["partitions"]) == (2, 2, 2)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_duplicate_member_ids_are_described_as_the_engine_merged_them(protocol: str) -> None:
    """The one input where the description differs from the reference: two specs with one
    member id (a broker never sends that), which the engine merges into one member (the
    union of their claims). The reference counted their shared claim as contested although
    the merged member keeps it; the description counts what the engine did."""
    specs = [
        spec("a", [("t", 0), ("t", 1)], 2),
        spec("a", [("t", 1), ("t", 2)], 2),
        spec("b", [], -1),
    ]
    new, old = _described(protocol, {"t": 4}, specs, None)
    assert (old["claims"], old["contested"]) == (4, 2)
    # a claims t-0..2 once each and keeps two of them (quota 2), b gets the rest
    assert [new[k] for k in ("claims", "honoured", "moved", "stale", "contested")] == [
        3,
        2,
        1,
        0,
        0,
    ]


def test_replica_racks_naming_no_rack_are_no_replica_racks() -> None:
    """The other input where the description differs from the reference: a partition whose
    replica rack list names no rack (``[""]``; the adapters never pass one) has no replica
    racks, as the engine reads it (the reference counted it eligible, never local)."""
    specs = [spec("a", [("t", 0)], 1, rack="r1"), spec("b", [("t", 1)], 1, rack="r2")]
    racks: Racks = {("t", 0): ["r1"], ("t", 1): [""]}
    new, old = _described("sticky", {"t": 2}, specs, racks)
    assert (old["rack_local"], old["rack_eligible"]) == (1, 2)
    assert (new["rack_local"], new["rack_eligible"]) == (1, 1)


@pytest.mark.parametrize(
    "odd", [("t", 4), ("t", -1), ("u", 0)], ids=["beyond", "negative", "topic"]
)
def test_as_many_replica_entries_as_partitions_need_not_list_every_one(
    odd: tuple[str, int],
) -> None:
    """Every entry names every rack (the engine needs no rack view), as many entries as
    partitions, but one of them is not a partition: the partition it replaces is not
    eligible."""
    specs = [spec("a", [], -1, rack="r1"), spec("b", [], -1, rack="r2")]
    racks: Racks = {("t", p): ("r1", "r2") for p in range(3)}
    racks[odd] = ("r1", "r2")
    new, old = _described("sticky", {"t": 4}, specs, racks)
    assert new == old
    assert (new["rack_local"], new["rack_eligible"]) == (3, 3)
