"""Golden bytes for every message and version, annotated field by field.

Sources of the vectors:

- "spec": written by hand from Apache Kafka's ``ConsumerProtocolSubscription.json`` /
  ``ConsumerProtocolAssignment.json`` and ``StickyAssignor``/``CooperativeStickyAssignor``.
- "java": what a Java member sends, derived field by field from the Java client's source
  (``ConsumerCoordinator.metadata()``: subscription v3, owned partitions empty under EAGER
  because it revokes before joining, generation from the coordinator; the assignor's user
  data). No Kafka jars can be fetched on this machine, so these are derived, not captured.
- "librdkafka": captured from a real confluent-kafka 2.16.1 (librdkafka 2.16.0) member, see
  ``tests/vectors/subscriptions_captured.json`` and ``tests/vectors/capture_librdkafka.py``.
- kafka-python 3.0.12's schema-generated encoder is an independent implementation of the
  same JSON schemas; every vector is cross-checked against it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kafka.protocol.consumer.metadata import (
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
)

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

VECTORS = Path(__file__).parent / "vectors"


def hx(*fields: str) -> bytes:
    """Join annotated hex fields (spaces ignored) into bytes."""
    return bytes.fromhex("".join(fields).replace(" ", ""))


# -- consumer protocol subscription ----------------------------------------------------

SUB_V0 = hx(
    "0000",  # version 0
    "00000002",  # topics: 2 entries
    "0002 7431",  # "t1"
    "0002 7432",  # "t2"
    "ffffffff",  # user data: null
)
SUB_V1 = hx(
    "0001",  # version 1
    "00000002 0002 7431 0002 7432",  # topics ["t1", "t2"]
    "00000004 deadbeef",  # user data: 4 bytes
    "00000001",  # owned partitions: 1 topic
    "0002 7431",  # "t1"
    "00000002 00000000 00000002",  # partitions [0, 2]
)
SUB_V2 = hx(
    "0002",  # version 2
    "00000001 0002 7431",  # topics ["t1"]
    "00000000",  # user data: empty (not null)
    "00000001 0002 7431 00000001 00000005",  # owned t1 [5]
    "00000007",  # generation id 7
)
SUB_V3 = hx(
    "0003",  # version 3
    "00000001 0002 7431",  # topics ["t1"]
    "ffffffff",  # user data: null
    "00000000",  # owned partitions: none
    "ffffffff",  # generation id -1 (none)
    "0002 7231",  # rack id "r1"
)
SUB_V3_NULL_RACK = hx("0003", "00000001 0002 7431", "ffffffff", "00000000", "0000002a", "ffff")

SUBSCRIPTIONS = [
    (SUB_V0, Subscription(0, ("t1", "t2"), None)),
    (SUB_V1, Subscription(1, ("t1", "t2"), b"\xde\xad\xbe\xef", (("t1", 0), ("t1", 2)))),
    (SUB_V2, Subscription(2, ("t1",), b"", (("t1", 5),), 7)),
    (SUB_V3, Subscription(3, ("t1",), None, (), -1, "r1")),
    (SUB_V3_NULL_RACK, Subscription(3, ("t1",), None, (), 42, None)),
]


@pytest.mark.parametrize(("raw", "value"), SUBSCRIPTIONS)
def test_subscription_golden_decode(raw: bytes, value: Subscription) -> None:
    """Each annotated subscription decodes to exactly its fields."""
    assert decode_subscription(raw) == value


@pytest.mark.parametrize(("raw", "value"), SUBSCRIPTIONS)
def test_subscription_golden_encode(raw: bytes, value: Subscription) -> None:
    """Each subscription encodes to exactly the annotated bytes."""
    assert encode_subscription(value) == raw


@pytest.mark.parametrize(("raw", "value"), SUBSCRIPTIONS)
def test_subscription_golden_matches_kafka_python_schema_codec(
    raw: bytes, value: Subscription
) -> None:
    """kafka-python's schema-generated codec reads the same fields from our bytes."""
    theirs = ConsumerProtocolSubscription.decode(raw)
    assert theirs.version == value.version
    assert list(theirs.topics) == list(value.topics)
    assert theirs.user_data == value.user_data
    if value.version >= 1:
        flat = [(tp.topic, p) for tp in theirs.owned_partitions for p in tp.partitions]
        assert flat == list(value.owned_partitions)
    if value.version >= 2:
        assert theirs.generation_id == value.generation_id
    if value.version >= 3:
        assert theirs.rack_id == value.rack_id
    assert theirs.encode() == raw


def test_subscription_encode_sorts_topics_and_owned_partitions() -> None:
    """A reordering of topics or owned partitions alone never changes the bytes."""
    a = Subscription(1, ("t2", "t1", "t2"), None, (("t2", 1), ("t1", 2), ("t1", 0)))
    b = Subscription(1, ("t1", "t2"), None, (("t1", 0), ("t1", 2), ("t2", 1), ("t1", 0)))
    assert encode_subscription(a) == encode_subscription(b)
    assert decode_subscription(encode_subscription(a)).owned_partitions == (
        ("t1", 0),
        ("t1", 2),
        ("t2", 1),
    )


def test_subscription_v1_ending_before_owned_partitions_reads_none() -> None:
    """A v1 header with only the v0 fields (sent by some clients) has no owned partitions."""
    raw = hx("0001", "00000001 0002 7431", "ffffffff")
    assert decode_subscription(raw) == Subscription(1, ("t1",), None, (), -1, None)


def test_subscription_v3_ending_after_owned_partitions_reads_defaults() -> None:
    """A v3 message that ends cleanly before its generation reads generation -1, no rack."""
    raw = hx("0003", "00000001 0002 7431", "ffffffff", "00000001 0002 7431 00000001 00000000")
    assert decode_subscription(raw) == Subscription(3, ("t1",), None, (("t1", 0),), -1, None)


def test_subscription_newer_version_is_read_as_v3_ignoring_appended_fields() -> None:
    """Version 9 is read with the v3 layout; the appended bytes are ignored."""
    raw = hx("0009", SUB_V3.hex()[4:], "00000001 cafe")
    assert decode_subscription(raw) == Subscription(9, ("t1",), None, (), -1, "r1")


def test_subscription_negative_version_is_an_error_at_offset_0() -> None:
    """A negative version is malformed, reported at byte 0."""
    with pytest.raises(CodecError) as info:
        decode_subscription(hx("ffff", SUB_V0.hex()[4:]))
    assert info.value.offset == 0


def test_subscription_truncated_inside_a_topic_names_the_offset() -> None:
    """A string cut short reports the offset where that string starts."""
    with pytest.raises(CodecError) as info:
        decode_subscription(hx("0000", "00000001", "0005 7431"))
    assert info.value.offset == 6
    assert "topic" in info.value.expected


# -- consumer protocol assignment ------------------------------------------------------

ASSIGNMENT_BODY = (
    "00000002",  # assigned partitions: 2 topics
    "0002 7431 00000002 00000000 00000001",  # "t1" [0, 1]
    "0002 7432 00000001 00000003",  # "t2" [3]
    "ffffffff",  # user data: null
)


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_assignment_golden_every_version(version: int) -> None:
    """Assignment v0-v3 share one layout; bytes and fields agree both ways and with kafka-python."""
    raw = hx(f"{version:04x}", *ASSIGNMENT_BODY)
    value = Assignment(version, (("t1", 0), ("t1", 1), ("t2", 3)), None)
    assert decode_assignment(raw) == value
    assert encode_assignment(value) == raw
    theirs = ConsumerProtocolAssignment.decode(raw)
    assert [(tp.topic, tp.partition) for tp in theirs.partitions()] == list(value.partitions)
    assert theirs.encode() == raw


def test_assignment_with_user_data_and_prerelease_error_code() -> None:
    """A 2.4-pre-release v1 assignment with a trailing int16 error code still decodes."""
    raw = hx("0001", "00000001 0002 7431 00000001 00000004", "00000002 abcd", "0000")
    assert decode_assignment(raw) == Assignment(1, (("t1", 4),), b"\xab\xcd")


def test_empty_assignment() -> None:
    """An empty assignment is a zero-length array and null user data."""
    assert encode_assignment(Assignment(3, ())) == hx("0003", "00000000", "ffffffff")


# -- sticky user data ------------------------------------------------------------------

LIBRDKAFKA_STICKY_V1 = hx(
    "00000001",  # previous assignment: 1 topic
    "0002 7431",  # "t1"
    "00000003 00000003 00000004 00000005",  # partitions [3, 4, 5]
    "00000002",  # generation 2
)
STICKY_V0 = hx("00000002", "0002 7430 00000001 00000007", "0002 7431 00000000")


def test_sticky_user_data_v1_from_librdkafka_issue_vector() -> None:
    """The issue's librdkafka bytes are t1-3, t1-4, t1-5 at generation 2, and we write the same."""
    assert decode_sticky_user_data(LIBRDKAFKA_STICKY_V1) == (
        [("t1", 3), ("t1", 4), ("t1", 5)],
        2,
    )
    assert encode_sticky_user_data([("t1", 5), ("t1", 3), ("t1", 4)], 2) == LIBRDKAFKA_STICKY_V1


def test_sticky_user_data_v0_has_no_generation() -> None:
    """Without a trailing generation the bytes are v0 (Java before KIP-341)."""
    assert decode_sticky_user_data(STICKY_V0) == ([("t0", 7)], None)
    v0 = encode_sticky_user_data([("t0", 7)], None, version=0)
    assert v0 != STICKY_V0  # empty t1 group not kept
    assert v0 == hx("00000001 0002 7430 00000001 00000007")


def test_sticky_user_data_without_a_generation_is_v1_with_minus_one() -> None:
    """Java's StickyAssignor and librdkafka always write v1, -1 for no generation: so do we
    (aiokafka's own StickyPartitionAssignor reads v1 only and drops v0 as unreadable)."""
    assert encode_sticky_user_data([("t", 2), ("t", 3), ("t", 4)], None) == hx(
        "00000001 0001 74 00000003 00000002 00000003 00000004 ffffffff"
    )
    with pytest.raises(CodecError, match="no generation in v0"):
        encode_sticky_user_data([("t", 2)], 4, version=0)


def test_sticky_user_data_v1_generation_minus_one_is_none() -> None:
    """A v1 generation of -1 reads as no generation."""
    assert decode_sticky_user_data(hx("00000000", "ffffffff")) == ([], None)
    assert decode_sticky_user_data(hx("00000000", "80000000")) == ([], None)


def test_sticky_user_data_empty_means_no_history() -> None:
    """Zero bytes (Java's 'no user data') decode as nothing owned and no generation."""
    assert decode_sticky_user_data(b"") == ([], None)


def test_sticky_user_data_with_extra_header_is_rejected() -> None:
    """kafka-python 3.0.12's built-in sticky adds an int16 header: neither v1 nor v0 reads it."""
    with_header = hx("0001", LIBRDKAFKA_STICKY_V1.hex())
    with pytest.raises(CodecError):
        decode_sticky_user_data(with_header)


# -- cooperative user data -------------------------------------------------------------


def test_cooperative_user_data_is_one_int32_generation() -> None:
    """Java's cooperative-sticky user data: int32 generation; -1 means none."""
    assert encode_cooperative_user_data(7) == hx("00000007")
    assert encode_cooperative_user_data(None) == hx("ffffffff")
    assert decode_cooperative_user_data(hx("00000007")) == 7
    assert decode_cooperative_user_data(hx("ffffffff")) is None
    # Like Java: the first int32 counts, trailing bytes (a future version's) are ignored.
    assert decode_cooperative_user_data(hx("0000000700")) == 7
    with pytest.raises(CodecError):
        decode_cooperative_user_data(hx("000007"))


# -- what Java members send (derived from the Java client's source) --------------------

JAVA_STICKY_MEMBER = hx(
    "0003",  # ConsumerProtocolSubscription.HIGHEST_SUPPORTED_VERSION
    "00000001 0002 7431",  # topics ["t1"], sorted
    "00000018",  # user data: 24 bytes of sticky v1 ...
    "00000001 0002 7431 00000002 00000000 00000001",  # ... previous assignment t1 [0, 1]
    "00000005",  # ... generation 5
    "00000000",  # owned partitions: none (EAGER revoked them in onJoinPrepare)
    "00000005",  # generation id 5 (KIP-792)
    "ffff",  # rack id: null (client.rack unset)
)
JAVA_COOPERATIVE_MEMBER = hx(
    "0003",
    "00000001 0002 7431",  # topics ["t1"]
    "00000004 00000005",  # user data: cooperative v0, generation 5
    "00000001 0002 7431 00000002 00000000 00000001",  # owned t1 [0, 1]
    "00000005",  # generation id 5
    "ffff",  # rack id: null
)


def test_java_sticky_member_subscription() -> None:
    """A Java sticky member's v3 subscription: ownership lives in the v1 user data."""
    sub = decode_subscription(JAVA_STICKY_MEMBER)
    assert (sub.version, sub.topics, sub.owned_partitions, sub.generation_id) == (
        3,
        ("t1",),
        (),
        5,
    )
    assert sub.user_data is not None
    assert decode_sticky_user_data(sub.user_data) == ([("t1", 0), ("t1", 1)], 5)


def test_java_cooperative_member_subscription() -> None:
    """A Java cooperative-sticky member's v3 subscription: owned partitions plus generation."""
    sub = decode_subscription(JAVA_COOPERATIVE_MEMBER)
    assert sub.owned_partitions == (("t1", 0), ("t1", 1))
    assert sub.generation_id == 5
    assert sub.user_data is not None
    assert decode_cooperative_user_data(sub.user_data) == 5


# -- captured from librdkafka ----------------------------------------------------------


def _captured() -> list[dict[str, object]]:
    doc = json.loads((VECTORS / "subscriptions_captured.json").read_text(encoding="utf-8"))
    records: list[dict[str, object]] = doc["records"]
    return records


def test_captured_vectors_all_decode_and_reencode_identically() -> None:
    """Every captured subscription decodes, and our encoder reproduces its bytes exactly."""
    records = _captured()
    assert {r["client"] for r in records} == {"librdkafka", "kafka-python"}
    for record in records:
        raw = bytes.fromhex(str(record["hex"]))
        sub = decode_subscription(raw)
        assert encode_subscription(sub) == raw, record


def test_captured_librdkafka_cooperative_member_with_state() -> None:
    """librdkafka's cooperative-sticky: sticky v1 user data, owned, generation, rack ''."""
    raw = hx(
        "0003",  # version 3
        "00000001 0002 7431",  # topics ["t1"]
        "0000001c",  # user data: 28 bytes, sticky v1 ...
        LIBRDKAFKA_STICKY_V1.hex(),  # ... t1 [3, 4, 5] at generation 2
        "00000001 0002 7431 00000003 00000003 00000004 00000005",  # owned t1 [3, 4, 5]
        "00000002",  # generation id 2
        "0000",  # rack id: "" (empty string, not null)
    )
    assert raw.hex() in {str(r["hex"]) for r in _captured()}
    sub = decode_subscription(raw)
    assert sub == Subscription(
        3, ("t1",), LIBRDKAFKA_STICKY_V1, (("t1", 3), ("t1", 4), ("t1", 5)), 2, ""
    )


def test_captured_librdkafka_member_without_state() -> None:
    """A fresh librdkafka member sends empty (not null) user data, nothing owned, generation -1."""
    raw = hx("0003", "00000001 0002 7431", "00000000", "00000000", "ffffffff", "0000")
    assert raw.hex() in {str(r["hex"]) for r in _captured() if r["client"] == "librdkafka"}
    assert decode_subscription(raw) == Subscription(3, ("t1",), b"", (), -1, "")


def test_seam_reads_decode_subscription_values_and_exposes_canonical_owned_bytes() -> None:
    """The seam's reader returns decode_subscription's value plus the owned array's bytes
    exactly when they are canonical (what the writer writes for them)."""
    from kafka_sticky_plugin.codec.seam import SubscriptionRead, read_subscriptions

    reads = read_subscriptions([raw for raw, _ in SUBSCRIPTIONS], False)
    for (raw, value), read in zip(SUBSCRIPTIONS, reads, strict=True):
        assert isinstance(read, SubscriptionRead)
        assert read.subscription() == value == decode_subscription(raw)
        if value.version >= 1:
            assert read.owned_array is not None and read.owned_array in raw
        else:
            assert read.owned_array is None
    non_canonical = hx("0001", "00000001 0002 7431", "ffffffff", "00000001 0002 7431 00000002")
    non_canonical += hx("00000002 00000000")  # t1 [2, 0]: unsorted partitions
    null_owned = hx("0001", "00000001 0002 7431", "ffffffff", "ffffffff")  # a null array
    truncated = hx("0000", "00000001", "0005 7431")
    got = read_subscriptions([non_canonical, null_owned, truncated], False)
    assert isinstance(got[0], SubscriptionRead) and got[0].owned_array is None
    assert isinstance(got[1], SubscriptionRead) and got[1].owned_array is None
    assert got[1].subscription() == Subscription(1, ("t1",), None, ())
    assert isinstance(got[2], CodecError) and got[2].offset == 6
