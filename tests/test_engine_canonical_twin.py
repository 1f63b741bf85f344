"""The compiled twin's ``canonical_runs`` against the reference, runs for runs.

``core.spec.canonical_runs`` makes one member's claimed runs canonical (a Java member's
topics come in its hash map's order). With the twin in use
(:mod:`kafka_sticky_plugin.core.implementation`) the result must be the reference's: the
same values, ``lengths`` absent in the same cases, the runs object itself when they were
canonical, and only the input's own ``str`` and int objects in new runs. Seeded groups of
runs cover every branch of the reference: canonical runs (with and without lengths),
one-partition runs in another order, runs of distinct topics permuted whole, a topic written
twice, empty runs, unsorted and repeated partitions, names sharing long prefixes and
non-ASCII names. Inputs the twin does not vouch for (another type, lengths that do not add
up) are the reference's to decide: the twin returns ``None``.
"""

from __future__ import annotations

import os
import random
from typing import Any

import pytest
from engine_helpers import CountingTwin, count_twin_step, engine_twin_in_use, without_twin

from kafka_sticky_plugin.core.spec import OwnedRuns, canonical_runs, runs_pairs

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
    return count_twin_step(monkeypatch, "canonical_runs")


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


def test_the_twin_gives_the_references_runs(counting: CountingTwin) -> None:
    print(f"seed={SEED}")
    rng = random.Random(SEED)
    kinds: dict[str, int] = {"same": 0, "lengths": 0, "one each": 0}
    for case in range(CASES):
        runs = random_runs(rng)
        want = without_twin(canonical_runs, runs)
        answered = counting.answered
        got = canonical_runs(runs)
        assert counting.answered == answered + 1, f"seed={SEED} case {case}: declined {runs}"
        assert got == want, f"seed={SEED} case {case}: {runs}"
        assert (got[1] is None) == (want[1] is None)
        assert (got is runs) == (want is runs), f"seed={SEED} case {case}"
        assert runs_pairs(got) == tuple(sorted(set(runs_pairs(runs))))
        kinds["same" if got is runs else "one each" if got[1] is None else "lengths"] += 1
        objects = {id(item) for item in (*runs[0], *runs[2])}
        assert {id(item) for item in (*got[0], *got[2])} <= objects
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
    assert TWIN.canonical_runs(runs) is None
