"""The layout's member merge: distinct ids (a few C-level passes) against the one-by-one merge.

:func:`~kafka_sticky_plugin.core.layout.merge_duplicate_members` takes a shortcut when no
member id repeats (every healthy group): the specs sorted by id, each the very object given.
On seeded random groups (the seed is printed), with and without repeated ids and in any input
order, it must give what the one-member-at-a-time merge gives: the same specs, field by
field, in the same order, and the same objects wherever a member was not merged.
"""

from __future__ import annotations

import random

import pytest

from kafka_sticky_plugin.core.layout import _merged_by_id, merge_duplicate_members
from kafka_sticky_plugin.core.spec import MemberSpec
from kafka_sticky_plugin.errors import InvalidSpecError

SEEDS = range(300)


def _random_specs(rng: random.Random, repeat_ids: bool) -> list[MemberSpec]:
    """Members with random topics, claims, generations, racks and instance ids; ids drawn
    from a small pool when ``repeat_ids`` (some repeat), else all distinct; shuffled."""
    names = [f"t{i}" for i in range(rng.randint(1, 6))]
    n = rng.randint(0, 20)
    pool = [f"m{i:02d}" for i in range(max(1, n // 2))] if repeat_ids else None
    ids = [rng.choice(pool) for _ in range(n)] if pool else [f"m{i:02d}" for i in range(n)]
    rng.shuffle(ids)
    return [
        MemberSpec(
            member_id=member_id,
            topics=rng.sample(names, rng.randint(0, len(names))),
            owned=[(rng.choice(names), rng.randint(0, 9)) for _ in range(rng.randint(0, 4))],
            generation=rng.choice([-1, 1, 2, 3]),
            rack=rng.choice([None, "r1", "r2"]),
            instance_id=rng.choice([None, None, f"i{rng.randint(0, 3)}"]),
        )
        for member_id in ids
    ]


def _fields(spec: MemberSpec) -> tuple[object, ...]:
    return (
        spec.member_id,
        spec.topics,
        spec.owned,
        spec.generation,
        spec.rack,
        spec.instance_id,
    )


@pytest.mark.parametrize("seed", SEEDS)
def test_merge_equals_the_one_by_one_merge(seed: int) -> None:
    print(f"seed={seed}")
    rng = random.Random(seed)
    specs = _random_specs(rng, repeat_ids=rng.random() < 0.5)
    got = merge_duplicate_members(iter(specs))
    want = _merged_by_id(list(specs))
    assert list(map(_fields, got)) == list(map(_fields, want))
    given = {id(spec) for spec in specs}
    # a member given once comes back as the very object given, in both paths
    assert [id(s) in given for s in got] == [id(s) in given for s in want]
    assert [s is w for s, w in zip(got, want, strict=True) if id(w) in given] == [
        True for w in want if id(w) in given
    ]


def test_merge_names_the_first_member_that_is_not_a_spec() -> None:
    spec = MemberSpec(member_id="a", topics=["t"])
    with pytest.raises(InvalidSpecError, match="expected MemberSpec, got dict"):
        merge_duplicate_members([spec, {"member_id": "b"}, "c"])  # type: ignore[list-item]
