"""The bulk rack pass (``core/rack_flow.py``) against its one-step reference
(``tests/rack_flow_reference.py``, the first exact pass, one Python step per partition):
identical plans, bit for bit, on seeded random groups of every kind (equal and different
subscriptions, fresh, rebalanced, tied claims with hints, partitions without replica racks,
rack entries for unknown topics and partitions)."""

from __future__ import annotations

import random

import pytest
import rack_flow_reference

from kafka_sticky_plugin.core import MemberSpec, cooperative_assign, sticky_assign
from kafka_sticky_plugin.core import racks as racks_module

Racks = dict[tuple[str, int], tuple[str, ...]]


def random_case(rng: random.Random) -> tuple[dict[str, int], list[MemberSpec], Racks]:
    """2-8 topics of 0-60 partitions, 3-30 members (equal subscriptions half the time), racks
    r0-r4 or none, replicas on 0-3 of r0-r5; ownership from a plan of a different group,
    some members at the same generation claiming the same partitions."""
    parts = {f"t{i}": rng.randint(0, 60) for i in range(rng.randint(2, 8))}
    names = sorted(parts)
    n = rng.randint(3, 30)
    equal = rng.random() < 0.5
    subs = {
        f"m{i:02d}": names if equal else rng.sample(names, rng.randint(1, len(names)))
        for i in range(n)
    }
    rack_of = {m: rng.choice([None, "r0", "r1", "r2", "r3", "r4"]) for m in subs}
    racks: Racks = {
        (t, p): tuple(rng.sample(["r0", "r1", "r2", "r3", "r4", "r5"], rng.randint(0, 3)))
        for t, c in parts.items()
        for p in range(c)
        if rng.random() < 0.95
    }
    racks[("ghost", 0)] = ("r0",)
    racks[(names[0], 10_000)] = ("r1",)
    owned: dict[str, list[tuple[str, int]]] = {}
    if rng.random() < 0.8:
        before = [
            MemberSpec(member_id=m, topics=ts) for m, ts in subs.items() if rng.random() < 0.8
        ]
        owned = dict(sticky_assign(parts, before))
        for m in rng.sample(sorted(subs), min(3, n)):  # some contested claims
            extra = rng.choice(names)
            owned.setdefault(m, []).extend((extra, p) for p in range(0, parts[extra], 3))
    members = [
        MemberSpec(
            member_id=m,
            topics=ts,
            rack=rack_of[m],
            owned=owned.get(m, []),
            generation=rng.randint(0, 2),
        )
        for m, ts in subs.items()
    ]
    return parts, members, racks


@pytest.mark.parametrize("seed", range(24))
def test_bulk_rack_pass_equals_its_one_step_reference(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    print(f"seed={seed}")
    parts, members, racks = random_case(random.Random(seed))
    bulk = sticky_assign(parts, members, partition_racks=racks)
    bulk_coop = cooperative_assign(parts, members, partition_racks=racks)
    monkeypatch.setattr(racks_module, "place_by_racks", rack_flow_reference.place_by_racks)
    assert sticky_assign(parts, members, partition_racks=racks) == bulk
    assert cooperative_assign(parts, members, partition_racks=racks) == bulk_coop


@pytest.mark.parametrize("partition", [1.0, True, "1"])
def test_a_partition_that_is_not_an_int_is_named_in_a_type_error(partition: object) -> None:
    """A replica-racks key whose partition is not an int (``1.0`` equals ``1`` as a dict key
    elsewhere) is refused with a TypeError naming the key, never a bare indexing error."""
    members = [
        MemberSpec(member_id="a", topics=["t"], rack="r1"),
        MemberSpec(member_id="b", topics=["t"], rack="r2"),
    ]
    racks = {("t", 0): ("r1",), ("t", partition): ("r2",)}
    with pytest.raises(TypeError, match=r"partition_racks key \('t', .*\): a partition number"):
        sticky_assign({"t": 2}, members, partition_racks=racks)  # type: ignore[arg-type]
