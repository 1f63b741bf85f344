"""``resolve_claims``, the compiled twin against the reference, on seeded random groups (the
seed is printed) whose members fall in a few buckets sharing topics and run lengths tuples
(one lengths tuple sometimes shared by buckets of other topics), with some members owning
other lengths (lists), equal but distinct tuples, unknown topics or out-of-range partitions:
the twin reads shared tuples once, and its ``runs`` record must still hold each member's own
claims and lengths object. Skipped where the engine twin is not in use (see
``test_engine_claims_twin.py``)."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest
from engine_helpers import engine_twin_in_use

from kafka_sticky_plugin.core import implementation
from kafka_sticky_plugin.core.claims import resolve_claims
from kafka_sticky_plugin.core.layout import Layout, build_layout
from kafka_sticky_plugin.core.spec import MemberSpec, OwnedRuns

SEEDS = range(120)

engine_twin_in_use()


def _runs(
    rng: random.Random, topics: tuple[str, ...], lengths: Sequence[int], counts: dict[str, int]
) -> OwnedRuns:
    """Random partitions in runs of ``topics`` and ``lengths`` (both kept as given, so members
    of one bucket share them by identity, as members matching a codec layout do)."""
    flat: list[int] = []
    for topic, size in zip(topics, lengths, strict=True):
        count = counts.get(topic, 8)
        bound = count + 3 if rng.random() < 0.03 else count  # maybe out of range
        flat.extend(sorted(rng.sample(range(bound), size)))
    return topics, None if max(lengths, default=1) == 1 else lengths, flat


def _group(rng: random.Random) -> Layout:
    counts = {f"t{i:03d}": rng.randint(3, 12) for i in range(rng.randint(4, 30))}
    names = sorted(counts)
    buckets: list[tuple[tuple[str, ...], tuple[int, ...]]] = []
    for _ in range(rng.randint(1, 4)):
        topics = sorted(rng.sample(names, rng.randint(1, len(names))))
        if rng.random() < 0.2:
            topics = sorted({*topics, "gone"})  # a topic outside the layout
        lengths = tuple(min(rng.randint(1, 3), counts.get(t, 8)) for t in topics)
        if buckets and len(buckets[0][1]) <= len(names) and rng.random() < 0.4:
            lengths = buckets[0][1]  # another bucket's lengths object, other topics
            topics = sorted(rng.sample(names, len(lengths)))
        buckets.append((tuple(topics), lengths))
    members = []
    for m in range(rng.randint(1, 40)):
        shared, sizes = rng.choice(buckets)
        roll = rng.random()
        if roll < 0.1:  # other lengths (a list: never shared)
            runs = _runs(
                rng, shared, [min(rng.randint(1, 3), counts.get(t, 8)) for t in shared], counts
            )
        elif roll < 0.2:  # equal values, other objects
            runs = _runs(rng, tuple(list(shared)), tuple(list(sizes)), counts)
        else:
            runs = _runs(rng, shared, sizes, counts)
        subscribed = names if rng.random() < 0.9 else names[: len(names) // 2]
        members.append(
            MemberSpec.from_runs(
                member_id=f"m{m:03d}", topics=subscribed, runs=runs, generation=rng.randint(1, 3)
            )
        )
    return build_layout(counts, members)


@pytest.mark.parametrize("seed", SEEDS)
def test_twin_claims_of_shared_runs(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    print(f"seed={seed}")
    rng = random.Random(seed)
    for _ in range(3):
        layout = _group(rng)
        twin = resolve_claims(layout)
        with monkeypatch.context() as patch:
            patch.setattr(implementation, "twin", None)
            reference = resolve_claims(layout)
        assert twin == reference
        assert list(twin.hints.items()) == list(reference.hints.items())
        assert twin.runs.keys() == reference.runs.keys()
        for m, (qs, topics, lengths) in twin.runs.items():
            assert qs is twin.claimed[m]
            assert (qs, topics) == reference.runs[m][:2]
            assert lengths is reference.runs[m][2]
