"""The wire layer is transparent: the leader's bytes-to-bytes path gives the engine's plan.

Hypothesis draws a group (topics, members with subscriptions, claims and generations) and a
consumer-protocol version per member; each member's metadata is written the way a client of
that version writes it (Java/librdkafka conventions), the leader's ``assign_from_bytes`` runs,
and every member's assignment, read back with kafka-python's decoder, must equal the engine's
plan for the same group given as ``MemberSpec``s. Derandomized (see ``tests/conftest.py``).
"""

from __future__ import annotations

from hypothesis import given
from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment
from strategies import versioned_groups

from kafka_sticky_plugin import CooperativeStickyAssignor, StickyAssignor
from kafka_sticky_plugin.codec import (
    Subscription,
    decode_assignment,
    encode_cooperative_user_data,
    encode_sticky_user_data,
    encode_subscription,
)
from kafka_sticky_plugin.core import MemberSpec, cooperative_assign, sticky_assign


def _gen(spec: MemberSpec) -> int | None:
    return None if spec.generation < 0 else spec.generation


def sticky_member_bytes(spec: MemberSpec, version: int) -> bytes:
    """A Java-style sticky member: ownership in sticky v1 user data; v1+ also lists it."""
    user_data = encode_sticky_user_data(spec.owned, _gen(spec)) if spec.owned else None
    return encode_subscription(
        Subscription(
            version,
            spec.topics,
            user_data,
            spec.owned if version >= 1 else (),
            spec.generation,
        )
    )


def cooperative_member_bytes(spec: MemberSpec, version: int) -> bytes:
    """v1+: owned partitions in the subscription, generation in v2 or Java's int32 user data;
    v0 (no owned field): librdkafka-style sticky user data carries both."""
    if version == 0:
        user_data = encode_sticky_user_data(spec.owned, _gen(spec))
    else:
        user_data = encode_cooperative_user_data(_gen(spec))
    return encode_subscription(
        Subscription(version, spec.topics, user_data, spec.owned, spec.generation)
    )


def _read_back(result: dict[str, bytes]) -> dict[str, list[tuple[str, int]]]:
    out = {}
    for member_id, raw in result.items():
        parsed = ConsumerProtocolAssignment.decode(raw)
        out[member_id] = [(tp.topic, tp.partition) for tp in parsed.partitions()]
    return out


@given(versioned_groups())
def test_sticky_leader_equals_engine(
    group: tuple[dict[str, int], list[tuple[MemberSpec, int]]],
) -> None:
    """sticky: leader(bytes written at mixed versions) == sticky_assign(specs)."""
    counts, members = group
    raw = {spec.member_id: sticky_member_bytes(spec, v) for spec, v in members}
    result = StickyAssignor().assign_from_bytes(counts, raw)
    expected = sticky_assign(counts, [spec for spec, _ in members])
    assert _read_back(result) == expected
    assert {decode_assignment(b).version for b in result.values()} == {min(v for _, v in members)}


@given(versioned_groups())
def test_cooperative_leader_equals_engine(
    group: tuple[dict[str, int], list[tuple[MemberSpec, int]]],
) -> None:
    """cooperative-sticky: leader(bytes written at mixed versions) == cooperative_assign(specs)."""
    counts, members = group
    raw = {spec.member_id: cooperative_member_bytes(spec, v) for spec, v in members}
    result = CooperativeStickyAssignor().assign_from_bytes(counts, raw)
    expected = cooperative_assign(counts, [spec for spec, _ in members])
    assert _read_back(result) == expected
