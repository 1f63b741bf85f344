"""Our codec against the genuine Java client's own classes, in both directions.

A persistent JVM per pinned kafka-clients version (``kafkasticky.WireCodec``, see
:mod:`testlab.java_member`) encodes and decodes with ``ConsumerProtocol``
(subscriptions and assignments v0-v3), ``StickyAssignor`` (its user data, written by
``onAssignment`` + ``subscriptionUserData`` and read by its ``memberData``) and
``CooperativeStickyAssignor`` (likewise). For each case: Java's bytes decode with our codec
to the values Java was given, our bytes decode in Java to the values we encoded, and where
both sides write a canonical order (one topic, or inputs already sorted) the bytes are equal.

Where byte identity is *not* expected (and the tests say so): Java writes multi-topic sticky
user data in its hash map's topic order, we write topics sorted; the values are the same.

Needs ``java``, ``javac`` and ``mvn`` (the jars come from ``make java-member``): skipped with
the reason when they are missing, except under ``CI=true``, where a missing tool fails.
"""

from __future__ import annotations

import os
import random
import struct
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kafka_sticky_plugin.assignor.leader import MemberMetadata, assign_group
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
from testlab.java_member import (
    JAVA_CLIENT_VERSIONS,
    JavaWireCodec,
    java_tools_missing,
)

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from java_form import java_grouped_order, java_sticky_user_data
from shapes import topic_names

JAVA_FORM_SEED = int(os.environ.get("JAVA_FORM_SEED", "20261205"))

Pair = tuple[str, int]

TOPICS: dict[str, tuple[str, ...]] = {
    "one-topic": ("orders",),
    "several-topics": ("zeta", "alpha", "m.topic_2"),
    "non-ascii": ("événements", "日本-topic", "ascii"),
}

OWNED: dict[str, tuple[Pair, ...]] = {
    "none": (),
    "one-topic": (("orders", 3), ("orders", 0), ("orders", 11)),
    "several-topics": (("zeta", 1), ("alpha", 0), ("alpha", 5), ("m.topic_2", 2)),
    "non-ascii": (("événements", 4), ("日本-topic", 0), ("日本-topic", 7), ("ascii", 1)),
}


@pytest.fixture(scope="module", params=JAVA_CLIENT_VERSIONS, ids=lambda v: f"java-{v}")
def java(request: pytest.FixtureRequest) -> Iterator[JavaWireCodec]:
    """One wire-codec JVM per kafka-clients version for the whole module."""
    reason = java_tools_missing()
    if reason is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but the Java cross-check cannot run: {reason}")
        pytest.skip(reason)
    codec = JavaWireCodec(request.param)
    yield codec
    codec.close()


def _hex(data: bytes | None) -> str | None:
    return None if data is None else data.hex()


def _bytes(text: str | None) -> bytes | None:
    return None if text is None else bytes.fromhex(text)


def _pairs(raw: list[Any]) -> list[Pair]:
    return [(str(t), int(p)) for t, p in raw]


def _sorted_pairs(pairs: Any) -> list[Pair]:
    return sorted((str(t), int(p)) for t, p in pairs)


SUBSCRIPTION_CASES = [
    pytest.param(version, topics, owned, generation, rack, user_data, id=case_id)
    for version in (0, 1, 2, 3)
    for case_id, topics, owned, generation, rack, user_data in [
        (f"v{version}-plain", TOPICS["one-topic"], OWNED["none"], -1, None, None),
        (f"v{version}-owned", TOPICS["one-topic"], OWNED["one-topic"], 7, "rack-a", b"\x00\x01"),
        (
            f"v{version}-multi",
            TOPICS["several-topics"],
            OWNED["several-topics"],
            0,
            "r1",
            b"",
        ),
        (
            f"v{version}-non-ascii",
            TOPICS["non-ascii"],
            OWNED["non-ascii"],
            2**31 - 1,
            "baie-é",
            b"\xff" * 9,
        ),
    ]
]


@pytest.mark.parametrize(
    ("version", "topics", "owned", "generation", "rack", "user_data"), SUBSCRIPTION_CASES
)
def test_subscription_java_to_ours_and_back(
    java: JavaWireCodec,
    version: int,
    topics: tuple[str, ...],
    owned: tuple[Pair, ...],
    generation: int,
    rack: str | None,
    user_data: bytes | None,
) -> None:
    """Java's ConsumerProtocol bytes decode with our codec to the fields of that version, and
    ours decode in Java to the same; with sorted inputs the bytes are identical."""
    java_bytes = bytes.fromhex(
        java.call(
            "encode_subscription",
            version=version,
            topics=list(topics),
            owned=[list(p) for p in owned],
            generation=generation,
            rack=rack,
            user_data=_hex(user_data),
        )["hex"]
    )
    ours = decode_subscription(java_bytes)
    assert ours.version == version
    assert sorted(ours.topics) == sorted(topics)
    assert ours.user_data == user_data
    assert _sorted_pairs(ours.owned_partitions) == (_sorted_pairs(owned) if version >= 1 else [])
    assert ours.generation_id == (generation if version >= 2 else -1)
    assert ours.rack_id == (rack if version >= 3 else None)

    our_bytes = encode_subscription(
        Subscription(
            version=version,
            topics=topics,
            user_data=user_data,
            owned_partitions=owned,
            generation_id=generation,
            rack_id=rack,
        )
    )
    back = java.call("decode_subscription", hex=our_bytes.hex())
    assert back["version"] == version
    assert sorted(back["topics"]) == sorted(topics)
    assert _bytes(back["user_data"]) == user_data
    assert _sorted_pairs(_pairs(back["owned"])) == (_sorted_pairs(owned) if version >= 1 else [])
    # Java reads "no generation" (v0, v1 or -1) as an empty Optional: null here.
    assert back["generation"] == (generation if version >= 2 and generation >= 0 else None)
    assert back["rack"] == (rack if version >= 3 else None)

    # Canonical inputs (what our encoder writes): Java writes the very same bytes.
    canonical = java.call(
        "encode_subscription",
        version=version,
        topics=sorted(topics),
        owned=[list(p) for p in _sorted_pairs(owned)],
        generation=generation,
        rack=rack,
        user_data=_hex(user_data),
    )["hex"]
    assert canonical == our_bytes.hex()


@pytest.mark.parametrize("version", [0, 1, 2, 3])
@pytest.mark.parametrize("case", ["none", "one-topic", "several-topics", "non-ascii"])
def test_assignment_both_ways(java: JavaWireCodec, version: int, case: str) -> None:
    """Assignments (with user data) round-trip between Java and us; canonical bytes equal."""
    partitions = OWNED[case]
    user_data = encode_sticky_user_data(partitions, 5) if partitions else None
    java_hex = java.call(
        "encode_assignment",
        version=version,
        partitions=[list(p) for p in partitions],
        user_data=_hex(user_data),
    )["hex"]
    ours = decode_assignment(bytes.fromhex(java_hex))
    assert _sorted_pairs(ours.partitions) == _sorted_pairs(partitions)
    assert ours.user_data == user_data

    our_bytes = encode_assignment(
        Assignment(version=version, partitions=partitions, user_data=user_data)
    )
    back = java.call("decode_assignment", hex=our_bytes.hex())
    assert _sorted_pairs(_pairs(back["partitions"])) == _sorted_pairs(partitions)
    assert _bytes(back["user_data"]) == user_data
    canonical = java.call(
        "encode_assignment",
        version=version,
        partitions=[list(p) for p in _sorted_pairs(partitions)],
        user_data=_hex(user_data),
    )["hex"]
    assert canonical == our_bytes.hex()


@pytest.mark.parametrize("generation", [-1, 0, 1, 41, 2**31 - 1])
@pytest.mark.parametrize("case", ["none", "one-topic", "several-topics", "non-ascii"])
def test_sticky_user_data_both_ways(java: JavaWireCodec, case: str, generation: int) -> None:
    """StickyAssignor's user data (previous assignment + generation) decodes to the same
    values both ways. Java always writes the generation field (v1, -1 for none), and so do
    we: Java reads our "none" as its own DEFAULT_GENERATION (-1). Byte identity holds for one
    topic with sorted partitions only: Java orders several topics by its hash map, we sort
    them."""
    partitions = OWNED[case]
    java_hex = java.call(
        "encode_sticky_user_data", partitions=[list(p) for p in partitions], generation=generation
    )["hex"]
    decoded, decoded_generation = decode_sticky_user_data(bytes.fromhex(java_hex))
    assert _sorted_pairs(decoded) == _sorted_pairs(partitions)
    assert decoded_generation == (generation if generation >= 0 else None)

    ours = encode_sticky_user_data(partitions, generation)
    back = java.call("decode_sticky_user_data", hex=ours.hex())
    assert _sorted_pairs(_pairs(back["partitions"])) == _sorted_pairs(partitions)
    assert back["generation"] == generation  # -1: Java's DEFAULT_GENERATION, as it writes it

    # Java keeps each topic's partitions in its assignment's order: given them sorted (as a
    # leader's plan is), one topic gives our bytes exactly.
    topics = {t for t, _ in partitions}
    if len(topics) <= 1:
        sorted_hex = java.call(
            "encode_sticky_user_data",
            partitions=[list(p) for p in _sorted_pairs(partitions)],
            generation=generation,
        )["hex"]
        assert sorted_hex == ours.hex()


@pytest.mark.parametrize(
    "names",
    [
        pytest.param(topic_names(500), id="bench-500"),
        pytest.param(topic_names(500, numbered=True), id="numbered-500"),
        pytest.param(topic_names(25), id="bench-25"),
        pytest.param([f"orders.{c}{i}" for c in "xyz" for i in range(7)], id="dotted-21"),
    ],
)
def test_the_benchmarks_java_members_write_javas_sticky_user_data(
    java: JavaWireCodec, names: list[str]
) -> None:
    """``make bench``'s Java members (``benchmarks/java_form.py``) send the real client's
    user data byte for byte: topics in its HashMap's order, each topic's partitions in the
    order of the assignment received (ascending, as a leader's plan)."""
    print(f"seed={JAVA_FORM_SEED}")
    rng = random.Random(JAVA_FORM_SEED + len(names))
    previous = [
        (topic, p)
        for topic in sorted(rng.sample(names, max(1, len(names) * 4 // 5)))
        for p in sorted(rng.sample(range(64), rng.choice([1, 1, 2, 3])))
    ]
    java_hex = java.call(
        "encode_sticky_user_data", partitions=[list(p) for p in previous], generation=7
    )["hex"]
    assert java_sticky_user_data(previous, 7).hex() == java_hex
    topics = [t for t, _ in previous]
    assert java_grouped_order(topics) != sorted(set(topics))  # not the sorted order


@pytest.mark.parametrize("generation", [-1, 0, 3, 2**31 - 1])
def test_cooperative_user_data_both_ways(java: JavaWireCodec, generation: int) -> None:
    """CooperativeStickyAssignor's user data is the int32 generation: same bytes, same value."""
    java_hex = java.call("encode_cooperative_user_data", generation=generation)["hex"]
    ours = encode_cooperative_user_data(generation if generation >= 0 else None)
    assert java_hex == ours.hex()
    assert decode_cooperative_user_data(bytes.fromhex(java_hex)) == (
        generation if generation >= 0 else None
    )
    back = java.call("decode_cooperative_user_data", hex=ours.hex(), owned=[])
    # Java keeps -1 (its DEFAULT_GENERATION) as a value; we read it as None: the same "none".
    assert back["generation"] == generation


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(bytes.fromhex("0000000700"), id="one-trailing-byte"),
        pytest.param(bytes.fromhex("0000000900000000deadbeef"), id="eight-trailing-bytes"),
        pytest.param(bytes.fromhex("ffffffff01"), id="none-then-trailing"),
    ],
)
def test_cooperative_user_data_trailing_bytes_read_like_java(
    java: JavaWireCodec, raw: bytes
) -> None:
    """Java reads the first int32 and ignores what follows (a future version may append
    fields); so do we."""
    expected = java.call("decode_cooperative_user_data", hex=raw.hex(), owned=[])["generation"]
    assert expected is not None
    assert decode_cooperative_user_data(raw) == (expected if expected >= 0 else None)


def test_java_codec_reports_bad_requests(java: JavaWireCodec) -> None:
    """The JVM answers a malformed request with an error, and keeps serving."""
    with pytest.raises(RuntimeError, match="unknown op"):
        java.call("no_such_op")
    assert java.call("encode_cooperative_user_data", generation=1)["hex"] == "00000001"


@pytest.mark.parametrize("protocol", ["sticky", "cooperative-sticky"])
def test_null_owned_array_member_gets_an_assignment_java_reads(
    java: JavaWireCodec, protocol: str
) -> None:
    """Issue 37: a member whose v1 subscription sends its owned partitions as a null array
    (count -1) and is planned nothing gets count 0 back (the general encoder's bytes), which
    Java's ``ConsumerProtocol`` reads as no partitions; the null array spliced back
    (``0001ffffffffffffffff``) is refused by Java's reader (a non-nullable array)."""
    null_owned = struct.pack(">hih", 1, 1, 1) + b"t" + struct.pack(">ii", -1, -1)
    members = [
        MemberMetadata(m, encode_subscription(Subscription(1, ("t",)))) for m in ("m1", "m2")
    ]
    members.append(MemberMetadata("m9", null_owned))
    out = assign_group(protocol, {"t": 2}, members)["m9"]
    assert out == encode_assignment(Assignment(1, ())) == bytes.fromhex("000100000000ffffffff")
    back = java.call("decode_assignment", hex=out.hex())
    assert back["partitions"] == [] and back["user_data"] is None
    with pytest.raises(RuntimeError):
        java.call("decode_assignment", hex="0001ffffffffffffffff")
