"""The leader's bytes path (owned partitions and user data read by the wire seam as runs,
specs built from runs, claims resolved from runs) against the pair-based object path, on
seeded random input (the seed is printed): canonical owned arrays, non-canonical ones
(topics in a Java member's hash order, unsorted or repeated partitions, a topic written
twice, empty and null groups, negative partitions), Java members' user data, and user data
adding to the owned partitions. The same specs (``owned`` included) and claims, with the
compiled twin (when installed) and with the reference alone; canonical runs are the sorted
distinct pairs. (Ported from main's tests/test_codec_owned_runs.py, whose codec-internal
reader comparisons left with the fast paths, issue 37.)
"""

from __future__ import annotations

import random
import struct
from collections.abc import Sequence
from itertools import chain

import pytest

from kafka_sticky_plugin.assignor.leader import MemberMetadata, member_spec, read_group
from kafka_sticky_plugin.assignor.strategies import COOPERATIVE_STICKY, STICKY
from kafka_sticky_plugin.codec import decode_subscription, encode_sticky_user_data, implementation
from kafka_sticky_plugin.codec._wire import Reader
from kafka_sticky_plugin.codec.topic_partitions import read_topic_runs
from kafka_sticky_plugin.core.balance_builder import _runs_by_topic
from kafka_sticky_plugin.core.claims import Claims, resolve_claims
from kafka_sticky_plugin.core.layout import Layout, build_layout
from kafka_sticky_plugin.core.spec import MemberSpec, canonical_runs, runs_pairs
from kafka_sticky_plugin.errors import CodecError

SEEDS = range(300)
TWIN = [False, True] if implementation.twin is not None else [False]

Groups = list[tuple[str, list[int] | None]]


def _names(rng: random.Random) -> list[str]:
    # Hash-like names (as Java's order would mix them) and a few short ones, one empty.
    return [f"t{rng.randrange(1 << 16):04x}" for _ in range(rng.randint(1, 12))] + ["", "a"]


def _groups(rng: random.Random) -> Groups:
    """Topic groups in some order; ``None`` partitions stand for a null array (count -1)."""
    names = sorted(set(_names(rng)))
    chosen = rng.sample(names, rng.randint(0, len(names)))
    shape = rng.random()
    if shape < 0.4:
        chosen.sort()  # canonical topic order
    groups: Groups = []
    for name in chosen:
        if shape < 0.25:
            groups.append((name, [rng.randrange(4)]))  # one partition each
            continue
        parts = sorted(rng.sample(range(-1 if rng.random() < 0.1 else 0, 40), rng.randint(1, 6)))
        if rng.random() < 0.15:
            rng.shuffle(parts)
        if rng.random() < 0.1:
            parts.append(parts[0])  # a repeated partition
        if rng.random() < 0.05:
            parts = []
        groups.append((name, None if rng.random() < 0.03 else parts))
    if groups and rng.random() < 0.1:
        groups.append(rng.choice(groups))  # a topic written twice
    return groups


def _array_bytes(groups: Sequence[tuple[str, list[int] | None]]) -> bytes:
    out = [struct.pack(">i", len(groups))]
    for name, parts in groups:
        raw = name.encode()
        out.append(struct.pack(">h", len(raw)) + raw)
        if parts is None:
            out.append(struct.pack(">i", -1))
        else:
            out.append(struct.pack(f">i{len(parts)}i", len(parts), *parts))
    return b"".join(out)


def _damaged(rng: random.Random, data: bytes) -> bytes:
    """``data`` as sent, or cut short, or with a byte changed (a length, a count, a name)."""
    roll = rng.random()
    if roll < 0.75 or len(data) < 2:
        return data
    if roll < 0.9:
        return data[: rng.randrange(len(data))]
    at = rng.randrange(len(data))
    return data[:at] + bytes([rng.choice([0x00, 0x7F, 0x80, 0xFF])]) + data[at + 1 :]


@pytest.mark.parametrize("seed", SEEDS)
def test_canonical_runs_are_the_sorted_distinct_pairs(seed: int) -> None:
    print(f"seed={seed}")
    rng = random.Random(seed)
    for _ in range(8):
        runs, _ = read_topic_runs(Reader(_array_bytes(_groups(rng)), "array"), "owned")
        pairs = runs_pairs(runs)
        canonical = canonical_runs(runs)
        assert runs_pairs(canonical) == tuple(sorted(set(pairs)))
        topics, lengths, partitions = canonical
        assert list(topics) == sorted(set(topics))
        assert (lengths is None) == (len(topics) == len(partitions))
        assert lengths is None or min(lengths) >= 1


def _subscription_bytes(
    version: int,
    topics: list[str],
    user_data: bytes | None,
    owned: bytes,
    generation: int,
    rack: str | None,
) -> bytes:
    """A subscription written by hand, ``owned`` being the raw owned-partitions array (the
    codec's writer always sorts)."""
    out = [struct.pack(">hi", version, len(topics))]
    out += [struct.pack(">h", len(t)) + t.encode() for t in topics]
    out.append(struct.pack(">i", -1) if user_data is None else struct.pack(">i", len(user_data)))
    out.append(user_data or b"")
    if version >= 1:
        out.append(owned)
    if version >= 2:
        out.append(struct.pack(">i", generation))
    if version >= 3:
        out.append(
            struct.pack(">h", -1) if rack is None else struct.pack(">h", len(rack)) + rack.encode()
        )
    return b"".join(out)


def _grouped(pairs: list[tuple[str, int]]) -> list[tuple[str, list[int]]]:
    by_topic: dict[str, list[int]] = {}
    for t, p in pairs:
        by_topic.setdefault(t, []).append(p)
    return [(t, ps) for t, ps in by_topic.items()]


def _member(rng: random.Random, counts: dict[str, int], protocol: str) -> bytes:
    """One member's subscription: ours (canonical owned block, user data repeating or adding
    to it), a Java member's (no owned partitions, user data in hash order), or owned
    partitions written out of order."""
    names = [*counts, "gone"]
    topics = sorted(rng.sample(names, rng.randint(1, len(names))))
    owned = [
        (t, rng.randrange(-1, counts.get(t, 3) + 2)) for t in rng.sample(names, min(3, len(names)))
    ]
    owned += [(t, p) for t in topics for p in range(counts.get(t, 0)) if rng.random() < 0.3]
    owned = sorted(set(owned))
    previous = owned if rng.random() < 0.6 else owned[: len(owned) // 2]
    if rng.random() < 0.2 and owned:
        previous = [*previous, (rng.choice(topics), rng.randrange(4))]  # user data adds one
    owned_groups = _grouped(owned)
    user_data: bytes | None
    roll = rng.random()
    if roll < 0.35:
        # A Java member: no owned partitions, its previous assignment in hash order.
        groups = _grouped(sorted(set(previous)))
        rng.shuffle(groups)
        user_data = _array_bytes(groups) + struct.pack(">i", rng.randrange(-1, 5))
        owned_groups = []
    elif roll < 0.5:
        # Owned partitions out of order (a Java member under COOPERATIVE), maybe repeated.
        rng.shuffle(owned_groups)
        owned_groups = [
            (t, ps[::-1] + ps[:1] if rng.random() < 0.3 else ps) for t, ps in owned_groups
        ]
        user_data = rng.randrange(0, 5).to_bytes(4, "big")
    elif protocol == STICKY and rng.random() < 0.8:
        user_data = encode_sticky_user_data(previous, rng.choice([None, 1, 2]))
    else:
        user_data = rng.choice([None, rng.randrange(0, 5).to_bytes(4, "big")])
    return _subscription_bytes(
        rng.choice([0, 1, 2, 3, 3]),
        topics,
        user_data,
        _array_bytes(owned_groups),
        rng.choice([-1, 1, 2, 3]),
        rng.choice([None, "", "a"]),
    )


@pytest.mark.parametrize("twin", TWIN)
@pytest.mark.parametrize("protocol", [STICKY, COOPERATIVE_STICKY])
@pytest.mark.parametrize("seed", SEEDS[:150])
def test_bulk_specs_and_claims_equal_the_pair_decode(
    seed: int, protocol: str, twin: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``read_group`` on bytes (runs, through the seam: the twin or the reference) against
    :func:`member_spec` of the decoded subscription (pairs): equal specs, ``owned``
    included, and equal claims on a layout."""
    if not twin:
        monkeypatch.setattr(implementation, "twin", None)
    print(f"seed={seed}")
    rng = random.Random(seed)
    counts = {f"t{i}": rng.choice([0, 1, 3, 8, 20]) for i in range(rng.randint(1, 6))}
    metadata = {f"m{i:02d}": _member(rng, counts, protocol) for i in range(rng.randint(1, 10))}
    group = read_group(protocol, [MemberMetadata(m, d) for m, d in metadata.items()])
    reference: list[MemberSpec] = []
    for member_id, data in metadata.items():
        try:
            reference.append(member_spec(member_id, decode_subscription(data), protocol))
        except CodecError:
            assert member_id in group.unreadable
    assert [(s, s.owned) for s in reference] == [(s, s.owned) for s in group.specs]
    fresh = read_group(protocol, [MemberMetadata(m, d) for m, d in metadata.items()])
    layout = build_layout(counts, fresh.specs)
    runs_claims = resolve_claims(layout)  # owned never built
    _check_split_by_topic(layout, runs_claims)
    pair_claims = resolve_claims(build_layout(counts, reference))
    assert runs_claims == pair_claims


@pytest.mark.parametrize("seed", SEEDS[:100])
def test_claims_of_runs_equal_claims_of_pairs(seed: int) -> None:
    """Specs built from canonical runs against the same claims as pairs: unknown and
    unsubscribed topics, out-of-range and negative partitions, contested claims."""
    print(f"seed={seed}")
    rng = random.Random(seed)
    counts = {f"t{i}": rng.choice([0, 1, 2, 5, 9]) for i in range(rng.randint(1, 6))}
    near_edges = rng.random() < 0.5  # known topics, partitions in [0, count]: edges only
    if near_edges:
        counts = {t: max(n, 1) for t, n in counts.items()}
    names = [*counts] if near_edges else [*counts, "gone"]
    by_runs, by_pairs = [], []
    for i in range(rng.randint(1, 8)):
        topics = names if near_edges else rng.sample(names, rng.randint(1, len(names)))
        wanted = {
            (t, p)
            for t in rng.sample(names, rng.randint(0, len(names)))
            for p in rng.sample(
                range(counts[t] + 1) if near_edges else range(-1, 11),
                rng.randint(1, min(4, counts[t] + 1) if near_edges else 4),
            )
        }
        groups: Groups = [
            (t, sorted(p for u, p in wanted if u == t)) for t in sorted({t for t, _ in wanted})
        ]
        runs = canonical_runs(
            (
                tuple(t for t, _ in groups),
                [len(ps or ()) for _, ps in groups],
                list(chain.from_iterable(ps or () for _, ps in groups)),
            )
        )
        generation = rng.choice([-1, 1, 2])
        by_runs.append(
            MemberSpec.from_runs(member_id=f"m{i}", topics=topics, runs=runs, generation=generation)
        )
        by_pairs.append(
            MemberSpec(member_id=f"m{i}", topics=topics, owned=wanted, generation=generation)
        )
    layout = build_layout(counts, by_runs)
    claims = resolve_claims(layout)
    assert claims == resolve_claims(build_layout(counts, by_pairs))
    _check_split_by_topic(layout, claims)


def _check_split_by_topic(layout: Layout, claims: Claims) -> None:
    """Every member's claims split by topic from its runs equal the split of its owned list
    (what the balancing builder starts from), order of topics included."""
    ends = [o + n for o, n in zip(layout.offsets, layout.counts, strict=True)]
    for m, qs in enumerate(claims.owned):
        split = claims.owned_by_topic(m)
        if split is not None:
            expected = _runs_by_topic(qs, layout.offsets, ends)
            assert list(split.items()) == list(expected.items())
