"""A member whose owned partitions arrive as a null array (count -1) is written count 0.

Kafka's generated readers refuse a negative count for the assignment's non-nullable
partition array, so the leader must never hand a null array back, whatever the member sent
(issue 37: a v1+ subscription with a null owned array, planned nothing, got ``ffffffff``
back as its assignment's array). The seam decides a null array in one place: it reads as
empty and is never canonical, so it is never returned as an assignment.
"""

from __future__ import annotations

import struct

import pytest

from kafka_sticky_plugin.assignor.leader import MemberMetadata, assign_group
from kafka_sticky_plugin.codec import Assignment, encode_assignment, subscription_of
from kafka_sticky_plugin.codec import encode_subscription as encode


def _null_owned(version: int) -> bytes:
    """A subscription of topic ``t`` with null user data and a null owned array; v2+ add a
    generation of -1 (and v3 a null rack)."""
    raw = struct.pack(">hih", version, 1, 1) + b"t" + struct.pack(">ii", -1, -1)
    if version >= 2:
        raw += struct.pack(">i", -1)
    if version >= 3:
        raw += struct.pack(">h", -1)
    return raw


@pytest.mark.parametrize("protocol", ["sticky", "cooperative-sticky"])
@pytest.mark.parametrize("version", [1, 2, 3])
def test_null_owned_array_planned_nothing_gets_count_zero(protocol: str, version: int) -> None:
    """Three members hold topic ``t``'s two partitions; ``m9`` (null owned array) is planned
    nothing and gets the canonical empty assignment."""
    members = [
        MemberMetadata("m1", encode(subscription_of(["t"], version=version))),
        MemberMetadata("m2", encode(subscription_of(["t"], version=version))),
        MemberMetadata("m9", _null_owned(version)),
    ]
    out = assign_group(protocol, {"t": 2}, members)
    empty = encode_assignment(Assignment(version, ()))
    assert empty == version.to_bytes(2, "big") + bytes(4) + b"\xff\xff\xff\xff"
    assert out["m9"] == empty
    assert sorted(out) == ["m1", "m2", "m9"]


@pytest.mark.parametrize("protocol", ["sticky", "cooperative-sticky"])
def test_null_owned_array_planned_a_partition_gets_it(protocol: str) -> None:
    """A lone member with a null owned array is planned both partitions: an ordinary array."""
    out = assign_group(protocol, {"t": 2}, [MemberMetadata("m9", _null_owned(1))])
    assert out["m9"] == encode_assignment(Assignment(1, (("t", 0), ("t", 1))))
