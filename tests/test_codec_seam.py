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

import os
import random
import struct
from array import array
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import subscriptions

from kafka_sticky_plugin.codec import (
    Assignment,
    Subscription,
    decode_subscription,
    encode_assignment,
    encode_sticky_user_data,
    encode_subscription,
    implementation,
    read_user_data_claim,
)
from kafka_sticky_plugin.codec import seam as reference
from kafka_sticky_plugin.codec.consumer_protocol import SubscriptionRead
from kafka_sticky_plugin.codec.sticky_user_data import UserDataClaim, read_user_data_runs
from kafka_sticky_plugin.codec.topic_partitions import TopicRuns, runs_pairs
from kafka_sticky_plugin.core.spec import canonical_runs
from kafka_sticky_plugin.errors import CodecError

IMPLEMENTATIONS: list[ModuleType] = [reference]
if implementation.twin is not None:
    IMPLEMENTATIONS.append(implementation)


def _spec_claim(user_data: bytes | None, cooperative: bool) -> object:
    """The claim rule's pairs and generation, or the error's fields."""
    try:
        return read_user_data_claim(user_data, cooperative=cooperative)
    except CodecError as exc:
        return ("error", exc.what, exc.expected, exc.offset)


def _spec_read(raw: bytes, cooperative: bool) -> object:
    """What the specification says of one payload: the subscription and its user data's
    claim, or the error's fields."""
    try:
        subscription = decode_subscription(raw)
    except CodecError as exc:
        return ("error", exc.what, exc.expected, exc.offset)
    return subscription, _spec_claim(subscription.user_data, cooperative)


def _check_runs(runs: TopicRuns) -> None:
    """The seam's run shape: a tuple of names, lengths ``None`` exactly when every run holds
    one partition, the flat partitions an int32 ``array("i")``."""
    topics, lengths, flat = runs
    assert type(topics) is tuple and type(flat) is array and flat.typecode == "i"
    if lengths is None:
        assert len(flat) == len(topics)
    else:
        assert type(lengths) is list and len(lengths) == len(topics) and sum(lengths) == len(flat)
        assert not (len(flat) == len(topics) and all(lengths))


def _seam_claim(claim: UserDataClaim | CodecError | None) -> object:
    if isinstance(claim, CodecError):
        return ("error", claim.what, claim.expected, claim.offset)
    assert claim is not None
    runs, generation, sorted_runs = claim
    _check_runs(runs)
    # ``sorted`` is exactly "these runs are canonical runs".
    assert sorted_runs == (canonical_runs(runs) == runs), runs
    return runs_pairs(runs), generation


def _seam_read(implementation: ModuleType, raws: list[bytes], cooperative: bool) -> list[object]:
    out: list[object] = []
    reads = implementation.read_subscriptions(raws, cooperative)
    for raw, read in zip(raws, reads, strict=True):
        if isinstance(read, CodecError):
            out.append(("error", read.what, read.expected, read.offset))
            continue
        _check_runs(read.owned)
        subscription = read.subscription()
        if read.owned_array is not None:
            # canonical: the writer writes exactly these bytes for those pairs, and they are
            # the payload's own bytes
            again = encode_assignment(Assignment(0, subscription.owned_partitions))
            assert again[2:-4] == read.owned_array and read.owned_array in raw
        out.append((subscription, _seam_claim(read.claim)))
    return out


@pytest.mark.parametrize("implementation", IMPLEMENTATIONS)
@given(st.lists(subscriptions(), max_size=4), st.data(), st.booleans())
def test_read_subscriptions_equal_decode_on_valid_and_mutated_bytes(
    implementation: ModuleType, subs: list[object], data: st.DataObject, cooperative: bool
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
    got = _seam_read(implementation, raws, cooperative)
    assert got == [_spec_read(raw, cooperative) for raw in raws]


@pytest.mark.parametrize("implementation", IMPLEMENTATIONS)
@given(st.lists(st.binary(max_size=80), max_size=6), st.booleans())
def test_read_subscriptions_equal_decode_on_random_bytes(
    implementation: ModuleType, raws: list[bytes], cooperative: bool
) -> None:
    got = _seam_read(implementation, raws, cooperative)
    assert got == [_spec_read(raw, cooperative) for raw in raws]


def _claims(
    implementation: ModuleType, user_data: list[bytes | None], cooperative: bool
) -> list[UserDataClaim | CodecError | None]:
    """The claims read of each user data, sent in a v0 subscription to no topic of its own."""
    payloads = [encode_subscription(Subscription(0, (), data)) for data in user_data]
    return [read.claim for read in implementation.read_subscriptions(payloads, cooperative)]


@pytest.mark.parametrize("implementation", IMPLEMENTATIONS)
@given(st.lists(st.one_of(st.none(), st.binary(max_size=60)), max_size=4), st.booleans())
def test_user_data_claims_equal_the_claim_rule(
    implementation: ModuleType, user_data: list[bytes | None], cooperative: bool
) -> None:
    got = _claims(implementation, user_data, cooperative)
    assert [_seam_claim(claim) for claim in got] == [
        _spec_claim(data, cooperative) for data in user_data
    ]


def _comparable(read: SubscriptionRead | CodecError) -> object:
    if isinstance(read, CodecError):
        return ("error", read.what, read.expected, read.offset)
    return read._replace(claim=None), _seam_claim(read.claim)


def test_a_payload_or_claim_the_twin_declines_is_read_by_the_reference(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Where the twin returns ``None`` for a payload, or a read whose claim is ``None``, the
    dispatcher reads that payload with the reference (claim, error and offset included) and
    keeps the twin's reads of the others (a stand-in twin: this runs without the real one)."""
    owned = (("a", 0), ("a", 1))
    good = encode_subscription(
        Subscription(1, ("a",), encode_sticky_user_data(owned, 3), owned_partitions=owned)
    )
    unreadable_user_data = encode_subscription(Subscription(0, ("a",), b"\x00\x00\x00\x05no"))
    payloads = [good, unreadable_user_data, good, good[:3]]
    first, unreadable_claim, second, unreadable = reference.read_subscriptions(payloads, False)
    assert isinstance(first, SubscriptionRead) and isinstance(second, SubscriptionRead)
    assert isinstance(unreadable_claim, SubscriptionRead)
    assert isinstance(unreadable_claim.claim, CodecError) and isinstance(unreadable, CodecError)
    twins_own = first._replace(rack_id="the twin's read")
    declined = [unreadable_claim._replace(claim=None), second._replace(claim=None)]

    class StandIn:
        def read_subscriptions(self, given: list[bytes], cooperative: bool) -> list[object]:
            assert given is payloads and cooperative is False
            return [tuple(twins_own), *map(tuple, declined), None]

    monkeypatch.setattr(implementation, "twin", StandIn())
    got = implementation.read_subscriptions(payloads, False)
    assert got[0] == twins_own
    expected: list[SubscriptionRead | CodecError] = [unreadable_claim, second, unreadable]
    assert list(map(_comparable, got[1:])) == list(map(_comparable, expected))


def _sticky_array(rng: random.Random, shape: str) -> bytes:
    """Sticky user data v1 whose array has ``shape``: canonical, or one way of not being."""
    if shape == "null":
        return b"\xff\xff\xff\xff" + struct.pack(">i", 3)
    topics = sorted(rng.sample([f"t{i:02d}" for i in range(40)], rng.randint(1, 6)))
    runs = [sorted(rng.sample(range(30), rng.randint(1, 5))) for _ in topics]
    if shape == "unsorted topics" and len(topics) > 1:
        topics.reverse()
    elif shape == "repeated topic":
        topics.append(topics[0])
        runs.append([99])
    elif shape == "empty run":
        runs[-1] = []
    elif shape == "unsorted partitions":
        runs[0] = [5, 1]
    out = [struct.pack(">i", len(topics))]
    for topic, partitions in zip(topics, runs, strict=True):
        out.append(struct.pack(">h", len(topic)) + topic.encode())
        out.append(struct.pack(f">i{len(partitions)}i", len(partitions), *partitions))
    return b"".join(out) + struct.pack(">i", 3)


@pytest.mark.parametrize("implementation", IMPLEMENTATIONS)
def test_a_claims_sorted_flag_says_whether_its_runs_are_canonical(
    implementation: ModuleType,
) -> None:
    """The leader skips sorting a claim the seam calls sorted: the flag is true exactly when
    ``canonical_runs`` would return the runs unchanged, for canonical arrays and for each way
    of not being one (seeded; the seed is printed)."""
    seed = int(os.environ.get("SEAM_SORTED_SEED", random.randrange(2**32)))
    print(f"SEAM_SORTED_SEED={seed}")
    rng = random.Random(seed)
    shapes = ["canonical", "unsorted topics", "repeated topic", "empty run"]
    shapes += ["unsorted partitions", "null"]
    datas: list[bytes | None] = [_sticky_array(rng, shape) for shape in shapes for _ in range(20)]
    datas += [None, b"", struct.pack(">i", 7)]
    flags = []
    for data, claim in zip(datas, _claims(implementation, datas, True), strict=True):
        assert claim is not None and not isinstance(claim, CodecError), data
        runs, _, sorted_runs = claim
        assert sorted_runs == (canonical_runs(runs) == runs), (data, runs)
        flags.append(sorted_runs)
    assert flags[:20] == [True] * 20  # every canonical array
    assert flags[-3:] == [True] * 3  # nothing claimed
    assert not any(flags[40:100])  # repeated topic, empty run, unsorted partitions


@pytest.mark.parametrize("implementation", IMPLEMENTATIONS)
def test_a_claim_equal_to_the_owned_runs_is_that_object(implementation: ModuleType) -> None:
    """Ours and librdkafka's members write their owned list twice (owned partitions and
    sticky user data): the seam hands the claim over as the owned runs' very object, and
    equal topic tuples as one tuple (what lets the leader skip comparing them)."""
    owned = (("a", 0), ("a", 1), ("b", 2))
    raw = encode_subscription(
        Subscription(1, ("a", "b"), encode_sticky_user_data(owned, 4), owned_partitions=owned)
    )
    first, second = implementation.read_subscriptions([raw, raw], False)
    assert first.claim[0] is first.owned and first.claim[1] == 4
    assert first.owned == (("a", "b"), [2, 1], array("i", [0, 1, 2]))
    assert second.topics is first.topics and second.owned[0] is first.owned[0]


def test_the_user_datas_copy_of_the_owned_array_is_not_read_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The reference reads sticky user data whose bytes start with the owned array's bytes
    (canonical or not) as the owned runs without reading the array again, with the claim,
    error and offset that reading it alone gives; other user data is read."""
    from kafka_sticky_plugin.codec import sticky_user_data, topic_partitions

    reads: list[int] = []

    def counted(*args: Any, **kwargs: Any) -> object:
        reads.append(1)
        return topic_partitions.read_topic_runs(*args, **kwargs)

    monkeypatch.setattr(sticky_user_data, "read_topic_runs", counted)

    def array(*groups: tuple[str, list[int]]) -> bytes:
        out = struct.pack(">i", len(groups))
        for topic, partitions in groups:
            out += struct.pack(">h", len(topic)) + topic.encode()
            out += struct.pack(f">i{len(partitions)}i", len(partitions), *partitions)
        return out

    unsorted = array(("b", [1]), ("a", [2, 0]))
    for owned, tail, read_again in [
        (unsorted, struct.pack(">i", 7), 0),
        (unsorted, b"", 0),
        (unsorted, b"\x00", 0),
        (array(("a", [0, 2]), ("b", [1])), struct.pack(">i", -3), 0),
        (array(("a", [])), b"", 1),  # holds no partition: read as usual
    ]:
        for user_data in (owned + tail, array(("a", [2, 0]), ("b", [1])) + tail):
            raw = struct.pack(">hi", 1, 0) + struct.pack(">i", len(user_data)) + user_data + owned
            try:
                alone: UserDataClaim | CodecError = read_user_data_runs(
                    user_data, cooperative=False
                )
            except CodecError as exc:
                alone = exc
            reads.clear()
            [read] = reference.read_subscriptions([raw], False)
            assert not isinstance(read, CodecError)
            assert len(reads) == (read_again if user_data.startswith(owned) else 1)
            if isinstance(alone, CodecError):
                assert isinstance(read.claim, CodecError)
                assert read.claim.args == alone.args and read.claim.offset == alone.offset
                continue
            assert read.claim == alone
            assert (read.claim[0] is read.owned) == (user_data.startswith(owned) and not reads)


@pytest.mark.parametrize("implementation", IMPLEMENTATIONS)
def test_null_owned_array_is_empty_and_never_canonical(implementation: ModuleType) -> None:
    """A v1 subscription whose owned array is null (count -1) reads as no owned partitions
    and hands back no owned array (so it is never written back as an assignment)."""
    raw = bytes.fromhex("0001 00000001 0001 74 ffffffff ffffffff")
    [read] = implementation.read_subscriptions([raw], False)
    assert read.subscription() == decode_subscription(raw)
    assert read.owned == ((), None, array("i")) and read.owned_array is None


@pytest.mark.parametrize("implementation", IMPLEMENTATIONS)
def test_write_assignments_of_an_empty_plan_write_count_zero(implementation: ModuleType) -> None:
    assert implementation.write_assignments(3, ["t"], [2], [[], [0, 1]]) == [
        encode_assignment(Assignment(3, ())),
        encode_assignment(Assignment(3, (("t", 0), ("t", 1)))),
    ]
