"""The compiled twin against the reference, function by function of the wire seam.

For every input, :mod:`kafka_sticky_plugin.codec.implementation` (the twin first, the
reference wherever the twin returns ``None``) must return what :mod:`kafka_sticky_plugin.codec.seam`
returns, or raise the same error (type, message, field and byte offset). And the twin must
not get there by deferring everything: it returns ``None`` exactly for the payloads the
reference refuses (checked on every generated, golden, captured and mutated input).

Inputs: seeded generators of well-formed and odd-but-valid messages (null arrays, repeated
and unsorted pairs, empty groups, v1+ headers that end before a field, versions above 3),
each mutated (bytes flipped, cut, counts set to -1, -2 or 2**31-1, invalid UTF-8); the golden
vectors of ``tests/test_codec_golden.py`` (spec and Java-derived) and the librdkafka and
kafka-python captures in ``tests/vectors/``; and the benchmark shapes' inputs (our members'
and Java members' bytes), whose plans' assignment bytes must hash the same both ways.
Seeded: ``TWIN_DIFF_SEED=<n>`` replays a run; the seed is printed.

Runs only where the twin is installed (``make twin``, part of ``make test``): skipped with one
line otherwise, and a failure under ``CI=true``, where the twin tier must run.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import random
import struct
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from kafka_sticky_plugin.codec import implementation, seam
from kafka_sticky_plugin.errors import CodecError
from kafka_sticky_plugin.twin_loader import TWIN_MODULE

VECTORS = Path(__file__).parent / "vectors"
SEED = int(os.environ.get("TWIN_DIFF_SEED", "20261204"))


def _twin_module() -> Any:
    try:
        twin = importlib.import_module(TWIN_MODULE)
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true: the compiled twin must be installed (make twin)")
        pytest.skip(
            "twin tier skipped: kafka-sticky-plugin-twin is not installed (make twin)",
            allow_module_level=True,
        )
    if twin.SEAM_VERSION != implementation.SEAM_VERSION:
        pytest.fail(
            f"the installed twin implements seam {twin.SEAM_VERSION}, "
            f"this package seam {implementation.SEAM_VERSION}: rebuild it (make twin)"
        )
    return twin


TWIN: Any = _twin_module()


@pytest.fixture(autouse=True)
def _compiled_path_in_use(monkeypatch: pytest.MonkeyPatch) -> None:
    """The dispatching functions use the twin even under ``KAFKA_STICKY_PURE_PYTHON=1``."""
    monkeypatch.setattr(implementation, "twin", TWIN)


def _rng(name: str) -> random.Random:
    print(f"{name}: TWIN_DIFF_SEED={SEED}")
    return random.Random(f"{SEED}/{name}")


def _outcome(call: Callable[..., Any], *args: Any) -> Any:
    """What ``call(*args)`` returns, or its error as comparable values."""
    try:
        return ("value", call(*args))
    except CodecError as exc:
        return ("CodecError", exc.what, exc.expected, exc.offset, str(exc))
    except Exception as exc:  # whatever the reference raises, the same from both
        return (type(exc).__name__, str(exc))


def _error(exc: CodecError) -> Any:
    return ("CodecError", exc.what, exc.expected, exc.offset, str(exc))


def _claim_outcome(claim: Any) -> Any:
    return _error(claim) if isinstance(claim, CodecError) else ("value", claim)


def _read_outcome(result: seam.SubscriptionRead | CodecError) -> Any:
    """A read as comparable values (an error's fields, the claim's too); whether the claim's
    runs are the owned runs' object (the seam's sharing rule, for runs holding a partition)
    is part of it."""
    if isinstance(result, CodecError):
        return _error(result)
    claim = result.claim
    shared = (
        not isinstance(claim, CodecError)
        and claim is not None
        and bool(claim[0][2])
        and claim[0] is result.owned
    )
    return ("value", result._replace(claim=_claim_outcome(claim)), shared)


# -- byte builders: what any client may send, canonical or not ----------------------------------


def _string(text: str | bytes) -> bytes:
    raw = text.encode() if isinstance(text, str) else text
    return struct.pack(">h", len(raw)) + raw


def _array(groups: Sequence[tuple[str | bytes, Sequence[int] | None]], null: bool = False) -> bytes:
    """A ``[topic [partition]]`` array exactly as given (``None`` partitions: a null inner
    array; ``null``: a null outer array)."""
    if null:
        return b"\xff\xff\xff\xff"
    out = [struct.pack(">i", len(groups))]
    for topic, partitions in groups:
        out.append(_string(topic))
        if partitions is None:
            out.append(b"\xff\xff\xff\xff")
        else:
            out.append(struct.pack(f">i{len(partitions)}i", len(partitions), *partitions))
    return b"".join(out)


_NAMES = ["a", "b", "t1", "orders", "topic-0001", "événements", "日本-topic", "", "z" * 300]


def _groups(rng: random.Random) -> list[tuple[str | bytes, Sequence[int] | None]]:
    """Groups in one of several shapes: canonical, unsorted, repeated, empty, null inner."""
    topics = rng.sample(_NAMES, rng.randint(0, 5))
    shape = rng.choice(["canonical", "canonical", "unsorted", "repeats", "empty", "null-inner"])
    if shape == "canonical":
        topics.sort()
    groups: list[tuple[str | bytes, Sequence[int] | None]] = []
    for topic in topics:
        partitions = sorted(rng.sample(range(-2, 3000), rng.randint(1, 6)))
        if shape == "unsorted":
            rng.shuffle(partitions)
        elif shape == "repeats" and partitions:
            partitions.append(partitions[0])
        elif shape == "empty" and rng.random() < 0.5:
            partitions = []
        groups.append((topic, None if shape == "null-inner" and rng.random() < 0.5 else partitions))
    if shape == "repeats" and groups:
        groups.append(groups[0])
    return groups


def _user_data(rng: random.Random) -> bytes | None:
    kind = rng.choice(["none", "empty", "sticky-v0", "sticky-v1", "cooperative", "noise"])
    if kind == "none":
        return None
    if kind == "empty":
        return b""
    if kind == "cooperative":
        return struct.pack(">i", rng.choice([-1, 0, 7, 2**31 - 1, -5]))
    if kind == "noise":
        return rng.randbytes(rng.randint(1, 12))
    data = _array(_groups(rng), null=rng.random() < 0.05)
    return data + (struct.pack(">i", rng.randint(-3, 50)) if kind == "sticky-v1" else b"")


def _nullable_bytes(data: bytes | None) -> bytes:
    return b"\xff\xff\xff\xff" if data is None else struct.pack(">i", len(data)) + data


def _subscription(rng: random.Random) -> bytes:
    """One subscription of any version, possibly ending before a field (v1+)."""
    version = rng.choice([0, 1, 2, 3, 3, 3, 4, 9])
    topics = rng.sample(_NAMES, rng.randint(0, 4))
    out = [struct.pack(">h", version)]
    out.append(b"\xff\xff\xff\xff" if rng.random() < 0.05 else struct.pack(">i", len(topics)))
    if not out[-1].startswith(b"\xff"):
        out.extend(_string(topic) for topic in topics)
    out.append(_nullable_bytes(_user_data(rng)))
    fields = [
        _array(_groups(rng), null=rng.random() < 0.05),
        struct.pack(">i", rng.choice([-1, 0, 5, 2**31 - 1])),
        b"\xff\xff" if rng.random() < 0.3 else _string(rng.choice(["rack-a", "r", "ラック"])),
    ]
    out.extend(fields[: rng.randint(0, 3)] if rng.random() < 0.3 else fields)
    if rng.random() < 0.1:
        out.append(rng.randbytes(rng.randint(1, 6)))  # trailing bytes: newer fields
    return b"".join(out)


def _mutations(data: bytes, rng: random.Random) -> Iterator[bytes]:
    """``data`` changed the ways a broken or hostile writer would."""
    if not data:
        return
    for _ in range(3):
        at = rng.randrange(len(data))
        yield data[:at] + bytes([data[at] ^ (1 << rng.randrange(8))]) + data[at + 1 :]
    yield data[: rng.randrange(len(data))]
    for word in (b"\xff\xff\xff\xff", b"\xff\xff\xff\xfe", b"\x7f\xff\xff\xff", b"\xff\xff"):
        at = rng.randrange(len(data))
        yield data[:at] + word + data[at + len(word) :]
    at = rng.randrange(len(data))
    yield data[:at] + b"\xc3\x28" + data[at + 2 :]  # invalid UTF-8 wherever a string may be
    yield data + rng.randbytes(rng.randint(1, 4))


# -- read_subscriptions -------------------------------------------------------------------------


def _check_subscriptions(payloads: list[bytes]) -> int:
    """Both implementations on ``payloads`` (one batch, under either protocol kind); the
    twin's ``None`` exactly where the reference refuses (the payload, or its claim). Returns
    how many the twin read itself (both kinds)."""
    read = 0
    for cooperative in (False, True):
        expected = [_read_outcome(r) for r in seam.read_subscriptions(payloads, cooperative)]
        got = [_read_outcome(r) for r in implementation.read_subscriptions(payloads, cooperative)]
        for payload, want, have in zip(payloads, expected, got, strict=True):
            assert have == want, (payload.hex(), cooperative)
        raw = TWIN.read_subscriptions(payloads, cooperative)
        for payload, want, values in zip(payloads, expected, raw, strict=True):
            assert (values is None) == (want[0] == "CodecError"), payload.hex()
            if values is not None:
                claim_refused = want[1].claim[0] == "CodecError"
                assert (values[7] is None) == claim_refused, payload.hex()
        read += sum(values is not None for values in raw)
    return read // 2


def test_generated_subscriptions_and_their_mutations() -> None:
    rng = _rng("subscriptions")
    payloads = [_subscription(rng) for _ in range(600)]
    # Nearly all are readable (a message cut before a field, then noise, may not be).
    assert _check_subscriptions(payloads) > 0.95 * len(payloads)
    mutated = [m for p in payloads for m in _mutations(p, rng)]
    read = _check_subscriptions(mutated)
    assert 0 < read < len(mutated)  # both outcomes are exercised


def test_golden_and_captured_subscriptions() -> None:
    import test_codec_golden as golden

    vectors = [v for v in vars(golden).values() if isinstance(v, bytes) and len(v) >= 2]
    captured = json.loads((VECTORS / "subscriptions_captured.json").read_text(encoding="utf-8"))
    vectors += [bytes.fromhex(record["hex"]) for record in captured["records"]]
    assert len(vectors) >= 15  # the golden file's and the captures
    _check_subscriptions(vectors)
    rng = _rng("golden")
    _check_subscriptions([m for v in vectors for m in _mutations(v, rng)])


def test_batches_that_are_not_lists_of_bytes() -> None:
    """A tuple is read; a generator or a non-bytes payload is the reference's to judge."""
    payloads = [_subscription(_rng("batch")) for _ in range(3)]
    assert _check_subscriptions(payloads) == 3
    assert TWIN.read_subscriptions(tuple(payloads), False) is not None
    assert TWIN.read_subscriptions(iter(payloads), False) is None
    assert TWIN.read_subscriptions(payloads, 1) is None
    assert TWIN.read_subscriptions([bytearray(payloads[0])], False) == [None]


# -- user data claims: each user data alone, in a subscription of its own ----------------------


def _check_claims(datas: list[bytes | None]) -> int:
    """Each user data sent in a v0 subscription to no topic, through
    :func:`_check_subscriptions` (the twin's claim ``None`` exactly where the reference's is
    an error). Returns how many claims the twin read itself (both protocol kinds)."""
    payloads = [struct.pack(">hi", 0, 0) + _nullable_bytes(data) for data in datas]
    _check_subscriptions(payloads)
    reads = [*TWIN.read_subscriptions(payloads, False), *TWIN.read_subscriptions(payloads, True)]
    return sum(values[7] is not None for values in reads)


def test_generated_user_data_claims_and_their_mutations() -> None:
    rng = _rng("claims")
    datas = [_user_data(rng) for _ in range(800)]
    _check_claims(datas)
    mutated: list[bytes | None] = [m for d in datas if d for m in _mutations(d, rng)]
    assert 0 < _check_claims(mutated) < 2 * len(mutated)


def test_golden_user_data_claims() -> None:
    import test_codec_golden as golden

    vectors: list[bytes | None] = [v for v in vars(golden).values() if isinstance(v, bytes)]
    assert _check_claims([None, b"", *vectors]) > 0


# -- write_assignments --------------------------------------------------------------------------


def _space(rng: random.Random) -> tuple[list[str], list[int]]:
    topics = sorted(rng.sample(_NAMES, rng.randint(1, len(_NAMES))))
    return topics, [rng.choice([0, 1, 2, 7, 300]) for _ in topics]


def _plans(rng: random.Random, total: int, members: int) -> list[Sequence[int]]:
    plans: list[Sequence[int]] = []
    for _ in range(members):
        if total and rng.random() < 0.2:
            start = rng.randrange(total)
            plans.append(range(start, rng.randint(start, total)))
        else:
            plans.append(sorted(rng.sample(range(total), rng.randint(0, min(total, 40)))))
    return plans


class _Index(int):
    """An int subclass: the twin reads exact ints only and leaves it to the reference."""


def _check_writes(version: Any, topics: Any, counts: Any, plans: Any) -> bool:
    """Both implementations; returns whether the twin wrote them itself."""
    want = _outcome(seam.write_assignments, version, topics, counts, plans)
    have = _outcome(implementation.write_assignments, version, topics, counts, plans)
    assert have == want
    raw = TWIN.write_assignments(version, topics, counts, plans)
    if raw is not None:
        assert want == ("value", raw)
    return raw is not None


def test_generated_plans_write_the_same_bytes() -> None:
    rng = _rng("plans")
    for _ in range(300):
        topics, counts = _space(rng)
        plans = _plans(rng, sum(counts), rng.randint(0, 6))
        assert _check_writes(rng.choice([0, 1, 3, 32767]), topics, counts, plans)


def test_plans_and_spaces_the_reference_refuses() -> None:
    """Bad input: the reference's error, never the twin's bytes."""
    rng = _rng("bad-plans")
    topics, counts = ["a", "b"], [3, 2]
    for version in (-1, 32768, True, 1.0, None):
        assert not _check_writes(version, topics, counts, [[0]])
    for plan in ([1, 0], [0, 0], [-1], [5], [0, 2**40], [True], [0.0], range(4, 2, -1)):
        assert not _check_writes(3, topics, counts, [[0], plan])
    # ints beyond i64 (overflow in the twin's list reader) and an int subclass: declined
    for too_wide in ([0, 2**70], [-(2**70)], [0, 2**63], [_Index(1)]):
        assert not _check_writes(3, topics, counts, [[0], too_wide])
    assert not _check_writes(3, ["a", "x" * 40000], [1, 1], [[0], [1]])
    assert not _check_writes(3, ["a", 7], [1, 1], [[1]])
    assert not _check_writes(3, ["a", "\ud800"], [1, 1], [[1]])
    # An unwritable name that no plan uses: the reference writes the others; so may the twin.
    _check_writes(3, ["a", "x" * 40000], [1, 1], [[0]])
    for _ in range(100):
        topics, counts = _space(rng)
        plan = sorted(rng.sample(range(-3, sum(counts) + 3), rng.randint(1, 5)))
        rng.shuffle(plan)
        _check_writes(rng.choice([0, 3, -1]), topics, counts, [plan])


# -- the benchmark inputs -----------------------------------------------------------------------

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))


def _bench_members(shape_name: str, protocol: str, java: bool) -> tuple[Any, list[Any]]:
    """A benchmark shape's ``rejoin`` phase as JoinGroup metadata (every member owns its
    fresh partitions at generation 1, a newcomer joins with the first member's topics): our
    members' bytes, or Java members' (:mod:`java_form`)."""
    import java_form
    import shapes
    from bench_leader import _member_metadata

    from kafka_sticky_plugin.assignor.leader import MemberMetadata, assign_group
    from kafka_sticky_plugin.codec import decode_assignment

    shape = shapes.SHAPES[shape_name]
    subs = shape.subscriptions()
    racks = shape.member_racks(subs)
    first = _member_metadata(protocol, subs, None)
    fresh = assign_group(
        protocol, shape.partitions, [MemberMetadata(m, raw) for m, raw in first.items()]
    )
    previous = {m: list(decode_assignment(raw).partitions) for m, raw in fresh.items()}
    if java:
        metadata = java_form.java_metadata(protocol, subs, racks, previous)
    else:
        metadata = _member_metadata(protocol, subs, previous)
    newcomer = {"member-new": next(iter(subs.values()))}
    metadata.update(_member_metadata(protocol, newcomer, None))
    return shape, [MemberMetadata(m, raw) for m, raw in metadata.items()]


_INPUTS = [("cooperative-sticky", False), ("sticky", False), ("sticky", True)]
_BENCH_CASES = [
    *[(shape, *given) for shape in ("NESTED-10k", "HET-100k") for given in _INPUTS],
    # a million owned pairs, about 20 s on 2 cores
    pytest.param("H-1M", "cooperative-sticky", False, marks=pytest.mark.slow),
]


@pytest.mark.parametrize(("shape_name", "protocol", "java"), _BENCH_CASES)
def test_benchmark_inputs_read_and_plan_the_same(
    shape_name: str, protocol: str, java: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The leader's whole path on a benchmark shape's rejoin: every subscription and user
    data claim read the same, and the assignments' bytes hash the same, with the twin and
    with the reference alone."""
    from kafka_sticky_plugin.assignor.leader import assign_group

    shape, members = _bench_members(shape_name, protocol, java)
    payloads = [bytes(member.metadata) for member in members]
    assert _check_subscriptions(payloads) == len(payloads)
    user_data = [r.user_data for r in seam.read_subscriptions(payloads, False)]  # type: ignore[union-attr]
    assert _check_claims(user_data) >= len(user_data)  # every one under its own protocol

    def digest() -> str:
        out = assign_group(protocol, shape.partitions, members)
        return hashlib.sha256(b"".join(k.encode() + v for k, v in sorted(out.items()))).hexdigest()

    compiled = digest()
    monkeypatch.setattr(implementation, "twin", None)
    reference = digest()
    print(f"{shape_name} {protocol} {'java' if java else 'ours'}: assignments sha256 {compiled}")
    assert compiled == reference
