"""The wire seam's contract (``codec/seam.py``), for every implementation of it.

``IMPLEMENTATIONS`` lists the modules that provide the seam's functions: the plain reference,
and :mod:`~kafka_sticky_plugin.codec.implementation` when the compiled twin is in use (its
functions run the twin first; ``tests/test_twin_differential.py`` compares the two
directly). Each is held to the codec's own functions (the specification): the same values,
the same canonical owned array (exactly when the writer would write those bytes), the same
errors (message and offset) in the member's place, on valid, truncated, mutated and random
bytes (Hypothesis, derandomized), and the same assignment bytes as ``encode_assignment`` of
the plan's pairs.
"""

from __future__ import annotations

from types import ModuleType

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import subscriptions

from kafka_sticky_plugin.codec import (
    Assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
    implementation,
    read_user_data_claim,
)
from kafka_sticky_plugin.codec import seam as reference
from kafka_sticky_plugin.errors import CodecError

IMPLEMENTATIONS: list[ModuleType] = [reference]
if implementation.twin is not None:
    IMPLEMENTATIONS.append(implementation)


def _spec_read(raw: bytes) -> object:
    """What the specification says of one payload: the subscription and whether its owned
    array is canonical, or the error's fields."""
    try:
        subscription = decode_subscription(raw)
    except CodecError as exc:
        return ("error", exc.what, exc.expected, exc.offset)
    return subscription


def _seam_read(implementation: ModuleType, raws: list[bytes]) -> list[object]:
    out: list[object] = []
    for raw, read in zip(raws, implementation.read_subscriptions(raws), strict=True):
        if isinstance(read, CodecError):
            out.append(("error", read.what, read.expected, read.offset))
            continue
        subscription, owned_array = read
        if owned_array is not None:
            # canonical: the writer writes exactly these bytes for those pairs, and they are
            # the payload's own bytes
            again = encode_assignment(Assignment(0, subscription.owned_partitions))
            assert again[2:-4] == owned_array and owned_array in raw
        out.append(subscription)
    return out


@pytest.mark.parametrize("implementation", IMPLEMENTATIONS)
@given(st.lists(subscriptions(), max_size=4), st.data())
def test_read_subscriptions_equal_decode_on_valid_and_mutated_bytes(
    implementation: ModuleType, subs: list[object], data: st.DataObject
) -> None:
    raws = []
    for sub in subs:
        try:
            raw = encode_subscription(sub)  # type: ignore[arg-type]
        except CodecError:
            continue
        cut = data.draw(st.integers(0, len(raw)))
        flip = data.draw(st.integers(0, len(raw)))
        mutated = bytearray(raw[:cut] if data.draw(st.booleans()) else raw)
        if flip < len(mutated) and data.draw(st.booleans()):
            mutated[flip] ^= data.draw(st.integers(1, 255))
        raws += [raw, bytes(mutated)]
    assert _seam_read(implementation, raws) == [_spec_read(raw) for raw in raws]


@pytest.mark.parametrize("implementation", IMPLEMENTATIONS)
@given(st.lists(st.binary(max_size=80), max_size=6))
def test_read_subscriptions_equal_decode_on_random_bytes(
    implementation: ModuleType, raws: list[bytes]
) -> None:
    assert _seam_read(implementation, raws) == [_spec_read(raw) for raw in raws]


@pytest.mark.parametrize("implementation", IMPLEMENTATIONS)
@given(st.one_of(st.none(), st.binary(max_size=60)), st.booleans())
def test_user_data_claim_equals_the_claim_rule(
    implementation: ModuleType, user_data: bytes | None, cooperative: bool
) -> None:
    def spec() -> object:
        try:
            return read_user_data_claim(user_data, cooperative=cooperative)
        except CodecError as exc:
            return (exc.what, exc.expected, exc.offset)

    try:
        got: object = implementation.read_user_data_claim(user_data, cooperative)
    except CodecError as exc:
        got = (exc.what, exc.expected, exc.offset)
    assert got == spec()


@pytest.mark.parametrize("implementation", IMPLEMENTATIONS)
def test_null_owned_array_is_empty_and_never_canonical(implementation: ModuleType) -> None:
    """A v1 subscription whose owned array is null (count -1) reads as no owned partitions
    and hands back no owned array (so it is never written back as an assignment)."""
    raw = bytes.fromhex("0001 00000001 0001 74 ffffffff ffffffff")
    [read] = implementation.read_subscriptions([raw])
    assert read == reference.SubscriptionRead(decode_subscription(raw), None)
    assert read.subscription.owned_partitions == ()


@pytest.mark.parametrize("implementation", IMPLEMENTATIONS)
def test_write_assignments_of_an_empty_plan_write_count_zero(implementation: ModuleType) -> None:
    assert implementation.write_assignments(3, ["t"], [2], [[], [0, 1]]) == [
        encode_assignment(Assignment(3, ())),
        encode_assignment(Assignment(3, (("t", 0), ("t", 1)))),
    ]
