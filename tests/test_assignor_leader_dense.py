"""The leader's bytes path writes the plan member by member from dense indices
(``core.api.DensePlan``, the seam's ``write_assignments``): a member planned exactly the
canonical owned array it sent gets that array back, without its partitions becoming tuples.
These checks hold it to the two-step reference, the tuple plan
encoded whole (``group.encode(group.plan(...))``), byte for byte and key order included, on
seeded random groups (the seed is printed) with everything that must defeat the shortcut:
invalid and contested claims, user data that adds to the owned partitions, duplicate member
ids, unreadable members, non-canonical owned arrays, both strategies, with and without racks.
"""

from __future__ import annotations

import random

import pytest

from kafka_sticky_plugin.assignor.leader import MemberMetadata, assign_group, read_group
from kafka_sticky_plugin.assignor.strategies import COOPERATIVE_STICKY, STICKY
from kafka_sticky_plugin.codec import (
    encode_sticky_user_data,
    encode_subscription,
    subscription_of,
)
from kafka_sticky_plugin.core import sticky_assign
from kafka_sticky_plugin.core.spec import MemberSpec

SEEDS = range(150)

Pairs = list[tuple[str, int]]


def _previous_plan(
    rng: random.Random, counts: dict[str, int], subs: dict[str, list[str]]
) -> dict[str, Pairs]:
    """A plausible previous assignment: the engine's plan for a perturbed group."""
    earlier = [
        MemberSpec(member_id=m, topics=topics) for m, topics in subs.items() if rng.random() < 0.8
    ]
    return sticky_assign(counts, earlier)


def _member_bytes(
    rng: random.Random, counts: dict[str, int], topics: list[str], previous: Pairs, protocol: str
) -> bytes:
    owned = list(previous)
    if rng.random() < 0.15:
        owned.append((rng.choice([*counts, "gone"]), rng.randint(-1, 60)))  # invalid or stolen
    if rng.random() < 0.1 and counts:
        name = rng.choice(list(counts))
        owned.append((name, rng.randrange(max(counts[name], 1))))  # maybe contested
    user_previous = list(previous)
    if rng.random() < 0.3 and counts:
        name = rng.choice(list(counts))
        user_previous.append((name, rng.randrange(max(counts[name], 1))))  # user data adds one
    user_data = (
        encode_sticky_user_data(user_previous, rng.choice([None, 1, 2]))
        if protocol == STICKY and rng.random() < 0.8
        else (rng.randint(0, 5).to_bytes(4, "big") if protocol == COOPERATIVE_STICKY else None)
    )
    subscription = subscription_of(
        topics,
        version=rng.choice([1, 2, 3, 3]),
        user_data=user_data,
        owned_partitions=owned if rng.random() < 0.9 else (),
        generation_id=rng.choice([-1, 1, 2, 3]),
        rack_id=rng.choice([None, "a", "b"]),
    )
    return encode_subscription(subscription)


def _random_group(
    rng: random.Random, protocol: str
) -> tuple[dict[str, int], list[MemberMetadata], dict[tuple[str, int], list[str]] | None]:
    counts = {f"t{i:02d}": rng.choice([0, 1, 2, 3, 5, 8, 20, 50]) for i in range(rng.randint(1, 8))}
    names = list(counts)
    n = rng.randint(1, 14)
    same = rng.random() < 0.4  # equal subscriptions (the quota builder) or different ones
    subs = {
        f"m{i:02d}": names if same else rng.sample(names, rng.randint(1, len(names)))
        for i in range(n)
    }
    previous = _previous_plan(rng, counts, subs) if rng.random() < 0.85 else {}
    members = [
        MemberMetadata(m, _member_bytes(rng, counts, topics, previous.get(m, []), protocol))
        for m, topics in subs.items()
    ]
    if rng.random() < 0.15:
        members.append(MemberMetadata("m00", members[0].metadata))  # a duplicate id
    if rng.random() < 0.15:
        members.append(MemberMetadata("broken", b"\x00\x03\x00"))  # unreadable
    if rng.random() < 0.1 and members:
        # a non-canonical owned array: the same pairs written in reverse topic order
        first = members[0]
        subscription = read_group(protocol, [first]).specs
        if subscription and subscription[0].owned:
            reversed_pairs = sorted(subscription[0].owned, key=lambda p: (p[0], p[1]), reverse=True)
            members[0] = MemberMetadata(
                first.member_id,
                encode_subscription(
                    subscription_of(subs[first.member_id], owned_partitions=reversed_pairs)
                ),
            )
    racks = None
    if rng.random() < 0.3:
        racks = {
            (t, p): rng.sample(["a", "b", "c"], rng.randint(1, 2))
            for t, c in counts.items()
            for p in range(c)
        }
    return counts, members, racks


@pytest.mark.parametrize("protocol", [STICKY, COOPERATIVE_STICKY])
@pytest.mark.parametrize("seed", SEEDS)
def test_member_by_member_bytes_equal_the_whole_plan_encoded(seed: int, protocol: str) -> None:
    print(f"seed={seed}")
    counts, members, racks = _random_group(random.Random(seed), protocol)
    group = read_group(protocol, members)
    reference = group.encode(group.plan(counts, partition_racks=racks))
    got = assign_group(protocol, counts, members, partition_racks=racks)
    assert list(got) == list(reference)
    assert got == reference


@pytest.mark.parametrize("protocol", [STICKY, COOPERATIVE_STICKY])
@pytest.mark.parametrize("seed", range(40))
def test_dense_encode_never_builds_partition_tuples(seed: int, protocol: str) -> None:
    """The leader's bytes path writes every member from its dense indices (or gives its owned
    block back): the plan's ``(topic, partition)`` table is never built, whatever mix of kept
    and moved members the group has (a member sent back to the tuple path fails this)."""
    print(f"seed={seed}")
    counts, members, racks = _random_group(random.Random(seed), protocol)
    group = read_group(protocol, members)
    dense = group.plan_dense(counts, partition_racks=racks)
    got = group.encode_dense(dense)
    assert dense._tuples is None
    assert dense.layout._tuples is None
    assert got == group.encode(group.plan(counts, partition_racks=racks))


def _java_user_data(rng: random.Random, previous: Pairs, generation: int) -> bytes:
    """Java's sticky user data (v1) as a Java member writes it: its topics in another order
    than sorted (hash order), each topic's partitions in order or, rarely, not."""
    by_topic: dict[str, list[int]] = {}
    for topic, partition in previous:
        by_topic.setdefault(topic, []).append(partition)
    names = list(by_topic)
    rng.shuffle(names)
    out = bytearray(len(names).to_bytes(4, "big"))
    for name in names:
        partitions = sorted(by_topic[name])
        if rng.random() < 0.05:
            rng.shuffle(partitions)
        raw = name.encode()
        out += len(raw).to_bytes(2, "big") + raw + len(partitions).to_bytes(4, "big")
        out += b"".join(p.to_bytes(4, "big") for p in partitions)
    return bytes(out + generation.to_bytes(4, "big"))


def _java_group_checked(seed: int) -> int:
    """Java members (eager sticky: no owned partitions, the previous assignment in the user
    data, topics in hash order), many of whose plans are exactly their claims: same bytes as
    the reference; returns how many members were planned exactly their claims (seed
    printed)."""
    print(f"seed={seed}")
    rng = random.Random(seed)
    counts = {f"t{i:02d}": rng.choice([0, 1, 2, 3, 8, 20, 50]) for i in range(rng.randint(1, 30))}
    names = list(counts)
    subs = {
        f"m{i:02d}": names if rng.random() < 0.6 else rng.sample(names, rng.randint(1, len(names)))
        for i in range(rng.randint(1, 14))
    }
    previous = _previous_plan(rng, counts, subs)
    members = []
    for m, topics in subs.items():
        mine = list(previous.get(m, []))
        if rng.random() < 0.1 and counts:
            mine.append((rng.choice(names), rng.randrange(60)))  # maybe invalid or contested
        user_data = _java_user_data(rng, mine, rng.choice([1, 2, 3]))
        subscription = subscription_of(topics, version=rng.choice([1, 2, 3]), user_data=user_data)
        members.append(MemberMetadata(m, encode_subscription(subscription)))
    group = read_group(STICKY, members)
    reference = group.encode(group.plan(counts))
    got = assign_group(STICKY, counts, members)
    assert list(got) == list(reference)
    assert got == reference
    dense = group.plan_dense(counts)
    return sum(map(dense.keeps_claims, range(len(dense.layout.member_ids))))


@pytest.mark.parametrize("seed", range(150))
def test_java_members_written_from_their_claims_equal_the_whole_plan_encoded(seed: int) -> None:
    _java_group_checked(seed)


def test_java_members_planned_their_claims_are_many() -> None:
    """Many of those groups' members keep exactly their claims (else the equality above
    proves little about them)."""
    kept = sum(map(_java_group_checked, range(1000, 1060)))
    print(f"members planned exactly their claims: {kept}")
    assert kept > 40
