"""KIP-881's rebalance trigger (:mod:`kafka_sticky_plugin.assignor.rack_changes`): a change of
the racks of a partition's replicas counts, a broker that is only absent never does."""

from __future__ import annotations

import os
import random

from kafka_sticky_plugin.assignor.rack_changes import (
    Placement,
    RackTracker,
    Replicas,
    changed_partitions,
    partition_racks_of,
)

RACK = {1: "r0", 2: "r1", 3: "r2", 4: "r0", 5: "r1", 6: "r2"}  # broker -> rack, two per rack


def by_topic(pairs: dict[tuple[str, int], Replicas]) -> Placement:
    """``{(topic, partition): replicas}`` as a placement: per topic, indexed by partition,
    ``None`` for a partition not listed."""
    out: dict[str, list[Replicas | None]] = {}
    for (topic, partition), replicas in sorted(pairs.items()):
        listed = out.setdefault(topic, [])
        listed.extend([None] * (partition + 1 - len(listed)))
        listed[partition] = replicas
    return out


def placement(
    replicas: dict[tuple[str, int], list[int]], absent: frozenset[int] | set[int] = frozenset()
) -> Placement:
    """``replicas`` as a placement read from metadata where the brokers in ``absent`` are
    missing (offline)."""
    return by_topic(
        {
            tp: tuple(sorted((b, None if b in absent else RACK[b]) for b in ids))
            for tp, ids in replicas.items()
        }
    )


def test_a_broker_bounce_is_no_change() -> None:
    replicas = {("t", 0): [1, 2], ("t", 1): [2, 3], ("t", 2): [3, 1]}
    before = placement(replicas)
    for down in (1, 2, 3):
        during = placement(replicas, absent={down})
        assert changed_partitions(before, during) == []
        assert changed_partitions(during, before) == []  # a replica offline at assign time
    assert changed_partitions(before, placement(replicas)) == []


def test_a_replica_moved_to_another_rack_is_a_change() -> None:
    before = placement({("t", 0): [1, 2], ("t", 1): [2, 3]})
    after = placement({("t", 0): [3, 2], ("t", 1): [2, 3]})  # r0 -> r2 for partition 0
    assert changed_partitions(before, after) == [("t", 0)]


def test_a_replica_moved_within_its_rack_is_no_change() -> None:
    before = placement({("t", 0): [1, 2]})
    assert changed_partitions(before, placement({("t", 0): [4, 2]})) == []  # r0 -> r0


def test_a_broker_back_with_another_rack_is_a_change() -> None:
    before = placement({("t", 0): [1, 2]})
    after = by_topic({("t", 0): ((1, "r5"), (2, "r1"))})
    assert changed_partitions(before, after) == [("t", 0)]


def test_a_new_replica_whose_broker_is_absent_is_no_change() -> None:
    before = placement({("t", 0): [1, 2]})
    assert changed_partitions(before, placement({("t", 0): [1, 2, 3]}, absent={3})) == []
    # ...and the moved replica's new broker absent: only the rack that left counts
    assert changed_partitions(before, placement({("t", 0): [3, 2]}, absent={3})) == [("t", 0)]


def test_partitions_on_one_side_only_are_left_to_the_client() -> None:
    before = placement({("t", 0): [1]})
    assert changed_partitions(before, placement({("t", 0): [1], ("t", 1): [3]})) == []
    assert changed_partitions(before, {}) == []


def test_no_rack_brokers_count_as_no_rack() -> None:
    assert partition_racks_of(((1, ""), (2, None)), ((2, "r1"),)) == frozenset({"r1"})
    no_rack, racked = by_topic({("t", 0): ((1, ""),)}), by_topic({("t", 0): ((1, "r0"),)})
    assert changed_partitions(no_rack, racked) == [("t", 0)]


def test_random_bounces_never_count_and_cross_rack_moves_always_do() -> None:
    """Seeded: random placements over 6 brokers, random sets of absent brokers on either side
    (never a change), then one replica moved to a broker of a rack the partition had not
    (always a change, whatever is absent on the side that knows the replica)."""
    seed = int(os.environ.get("RACK_CHANGES_SEED", random.randrange(2**32)))
    print(f"seed {seed}")
    rng = random.Random(seed)
    for _ in range(300):
        replicas = {("t", p): rng.sample(sorted(RACK), rng.randint(1, 3)) for p in range(8)}
        before = placement(replicas, absent=set(rng.sample(sorted(RACK), rng.randint(0, 2))))
        during = placement(replicas, absent=set(rng.sample(sorted(RACK), rng.randint(0, 3))))
        assert changed_partitions(before, during) == [], (seed, before, during)
        tp = ("t", rng.randrange(8))
        racks = {RACK[b] for b in replicas[tp]}
        targets = [b for b in RACK if RACK[b] not in racks]
        if not targets:
            continue
        moved = dict(replicas)
        gone = rng.choice(replicas[tp])
        moved[tp] = [b for b in replicas[tp] if b != gone] + [rng.choice(targets)]
        before_all = placement(replicas)
        assert changed_partitions(before_all, placement(moved)) == [tp], (seed, replicas, moved)


def test_the_tracker_rebalances_once_and_only_for_groups_with_racks() -> None:
    before = placement({("t", 0): [1, 2]})
    moved = placement({("t", 0): [3, 2]})
    tracker = RackTracker()
    tracker.remember(before, [None, None])  # no member has a rack
    assert not tracker.tracking and tracker.check(moved) == []
    tracker.remember(before, [None, "r0"])
    assert tracker.check(placement({("t", 0): [1, 2]}, absent={1})) == []
    assert tracker.check(moved) == [("t", 0)]
    assert not tracker.tracking and tracker.check(moved) == []  # once
    tracker.remember(before, ["r0"])
    tracker.forget()  # a new JoinGroup
    assert tracker.check(moved) == []
    tracker.remember(None, ["r0"])  # no metadata read
    assert not tracker.tracking


def test_per_topic_comparison_equals_the_partition_by_partition_rule() -> None:
    """Seeded: placements with holes (partitions one side does not list), topics on one side
    only, lists of different lengths, absent brokers; ``changed_partitions`` equals the rule
    applied to every partition listed on both sides, one at a time."""
    seed = int(os.environ.get("RACK_CHANGES_SEED", random.randrange(2**32)))
    print(f"seed {seed}")
    rng = random.Random(seed)

    def draw() -> dict[tuple[str, int], Replicas]:
        return {
            (f"t{t}", p): tuple(
                sorted((b, rng.choice([RACK[b], RACK[b], None, "", "r9"])) for b in ids)
            )
            for t in range(rng.randint(0, 4))
            for p in range(rng.randint(0, 6))
            if rng.random() < 0.8
            for ids in [rng.sample(sorted(RACK), rng.randint(0, 3))]
        }

    for _ in range(300):
        then, now = draw(), draw()
        if rng.random() < 0.3:  # mostly the same: one topic's lists compared whole
            now = {**then, **dict(list(now.items())[:2])}
        expected = sorted(
            tp
            for tp in then.keys() & now.keys()
            if partition_racks_of(then[tp], now[tp]) != partition_racks_of(now[tp], then[tp])
        )
        assert changed_partitions(by_topic(then), by_topic(now)) == expected, (seed, then, now)
