"""The per-batch shortcuts of the leader's codecs give exactly the general codecs' results.

A :class:`SubscriptionDecoder` reads an owned-partitions array whose layout repeats an earlier
member's in one ``struct`` call, and a :class:`AssignmentEncoder` packs a repeated sequence of
one-partition topics with one ``struct``. Both must be invisible: same values, same canonical
bytes, same errors (message and offset) as :func:`decode_subscription` and
:func:`encode_assignment` on every input, including near misses (same group count and byte
size but another topic, a group of two partitions, a truncated or non-canonical array).
"""

from __future__ import annotations

import random
import struct

import pytest
from codec_helpers import count_general_reads, owned_array
from hypothesis import given
from hypothesis import strategies as st
from strategies import ONE_EACH_GROUPS as GROUPS
from strategies import ONE_EACH_TOPICS as TOPICS
from strategies import one_each_members
from strategies import one_each_message as _message

from kafka_sticky_plugin.codec import (
    Assignment,
    AssignmentEncoder,
    SubscriptionDecoder,
    _wire,
    decode_subscription,
    encode_assignment,
)
from kafka_sticky_plugin.codec._topic_partitions import OneEachLayouts, encode_topic_partitions
from kafka_sticky_plugin.errors import CodecError


def _general(raw: bytes, array: bytes) -> object:
    """What the general decoder says: the value and the canonical block (``array`` when our
    encoder would write those very bytes), or the error."""
    try:
        value = decode_subscription(raw)
    except CodecError as exc:
        return (exc.what, exc.expected, exc.offset)
    canonical = encode_topic_partitions(value.owned_partitions, "test", "owned") == array
    return value, array if canonical else None


@given(st.lists(one_each_members(), min_size=1, max_size=12))
def test_batch_decoder_equals_the_general_decoder(batch: list[tuple[bytes, bytes]]) -> None:
    decoder = SubscriptionDecoder()
    for raw, array in batch:
        try:
            got: object = decoder.decode_with_owned_block(raw)
        except CodecError as exc:
            got = (exc.what, exc.expected, exc.offset)
        assert got == _general(raw, array)


def test_repeated_layouts_skip_the_general_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    """The shortcut is taken (else the equality property above proves nothing about it):
    after the first member, same-layout members never reach the per-group reader."""
    seed = random.randrange(2**32)
    print(f"seed={seed}")
    rnd = random.Random(seed)
    batch = [
        _message([(t, [rnd.randrange(100)]) for t in TOPICS[:GROUPS]], 3, 0) for _ in range(10)
    ]
    near_miss = _message([(t, [1]) for t in [*TOPICS[: GROUPS - 1], "u00"]], 3, 0)
    expected = [decode_subscription(raw) for raw in [*batch, near_miss]]
    calls = count_general_reads(monkeypatch)
    decoder = SubscriptionDecoder()
    for raw, value in zip(batch, expected, strict=False):
        subscription, block = decoder.decode_with_owned_block(raw)
        assert subscription == value
        assert block is not None
    assert len(calls) == 1
    assert decoder.decode_with_owned_block(near_miss)[0] == expected[-1]
    assert len(calls) == 2


def test_repeated_topic_sequences_encode_like_the_general_encoder() -> None:
    seed = random.randrange(2**32)
    print(f"seed={seed}")
    rnd = random.Random(seed)
    encoder = AssignmentEncoder()
    topics = TOPICS[:GROUPS]
    for _ in range(6):
        partitions = tuple((t, rnd.randrange(-(2**31), 2**31)) for t in topics)
        value = Assignment(3, partitions)
        assert encoder.encode(value) == encode_assignment(value)


@pytest.mark.parametrize(
    "bad, message",
    [(2**31, "as int32, got 2147483648"), (True, "as int32, got True"), ("1", "got '1'")],
)
def test_repeated_topic_sequences_still_refuse_bad_partitions(bad: object, message: str) -> None:
    encoder = AssignmentEncoder()
    topics = TOPICS[:GROUPS]
    for _ in range(3):  # the packing struct exists from the second call on
        encoder.encode(Assignment(3, tuple((t, 1) for t in topics)))
    value = Assignment(3, tuple((t, bad if t == topics[5] else 1) for t in topics))  # type: ignore[misc]
    with pytest.raises(CodecError, match=message):
        encoder.encode(value)
    with pytest.raises(CodecError, match=message):
        encode_assignment(value)


def test_layout_fields_are_what_a_canonical_array_holds() -> None:
    """A learned layout's fixed bytes are ``int16 length, name, int32 1`` per topic."""
    layouts = OneEachLayouts()
    pairs = [(t, 7) for t in TOPICS[:GROUPS]]
    block = owned_array([(t, [p]) for t, p in pairs])
    layouts.learn(pairs, block)
    reader = _wire.Reader(block + b"\x00\x00\x00\x05", "test")
    hit = layouts.read(reader)
    assert hit == (pairs, block)
    assert reader.int32() == 5
    assert struct.calcsize(">" + "".join(f"{2 + len(t)}sii" for t in TOPICS[:GROUPS])) + 4 == len(
        block
    )
