"""``ReplicaRacks`` (kafka_sticky_plugin/core/replica_racks.py): the mapping it is equals a
brute-force dict of its topics' racks, and what it says about listed partitions equals a
brute-force recount, on seeded random topics with holes; the engine plans from it exactly
as from that dict."""

from __future__ import annotations

import random

import pytest

from kafka_sticky_plugin.core import MemberSpec, sticky_assign
from kafka_sticky_plugin.core.api import make_dense_plan
from kafka_sticky_plugin.core.replica_racks import RackNames, ReplicaRacks
from kafka_sticky_plugin.metrics.leader_round import leader_round

SEEDS = range(200)


def _by_topic(rng: random.Random) -> dict[str, list[RackNames]]:
    """A few topics, each a list of replica racks per partition, some ``()`` (none known):
    none, at the start, in the middle, at the end, or everywhere."""
    racks = [("a",), ("b",), ("a", "b"), ("a", "b", "c")]
    out: dict[str, list[RackNames]] = {}
    for t in range(rng.randint(0, 5)):
        n = rng.randint(0, 8)
        holes = rng.choice([0.0, 0.0, 0.2, 1.0])
        out[f"t{t}"] = [() if rng.random() < holes else rng.choice(racks) for _ in range(n)]
    return out


@pytest.mark.parametrize("seed", SEEDS)
def test_replica_racks_equal_a_brute_force_recount(seed: int) -> None:
    print(f"seed={seed}")
    rng = random.Random(seed)
    by_topic = _by_topic(rng)
    racks = ReplicaRacks(by_topic)
    brute = {(t, p): r for t, seq in by_topic.items() for p, r in enumerate(seq) if r}
    assert racks == brute and dict(racks) == brute and len(racks) == len(brute)
    assert set(racks.keys()) == brute.keys() and sorted(racks.values()) == sorted(brute.values())
    assert dict(racks.items()) == brute and set(racks) == brute.keys()
    assert all(racks[key] == r and key in racks for key, r in brute.items())
    assert ("t0", -1) not in racks and ("nowhere", 0) not in racks
    for t in [*by_topic, "nowhere"]:
        prefix = 0
        while (t, prefix) in brute:
            prefix += 1
        assert racks.listed_prefix(t) == prefix, t
    for _ in range(5):
        topics = [*by_topic, "u"]
        counts = {t: rng.randint(0, 9) for t in rng.sample(topics, rng.randint(0, len(topics)))}
        every = all((t, p) in brute for t, n in counts.items() for p in range(n))
        assert racks.lists_every_partition(counts) == every, counts
    assert ReplicaRacks.from_pairs(brute) == brute


def test_the_seeds_reach_both_answers() -> None:
    """The generator is not vacuous: whole topics, topics with holes, and partitions of a
    topic listed after a hole are all drawn."""
    seen = {"whole": 0, "hole": 0, "listed after a hole": 0}
    for seed in SEEDS:
        for seq in _by_topic(random.Random(seed)).values():
            racks = ReplicaRacks({"t": seq})
            seen["whole"] += bool(seq) and racks.lists_every_partition({"t": len(seq)})
            seen["hole"] += () in seq
            seen["listed after a hole"] += any(seq[racks.listed_prefix("t") :])
    assert all(v >= 10 for v in seen.values()), seen


def test_replica_racks_are_read_only() -> None:
    racks = ReplicaRacks({"t": [("a",)]})
    with pytest.raises(TypeError):
        racks[("t", 1)] = ("a",)  # type: ignore[index]
    with pytest.raises(AttributeError):
        racks.update({("t", 1): ("a",)})  # type: ignore[attr-defined]
    assert racks.lists_every_partition({"t": 1}) and not racks.lists_every_partition({"t": 2})


@pytest.mark.parametrize("key", [("t", -1), ("t", True), ("t", 1.0)])
def test_from_pairs_refuses_a_key_that_is_no_partition(key: tuple[str, object]) -> None:
    with pytest.raises(ValueError, match="not a partition"):
        ReplicaRacks.from_pairs({key: ("a",)})  # type: ignore[dict-item]


def test_from_pairs_keeps_empty_racks_out_and_fills_gaps() -> None:
    racks = ReplicaRacks.from_pairs({("t", 3): ["b"], ("t", 0): ("a",), ("t", 1): []})
    assert dict(racks) == {("t", 0): ("a",), ("t", 3): ("b",)}
    assert racks.listed_prefix("t") == 1


@pytest.mark.parametrize("seed", range(60))
def test_the_engine_plans_from_replica_racks_as_from_their_dict(seed: int) -> None:
    """Member racks on some members; the plan, and whether the engine built a rack view,
    are the same from a ``ReplicaRacks`` and from the dict it equals."""
    print(f"seed={seed}")
    rng = random.Random(seed)
    by_topic = _by_topic(rng)
    counts = {t: len(seq) + rng.choice([-1, 0, 0, 1]) for t, seq in by_topic.items()}
    counts = {t: n for t, n in counts.items() if n >= 0}
    specs = [
        MemberSpec(
            member_id=f"m{i}",
            topics=rng.sample(sorted(counts), rng.randint(0, len(counts))),
            rack=rng.choice([None, "a", "b", "c"]),
        )
        for i in range(rng.randint(1, 5))
    ]
    racks = ReplicaRacks(by_topic)
    as_dict = dict(racks)
    assert sticky_assign(counts, specs, partition_racks=racks) == sticky_assign(
        counts, specs, partition_racks=as_dict
    )
    views = [make_dense_plan(counts, specs, partition_racks=r).racks for r in (racks, as_dict)]
    assert views[0] == views[1]


def test_the_engine_and_the_round_read_replica_racks_without_their_keys() -> None:
    """Issue 37: a leader's rack view is read topic by topic, so the million
    ``(topic, partition)`` keys of the 1M shapes are never built: a plan with a rack pass and
    its round description leave the keyed dict unbuilt; a read by key builds it."""
    counts = {"t0": 6, "t1": 4}
    racks = ReplicaRacks({"t0": [("a",), ("b",)] * 3, "t1": [("b",), ("c",), (), ("a", "b")]})
    specs = [MemberSpec(member_id=f"m{i}", topics=["t0", "t1"], rack="abc"[i]) for i in range(3)]
    dense = make_dense_plan(counts, specs, partition_racks=racks)
    assert dense.racks is not None  # the rack view was built
    leader_round(dense, len(specs), 0, racks, decode_s=0.0, engine_s=0.0, encode_s=0.0)
    assert racks._keyed is None
    assert racks[("t1", 3)] == ("a", "b") and racks._keyed is not None
