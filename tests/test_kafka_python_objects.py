"""Members read from kafka-python 3.x's decoded objects equal members read from the bytes.

Without our hooks, kafka-python 3.x decodes every member's JoinGroup metadata itself and hands
``assign()`` its objects; :func:`to_subscription` must then give exactly what our byte decoder
gives (values and order), whatever the owned partitions look like (one or many partitions per
topic, unsorted, repeated), and refuse bad values the way the byte decoder refuses bad bytes.
"""

from __future__ import annotations

import pytest
from codec_helpers import owned_array
from hypothesis import given
from hypothesis import strategies as st
from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription

from kafka_sticky_plugin.adapters.kafka_python._metadata import to_subscription
from kafka_sticky_plugin.codec import Subscription, decode_subscription
from kafka_sticky_plugin.errors import CodecError

INT32 = st.integers(min_value=-(2**31), max_value=2**31 - 1)
groups = st.lists(
    st.tuples(st.text(max_size=6), st.lists(INT32, max_size=4)), min_size=0, max_size=20
)


def _raw(version: int, owned: list[tuple[str, list[int]]]) -> bytes:
    """Subscription bytes with the owned groups exactly as given (order, repeats)."""
    out = [version.to_bytes(2, "big"), b"\x00\x00\x00\x01\x00\x01t", b"\xff\xff\xff\xff"]
    out.append(owned_array(owned))
    out.append((7).to_bytes(4, "big"))
    if version >= 3:
        out.append(b"\xff\xff")  # no rack
    return b"".join(out)


@given(st.integers(min_value=1, max_value=3), groups)
def test_objects_read_like_bytes(version: int, owned: list[tuple[str, list[int]]]) -> None:
    raw = _raw(version, owned)
    from_objects = to_subscription(ConsumerProtocolSubscription.decode(raw))
    from_bytes = decode_subscription(raw)
    assert from_objects.owned_partitions == from_bytes.owned_partitions
    assert from_objects.topics == from_bytes.topics
    assert from_objects.generation_id == from_bytes.generation_id == (7 if version >= 2 else -1)


def test_every_partition_count_per_topic_is_flattened_in_order() -> None:
    owned = [("b", [3]), ("a", [2, 0, 2]), ("c", []), ("a", [9])]
    value = to_subscription(ConsumerProtocolSubscription.decode(_raw(2, owned)))
    assert value.owned_partitions == (("b", 3), ("a", 2), ("a", 0), ("a", 2), ("a", 9))


@pytest.mark.parametrize(
    "owned",
    [
        [("t", [1]), ("u", [True])],
        [("t", [1]), ("u", [2**31])],
        [("t", [1]), (b"u", [1])],
        [("t", [1]), ("u", None), ("v", 3)],
    ],
    ids=["bool", "beyond-int32", "bytes-topic", "partitions-not-a-sequence"],
)
def test_bad_values_in_objects_are_refused(owned: list[object]) -> None:
    value = ConsumerProtocolSubscription(
        version=1, topics=["t"], user_data=None, owned_partitions=owned
    )
    with pytest.raises(CodecError):
        to_subscription(value)


def test_plain_subscription_passes_through() -> None:
    value = Subscription(version=3, topics=("t",), owned_partitions=(("t", 1),))
    assert to_subscription(value) is value


def test_object_level_errors_name_no_byte_offset() -> None:
    """An unreadable kafka-python object is not bytes: the error says what was wrong with it
    and does not invent a byte offset."""
    from types import SimpleNamespace

    bad = SimpleNamespace(version=0, topics=[7], user_data=None)
    with pytest.raises(CodecError) as caught:
        to_subscription(bad)
    assert "byte offset" not in str(caught.value)
    assert str(caught.value).startswith("malformed kafka-python subscription object: expected")
