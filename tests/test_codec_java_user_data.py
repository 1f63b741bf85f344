"""Java members' sticky user data as the leader reads it.

A Java ``StickyAssignor`` member under EAGER sends no owned partitions in its subscription;
its previous assignment travels in the user data, topics in ``HashMap`` order (the same for
every member with the same topics). The leader's spec of such a member (read through the
strategy's ``read_claim``) must equal what the user data reader and :class:`MemberSpec`'s
own normalisation give, damaged user data meaning no history (seeds printed).
"""

from __future__ import annotations

import random
import struct

import pytest
from codec_helpers import owned_array

from kafka_sticky_plugin.assignor.leader import member_spec
from kafka_sticky_plugin.codec import (
    Subscription,
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


@pytest.mark.parametrize("seed", SEEDS)
def test_java_members_specs_equal_the_normalised_specs(seed: int) -> None:
    """The leader's spec of a Java member is the spec :class:`MemberSpec` normalises from
    the user data reader's pairs."""
    print(f"seed={seed}")
    rng = random.Random(seed)
    for i in range(12):
        topics = TOPICS[: rng.randint(1, 40)]
        user_data = _user_data(rng, topics)
        raw = encode_subscription(Subscription(3, tuple(topics), user_data, (), 1, None))
        plain = decode_subscription(raw)
        got = member_spec(f"m{i}", plain, "sticky")
        try:  # unreadable user data: no history, the subscription's generation
            previous, ud_generation = read_user_data_claim(user_data, cooperative=False)
        except CodecError:
            previous, ud_generation = (), -1
        owned = previous
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
