"""The compiled twin's ``each_canonical_runs`` against the reference, runs for runs.

``core.spec.canonical_runs`` makes one member's claimed runs canonical (a Java member's
topics come in its hash map's order); ``each_canonical_runs`` does it for every member of a
group in one call, which the twin answers (:mod:`kafka_sticky_plugin.core.implementation`)
sorting each distinct topics tuple once. With the twin in use the result must be the
reference's, member for member: the same values, ``lengths`` absent in the same cases, the
runs object itself when they were canonical, and in new runs only the input's own ``str``
objects and an ``array("i")`` of the partitions. Seeded groups of runs cover every branch of
the reference: canonical runs (with and without lengths), one-partition runs in another
order, runs of distinct topics permuted whole, a topic written twice, empty runs, unsorted
and repeated partitions, names sharing long prefixes and non-ASCII names, members sharing
one topics tuple. Inputs the twin does not vouch for (another type, lengths that do not add
up) are the reference's to decide: the twin returns ``None`` in that member's place.
"""

from __future__ import annotations

import os
import random
from array import array
from typing import Any

import pytest
from engine_helpers import CountingTwin, count_twin_step, engine_twin_in_use, without_twin

from kafka_sticky_plugin.core.spec import (
    OwnedRuns,
    canonical_runs,
    each_canonical_runs,
    runs_pairs,
)

TWIN = engine_twin_in_use()

SEED = int(os.environ.get("CANONICAL_TWIN_SEED", "20261205"))
CASES = 3000

NAMES = [
    *(f"topic-{i * 2654435761 % 2**32:08x}" for i in range(40)),
    "topic-",
    "topic-a",
    "topic-a\x00",
    "t\u00e9",
    "\u65e5\u672c",
    "z",
    "a",
]


@pytest.fixture
def counting(monkeypatch: pytest.MonkeyPatch) -> CountingTwin:
    """The engine uses the (counting) twin."""
    return count_twin_step(monkeypatch, "each_canonical_runs")


def random_runs(rng: random.Random) -> OwnedRuns:
    """Runs as a member may send them (see the module docstring)."""
    kind = rng.random()
    topics = rng.sample(NAMES, rng.randint(0, 12))
    if kind < 0.15:
        topics.sort()
    if rng.random() < 0.15 and topics:
        topics.insert(rng.randrange(len(topics) + 1), rng.choice(topics))  # a topic twice
    if rng.random() < 0.3:
        return tuple(topics), None, [rng.randrange(50) for _ in topics]
    lengths = [
        rng.choice([0, 1, 1, 2, 3, 5]) if rng.random() < 0.1 else rng.randint(1, 6) for _ in topics
    ]
    flat: list[int] = []
    for n in lengths:
        run = sorted(rng.sample(range(40), n))
        if rng.random() < 0.15:
            rng.shuffle(run)
        if rng.random() < 0.1 and run:
            run.append(run[0])  # a partition twice
        flat.extend(run)
    lengths = [len(flat)] if not topics else _fit(lengths, len(flat))
    return tuple(topics), lengths if topics else None, flat if topics else []


def _fit(lengths: list[int], total: int) -> list[int]:
    """``lengths`` with the last one grown to cover ``total`` values (repeats appended)."""
    return [*lengths[:-1], lengths[-1] + total - sum(lengths)]


def random_group(rng: random.Random) -> list[OwnedRuns]:
    """A group's runs: some members share one topics tuple object (as the seam gives equal
    ones), with runs of their own."""
    group = [random_runs(rng) for _ in range(rng.randint(1, 6))]
    shared = group[0][0]
    for i in range(1, len(group)):
        topics, lengths, flat = group[i]
        if rng.random() < 0.4 and len(topics) == len(shared):
            group[i] = (shared, lengths, flat)
    return group


def test_the_twin_gives_the_references_runs(counting: CountingTwin) -> None:
    print(f"seed={SEED}")
    rng = random.Random(SEED)
    kinds: dict[str, int] = {"same": 0, "lengths": 0, "one each": 0}
    for case in range(CASES):
        group = random_group(rng)
        want = [without_twin(canonical_runs, runs) for runs in group]
        answered = counting.answered
        made = TWIN.each_canonical_runs(group)
        got_all = each_canonical_runs(group)
        assert counting.answered == answered + 1, f"seed={SEED} case {case}"
        assert made is not None and None not in made, f"seed={SEED} case {case}: {group}"
        for runs, got, wanted in zip(group, got_all, want, strict=True):
            assert got == wanted, f"seed={SEED} case {case}: {runs}"
            assert (got[1] is None) == (wanted[1] is None)
            assert (got is runs) == (wanted is runs), f"seed={SEED} case {case}"
            assert runs_pairs(got) == tuple(sorted(set(runs_pairs(runs))))
            if got is not runs:
                assert type(got[2]) is array and got[2].typecode == "i"
                assert {id(name) for name in got[0]} <= {id(name) for name in runs[0]}
            kinds["same" if got is runs else "one each" if got[1] is None else "lengths"] += 1
    print(f"results: {kinds}")
    assert min(kinds.values()) >= 100


@pytest.mark.parametrize(
    "runs",
    [
        pytest.param((("a", "b"), [1, 1], (1, 2)), id="flat-a-tuple"),
        pytest.param((["b", "a"], None, [1, 2]), id="topics-a-list"),
        pytest.param((("b", "a"), None, [True, 2]), id="a-bool"),
        pytest.param((("b", "a"), None, [2**70, 2]), id="beyond-i64"),
        pytest.param((("b", "a"), [2, 1], [1, 2]), id="lengths-exceed-values"),
        pytest.param((("b", "a"), [-1, 3], [1, 2]), id="negative-length"),
        pytest.param((("b", "a"), None, [1, 2, 3]), id="more-values-than-runs"),
        pytest.param((("b", "a\ud800"), None, [1, 2]), id="a-lone-surrogate"),
    ],
)
def test_what_the_twin_does_not_vouch_for_is_the_references(runs: Any) -> None:
    fine: OwnedRuns = (("b", "a"), None, array("i", [1, 2]))
    made = TWIN.each_canonical_runs([fine, runs, fine])
    assert made is not None and made[1] is None
    assert made[0] == made[2] == canonical_runs(fine)
    assert _outcome(each_canonical_runs, [runs]) == _outcome(
        without_twin, lambda group: [canonical_runs(r) for r in group], [runs]
    )


def _outcome(call: Any, *args: Any) -> tuple[str, Any]:
    """``call(*args)``'s value, or the type of what it raised."""
    try:
        return "value", call(*args)
    except Exception as exc:  # any error, compared by type
        return "error", type(exc)
