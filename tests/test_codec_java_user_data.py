"""Java members' sticky user data read in bulk, with the same result as the general reader.

A Java ``StickyAssignor`` member under EAGER sends no owned partitions in its subscription;
its previous assignment travels in the user data, topics in ``HashMap`` order (the same for
every member with the same topics). The leader reads it with its batch's memos
(:class:`~kafka_sticky_plugin.codec.ArrayMemos`: a repeated layout in one ``struct`` call)
and sorts the claims in C: every value, generation and error must equal what the general
reader and :class:`MemberSpec`'s own normalisation give (seeds printed).
"""

from __future__ import annotations

import random
import struct

import pytest
from codec_helpers import count_general_reads, owned_array

from kafka_sticky_plugin.assignor.leader import member_spec
from kafka_sticky_plugin.codec import (
    ArrayMemos,
    Subscription,
    SubscriptionDecoder,
    decode_subscription,
    encode_subscription,
    read_user_data_claim,
)
from kafka_sticky_plugin.core import MemberSpec
from kafka_sticky_plugin.errors import CodecError

TOPICS = [f"topic-{i:04d}" for i in range(40)]
SEEDS = range(60)


def _java_order(topics: list[str]) -> list[str]:
    """A fixed non-canonical order (stands in for Java's hash order)."""
    return sorted(topics, key=lambda t: t[::-1])


def _user_data(rng: random.Random, topics: list[str]) -> bytes:
    """Java-style sticky user data: ``topics`` in hash order, one or more partitions each
    (sometimes unsorted or repeated), then v1's generation, v0 (none), or a damaged tail."""
    groups = []
    for t in _java_order(topics):
        ps = sorted(rng.sample(range(64), rng.choice([1, 1, 1, 2, 5])))
        if rng.random() < 0.05:
            ps = [*ps, ps[0]]  # a repeat
        groups.append((t, ps))
    tail = rng.choice(
        [struct.pack(">i", rng.randint(-3, 9))] * 6 + [b"", b"\x00\x01", b"\x00" * 6, b"x" * 9]
    )
    raw = owned_array(groups) + tail
    if rng.random() < 0.05:
        raw = raw[: rng.randrange(len(raw))]
    return raw


def _claim(user_data: bytes, arrays: ArrayMemos | None) -> object:
    try:
        return read_user_data_claim(user_data, cooperative=False, arrays=arrays)
    except CodecError as exc:
        return (exc.what, exc.expected, exc.offset)


@pytest.mark.parametrize("seed", SEEDS)
def test_batched_user_data_reads_like_the_general_reader(seed: int) -> None:
    print(f"seed={seed}")
    rng = random.Random(seed)
    arrays = ArrayMemos()
    subsets = [TOPICS[: rng.randint(1, 40)] for _ in range(3)]
    for _ in range(30):
        raw = _user_data(rng, rng.choice(subsets))
        assert _claim(raw, arrays) == _claim(raw, None)


def test_repeated_java_layouts_skip_the_general_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    """One partition of each topic in the same hash order: after the first member, the
    user data is read by the learned layout (else the equality above proves nothing)."""
    seed = random.randrange(2**32)
    print(f"seed={seed}")
    rng = random.Random(seed)
    order = _java_order(TOPICS[:24])
    batch = [
        owned_array([(t, [rng.randrange(100)]) for t in order]) + struct.pack(">i", 3)
        for _ in range(8)
    ]
    expected = [_claim(raw, None) for raw in batch]
    calls = count_general_reads(monkeypatch)
    arrays = ArrayMemos()
    assert [_claim(raw, arrays) for raw in batch] == expected
    assert len(calls) == 1


@pytest.mark.parametrize("seed", SEEDS)
def test_java_members_specs_equal_the_normalised_specs(seed: int) -> None:
    """The leader's spec of a Java member (claims sorted in C, then taken as canonical) is
    the spec :class:`MemberSpec` normalises from the general reader's pairs."""
    print(f"seed={seed}")
    rng = random.Random(seed)
    decoder = SubscriptionDecoder()
    for i in range(12):
        topics = TOPICS[: rng.randint(1, 40)]
        user_data = _user_data(rng, topics)
        raw = encode_subscription(Subscription(3, tuple(topics), user_data, (), 1, None))
        subscription, block = decoder.decode_with_owned_block(raw)
        got = member_spec(f"m{i}", subscription, "sticky", owned_block=block, arrays=decoder.arrays)
        plain = decode_subscription(raw)
        try:  # unreadable user data: no history, the subscription's generation
            previous, ud_generation = read_user_data_claim(user_data, cooperative=False)
        except CodecError:
            previous, ud_generation = [], -1
        owned = previous or []
        want = MemberSpec(
            member_id=f"m{i}", topics=plain.topics, owned=owned, generation=max(1, ud_generation)
        )
        assert got == want
        assert got.owned == tuple(sorted(set(owned)))


@pytest.mark.parametrize("seed", SEEDS)
def test_member_spec_sorts_plain_pairs_like_the_one_by_one_rule(seed: int) -> None:
    print(f"seed={seed}")
    rng = random.Random(seed)
    pairs = [(rng.choice(TOPICS[:5]), rng.randrange(20)) for _ in range(rng.randint(1, 60))]
    for owned in (pairs, tuple(pairs)):
        spec = MemberSpec(member_id="m", topics=TOPICS[:5], owned=owned)
        assert spec.owned == tuple(sorted(set(pairs)))
