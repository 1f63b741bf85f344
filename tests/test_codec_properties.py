"""Round trips, canonical encoding and hostile input for the codecs (Hypothesis, derandomized).

The invariants: decode(encode(x)) is x with its fields normalised (sorted, de-duplicated,
fields the version lacks at their defaults); permuting inputs never changes bytes; any
prefix, any garbage and any huge count raise :class:`CodecError` or decode, never anything
else, and never allocate more than the input can describe.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable

import pytest
from codec_helpers import owned_array
from hypothesis import given
from hypothesis import strategies as st
from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription
from strategies import INT32, generations, pairs, subscriptions, user_datas

from kafka_sticky_plugin.codec import (
    Assignment,
    Subscription,
    decode_assignment,
    decode_cooperative_user_data,
    decode_sticky_user_data,
    decode_subscription,
    encode_assignment,
    encode_cooperative_user_data,
    encode_sticky_user_data,
    encode_subscription,
)
from kafka_sticky_plugin.errors import CodecError


def normalised(sub: Subscription) -> Subscription:
    v = sub.version
    return Subscription(
        version=v,
        topics=tuple(sorted(set(sub.topics))),
        user_data=sub.user_data,
        owned_partitions=tuple(sorted(set(sub.owned_partitions))) if v >= 1 else (),
        generation_id=sub.generation_id if v >= 2 else -1,
        rack_id=sub.rack_id if v >= 3 else None,
    )


@given(subscriptions())
def test_subscription_round_trip(sub: Subscription) -> None:
    """decode(encode(s)) is s normalised for its version."""
    assert decode_subscription(encode_subscription(sub)) == normalised(sub)


@given(subscriptions(), st.randoms(use_true_random=False))
def test_subscription_bytes_ignore_input_order(sub: Subscription, rnd: object) -> None:
    """Shuffling topics and owned partitions never changes the encoded bytes."""
    topics, owned = list(sub.topics), list(sub.owned_partitions)
    rnd.shuffle(topics)  # type: ignore[attr-defined]
    rnd.shuffle(owned)  # type: ignore[attr-defined]
    shuffled = Subscription(
        sub.version, tuple(topics), sub.user_data, tuple(owned), sub.generation_id, sub.rack_id
    )
    assert encode_subscription(shuffled) == encode_subscription(sub)


@given(subscriptions())
def test_subscription_agrees_with_kafka_python_schema_codec(sub: Subscription) -> None:
    """kafka-python's schema-generated decoder reads the same fields from our bytes."""
    raw = encode_subscription(sub)
    theirs = ConsumerProtocolSubscription.decode(raw)
    ours = decode_subscription(raw)
    assert list(theirs.topics) == list(ours.topics)
    assert theirs.user_data == ours.user_data
    if ours.version >= 1:
        flat = tuple((tp.topic, p) for tp in theirs.owned_partitions for p in tp.partitions)
        assert flat == ours.owned_partitions
    if ours.version >= 3:
        assert (theirs.generation_id, theirs.rack_id) == (ours.generation_id, ours.rack_id)


@given(st.integers(min_value=0, max_value=3), pairs, user_datas)
def test_assignment_round_trip(
    version: int, parts: list[tuple[str, int]], ud: bytes | None
) -> None:
    """decode(encode(a)) has the sorted distinct partitions and the same user data."""
    raw = encode_assignment(Assignment(version, tuple(parts), ud))
    assert decode_assignment(raw) == Assignment(version, tuple(sorted(set(parts))), ud)


@given(pairs, generations)
def test_sticky_user_data_round_trip(parts: list[tuple[str, int]], gen: int | None) -> None:
    """decode(encode(p, g)) is (sorted distinct p, g), whether v1 (g given) or v0."""
    decoded, generation = decode_sticky_user_data(encode_sticky_user_data(parts, gen))
    assert (decoded, generation) == (sorted(set(parts)), gen)


@given(generations)
def test_cooperative_user_data_round_trip(gen: int | None) -> None:
    """The int32 generation survives a round trip; None is written as -1."""
    assert decode_cooperative_user_data(encode_cooperative_user_data(gen)) == gen


def _decode_all(raw: bytes) -> None:
    for decoder in (
        decode_subscription,
        decode_assignment,
        decode_sticky_user_data,
        decode_cooperative_user_data,
    ):
        try:
            decoder(raw)
        except CodecError as exc:
            assert exc.offset >= 0
            assert exc.expected


@given(subscriptions())
def test_every_prefix_decodes_or_raises_codec_error(sub: Subscription) -> None:
    """Truncated bytes at any length raise CodecError or decode; nothing else escapes."""
    raw = encode_subscription(sub)
    for end in range(len(raw)):
        _decode_all(raw[:end])


@given(st.binary(max_size=200))
def test_garbage_decodes_or_raises_codec_error(raw: bytes) -> None:
    """Random bytes never raise anything but CodecError."""
    _decode_all(raw)


@given(pairs, generations)
def test_sticky_user_data_prefixes(parts: list[tuple[str, int]], gen: int | None) -> None:
    """Only two proper prefixes decode: empty (no history) and v1 minus its generation (v0)."""
    raw = encode_sticky_user_data(parts, gen)
    for end in range(len(raw)):
        try:
            decoded = decode_sticky_user_data(raw[:end])
        except CodecError:
            continue
        if end == 0:
            assert decoded == ([], None)
        else:
            assert end == len(raw) - 4  # always v1: a generation, or -1 for none
            assert decoded == (sorted(set(parts)), None)


HUGE = "7fffffff"


def test_huge_counts_fail_fast_without_allocating() -> None:
    """A count of 2**31-1 elements in a short message is rejected before any allocation."""
    hostile = [
        ("subscription topics", decode_subscription, "0000" + HUGE),
        ("subscription owned", decode_subscription, "0001 00000000 ffffffff" + HUGE),
        (
            "owned partitions int32 array",
            decode_subscription,
            "0001 00000000 ffffffff 00000001 0002 7431" + HUGE,
        ),
        ("assignment", decode_assignment, "0000" + HUGE),
        ("sticky user data", decode_sticky_user_data, HUGE + "00000000"),
        ("user data bytes", decode_subscription, "0000 00000000" + HUGE),
        ("topic string", decode_subscription, "0000 00000001 7fff"),
    ]
    for name, decoder, hexed in hostile:
        raw = bytes.fromhex(hexed.replace(" ", ""))
        started = time.perf_counter()
        try:
            decoder(raw)
        except CodecError as exc:
            assert "left" in exc.expected, name
        else:  # pragma: no cover - the assertion explains the failure
            raise AssertionError(f"{name}: hostile count was accepted")
        assert time.perf_counter() - started < 0.05, name


def test_codec_error_is_a_value_error_with_offset() -> None:
    """CodecError carries what/expected/offset and is also a ValueError."""
    try:
        decode_assignment(b"\x00")
    except ValueError as exc:
        assert isinstance(exc, CodecError)
        assert (exc.what, exc.offset) == ("consumer protocol assignment", 0)
    else:  # pragma: no cover
        raise AssertionError("one byte decoded as an assignment")


def test_encoders_refuse_values_the_wire_cannot_hold() -> None:
    """Out-of-range ints and over-long strings raise CodecError, not struct.error."""
    bad: list[Callable[[], bytes]] = [
        lambda: encode_subscription(Subscription(2, ("t",), None, (), 2**31)),
        lambda: encode_subscription(Subscription(0, ("x" * 40000,), None)),
        lambda: encode_assignment(Assignment(0, (("t", 2**31),))),
        lambda: encode_sticky_user_data([("t", 0)], 2**31),
        lambda: encode_subscription(Subscription(-1, (), None)),
    ]
    for make in bad:
        try:
            make()
        except CodecError:
            continue
        raise AssertionError("an unencodable value was encoded")


def test_the_first_unwritable_value_of_an_array_is_named_topic_by_topic() -> None:
    """The array's writer names the first value it cannot write topic by topic, each topic's
    name before its partitions: a bad name before the bad partition wins, one after loses."""
    too_long = "x" * 40000
    for last, wanted in [
        ("c", "assigned partitions partitions of 'b' values that are int32, got 2147483648"),
        (too_long, "assigned partitions partitions of 'b' values that are int32, got 2147483648"),
    ]:
        with pytest.raises(CodecError) as error:
            encode_assignment(Assignment(0, (("a", 0), ("b", 2**31), (last, 0))))
        assert (error.value.expected, error.value.offset) == (wanted, 2)
    with pytest.raises(CodecError) as error:
        encode_assignment(Assignment(0, (("a", 0), (too_long, 1), ("z", -(2**31) - 1))))
    assert (
        error.value.expected == "assigned partitions topic of at most 32767 UTF-8 bytes, got 40000"
    )


raw_groups = st.lists(
    st.tuples(st.sampled_from(["a", "b", "cc", ""]), st.lists(INT32, max_size=4)), max_size=6
)


@given(raw_groups)
def test_owned_block_is_returned_exactly_when_the_bytes_are_canonical(
    groups: list[tuple[str, list[int]]],
) -> None:
    """The reader hands back the raw block iff our encoder would write the same bytes."""
    from kafka_sticky_plugin.codec._wire import Reader, Writer
    from kafka_sticky_plugin.codec.topic_partitions import (
        read_topic_runs,
        runs_pairs,
        write_topic_partitions,
    )

    raw = owned_array(groups)
    runs, block = read_topic_runs(Reader(raw, "test"), "owned")
    pairs = runs_pairs(runs)
    assert pairs == tuple((t, p) for t, ps in groups for p in ps)
    writer = Writer("test")
    write_topic_partitions(writer, pairs, "owned")
    canonical = writer.getvalue() == raw
    assert (block is not None) == canonical
    if block is not None:
        assert block == raw


anything = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(max_size=5),
    st.binary(max_size=5),
    st.tuples(st.text(max_size=3), st.integers()),
)


@given(
    st.integers(min_value=0, max_value=3),
    st.lists(anything, max_size=3),
    anything,
    st.lists(st.one_of(anything, st.tuples(anything, anything)), max_size=3),
    anything,
    anything,
)
def test_encoders_raise_only_codec_error_on_wrong_types(
    version: int,
    topics: list[object],
    user_data: object,
    owned: list[object],
    generation: object,
    rack: object,
) -> None:
    """Whatever the field values, encoding succeeds or raises CodecError, nothing else."""
    sub = Subscription(version, tuple(topics), user_data, tuple(owned), generation, rack)  # type: ignore[arg-type]
    try:
        raw = encode_subscription(sub)
    except CodecError:
        pass
    else:
        decode_subscription(raw)
    with contextlib.suppress(CodecError):
        encode_assignment(Assignment(version, tuple(owned), user_data))  # type: ignore[arg-type]
    with contextlib.suppress(CodecError):
        encode_sticky_user_data(owned, generation)  # type: ignore[arg-type]
