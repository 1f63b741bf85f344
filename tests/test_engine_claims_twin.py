"""The compiled twin's claims step against the reference, field by field and plan by plan.

:func:`kafka_sticky_plugin.core.claims.resolve_claims` asks the twin first
(:mod:`kafka_sticky_plugin.core.implementation`); with ``implementation.twin`` set to ``None``
it runs the reference alone. On seeded random groups (the seed is printed;
``CLAIMS_TWIN_SEED=<n>`` replays a run) whose members claim as canonical runs (one partition
per run or with lengths) or as pairs, with invalid claims (unknown or unsubscribed topics,
negative or out-of-range partitions), partitions claimed by several members at equal and
different generations, empty members and shared topic tuples, both must give equal
``Claims`` in every field, the same identities (``owned is claimed``, ``owned[m] is
claimed[m]``, the ``runs`` record's lists and lengths objects), the same hints order, and the
same plans (eager and cooperative). The twin must also not get there by deferring: it
answers every canonical group itself, and steps aside for claims that are not canonical.

Runs only where the twin is installed with the engine steps (``make twin``): skipped with one
line otherwise, and a failure under ``CI=true``.
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from engine_helpers import engine_twin_in_use

from kafka_sticky_plugin.core import cooperative_assign, implementation, sticky_assign
from kafka_sticky_plugin.core.claims import TIED, UNOWNED, Claims, resolve_claims
from kafka_sticky_plugin.core.layout import Layout, build_layout
from kafka_sticky_plugin.core.spec import MemberSpec, OwnedRuns, canonical_runs, owned_runs

SEED = int(os.environ.get("CLAIMS_TWIN_SEED", "41"))
SEEDS = range(SEED, SEED + 150)

TWIN = engine_twin_in_use()


class _Spy:
    """The twin, remembering what its ``resolve_claims`` returned (``None``: deferred)."""

    def __init__(self) -> None:
        self.answers: list[object] = []

    def resolve_claims(self, *args: Any) -> Any:
        made = TWIN.resolve_claims(*args)
        self.answers.append(made)
        return made


def _both(layout: Layout, monkeypatch: pytest.MonkeyPatch) -> tuple[Claims, Claims, _Spy]:
    """``(twin's claims, reference's claims, the spy)`` of ``layout``."""
    spy = _Spy()
    monkeypatch.setattr(implementation, "twin", spy)
    twin = resolve_claims(layout)
    monkeypatch.setattr(implementation, "twin", None)
    reference = resolve_claims(layout)
    monkeypatch.setattr(implementation, "twin", TWIN)
    return twin, reference, spy


def _shape(claims: Claims, layout: Layout) -> dict[str, object]:
    """Everything downstream can see of ``claims``: values, orders and identities."""
    members = range(len(layout.specs))
    runs = {
        m: (
            recorded[0] is claims.claimed[m],
            recorded[1],
            recorded[2] is _lengths_of(layout.specs[m]),
        )
        for m, recorded in claims.runs.items()
    }
    return {
        "owner": claims.owner,
        "hints": list(claims.hints.items()),
        "owned": claims.owned,
        "claimed": claims.claimed,
        "typecodes": {qs.typecode for qs in [*claims.owned, *claims.claimed]},
        "ignored": claims.ignored,
        "owned is claimed": claims.owned is claims.claimed,
        "owned[m] is claimed[m]": [claims.owned[m] is claims.claimed[m] for m in members],
        "runs": runs,
        "run_sizes": [claims.run_sizes(m) for m in members],
        "owned_by_topic": [claims.owned_by_topic(m) for m in members],
    }


def _lengths_of(spec: MemberSpec) -> object:
    runs = owned_runs(spec)
    return None if runs is None else runs[1]


def _claims(
    rng: random.Random,
    counts: dict[str, int],
    subscribed: Sequence[str],
    hot: list[tuple[str, int]],
) -> list[tuple[str, int]]:
    """A member's claims: mostly valid, some contested (from ``hot``), some invalid."""
    out: set[tuple[str, int]] = set()
    for _ in range(rng.randint(0, 12)):
        kind = rng.random()
        if kind < 0.55 and subscribed:
            topic = rng.choice(subscribed)
            if counts.get(topic, 0):
                out.add((topic, rng.randrange(counts[topic])))
        elif kind < 0.75 and hot:
            out.add(rng.choice(hot))
        elif kind < 0.82:
            out.add((rng.choice(["gone", "zzz", "a-unknown"]), rng.randrange(3)))
        elif kind < 0.89:
            out.add((rng.choice(sorted(counts)), rng.randrange(4)))  # maybe unsubscribed
        elif kind < 0.95 and subscribed:
            out.add((rng.choice(subscribed), -rng.randint(1, 3)))
        elif subscribed:
            topic = rng.choice(subscribed)
            out.add((topic, counts.get(topic, 0) + rng.randrange(3)))
    return sorted(out)


def _as_runs(pairs: list[tuple[str, int]], rng: random.Random) -> OwnedRuns:
    """``pairs`` (canonical) as canonical runs, with lengths or one partition per run."""
    topics = tuple(dict.fromkeys(t for t, _ in pairs))
    flat = [p for _, p in pairs]
    lengths = [sum(1 for t, _ in pairs if t == topic) for topic in topics]
    if rng.random() < 0.3 and all(n == 1 for n in lengths):
        return canonical_runs((topics, None, flat))
    return canonical_runs((topics, lengths, flat))


def _members(rng: random.Random) -> tuple[dict[str, int], list[MemberSpec]]:
    counts = {f"t{i:02d}": rng.choice([0, 1, 2, 3, 5, 8]) for i in range(rng.randint(1, 9))}
    names = sorted(counts)
    hot = [(t, p) for t in names for p in range(counts[t])]
    hot = rng.sample(hot, min(len(hot), rng.randint(0, 6)))
    gens = rng.sample([-1, 1, 2, 3, 5], rng.randint(1, 3))  # few values: many ties
    shared = tuple(rng.sample(names, rng.randint(1, len(names))))
    members = []
    for m in range(rng.randint(1, 12)):
        topics = shared if rng.random() < 0.4 else rng.sample(names, rng.randint(0, len(names)))
        if rng.random() < 0.15:
            topics = (*topics, "gone")  # subscribes to a topic outside the metadata
        pairs = [] if rng.random() < 0.1 else _claims(rng, counts, sorted(topics), hot)
        member_id, generation = f"m{m:02d}", rng.choice(gens)
        if rng.random() < 0.6:
            runs = _as_runs(pairs, rng)
            members.append(
                MemberSpec.from_runs(
                    member_id=member_id, topics=topics, runs=runs, generation=generation
                )
            )
        else:
            members.append(
                MemberSpec(member_id=member_id, topics=topics, owned=pairs, generation=generation)
            )
    return counts, members


def _seeds() -> Iterator[int]:
    print(f"claims twin seeds {SEEDS.start}..{SEEDS.stop - 1} (CLAIMS_TWIN_SEED replays)")
    yield from SEEDS


@pytest.mark.parametrize("seed", list(_seeds()))
def test_twin_claims_equal_the_reference(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    print(f"seed {seed}")
    counts, members = _members(random.Random(seed))
    layout = build_layout(counts, members)
    twin, reference, spy = _both(layout, monkeypatch)
    assert spy.answers and spy.answers[0] is not None, f"seed {seed}: the twin deferred"
    assert _shape(twin, layout) == _shape(reference, layout), f"seed {seed}"
    assert twin == reference


@pytest.mark.parametrize("seed", list(range(SEED, SEED + 40)))
def test_twin_plans_equal_the_reference(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    print(f"seed {seed}")
    counts, members = _members(random.Random(seed))
    plans = [sticky_assign(counts, members), cooperative_assign(counts, members)]
    monkeypatch.setattr(implementation, "twin", None)
    assert plans == [sticky_assign(counts, members), cooperative_assign(counts, members)]


def test_contested_and_tied_claims(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fixed case of every rule: a tie broken by a higher generation (its members become
    hints), a standing tie, a lower-generation loser, invalid claims, an empty member."""
    counts = {"a": 3, "b": 2}
    members = [
        MemberSpec(member_id="m0", topics=["a", "b"], owned=[("a", 0), ("b", 1)], generation=2),
        MemberSpec(
            member_id="m1", topics=["a"], owned=[("a", 0), ("a", 1), ("b", 0)], generation=2
        ),
        MemberSpec.from_runs(
            member_id="m2", topics=["a", "b"], runs=(("a", "b"), [2, 1], [0, 1, 1]), generation=3
        ),
        MemberSpec(member_id="m3", topics=["a", "b"], owned=[("a", 1), ("a", 7)], generation=3),
        MemberSpec(member_id="m4", topics=["a"], generation=1),
    ]
    layout = build_layout(counts, members)
    twin, reference, spy = _both(layout, monkeypatch)
    assert spy.answers[0] is not None
    assert _shape(twin, layout) == _shape(reference, layout)
    assert twin.owner == [2, TIED, UNOWNED, UNOWNED, 2]
    assert list(twin.hints.items()) == [(0, 0), (1, 1), (4, 0)]
    assert [qs.tolist() for qs in twin.owned] == [[], [], [0, 4], [], []]
    assert twin.ignored == 2


@pytest.mark.parametrize(
    "runs",
    [
        (("a",), [2], [1, 0]),  # falling within a run
        (("a",), [3], [0, 1]),  # lengths beyond the partitions
        (("a", "a"), None, [0, 0]),  # one claim twice
        (("a",), [0, 1], [0]),  # a run of none
    ],
)
def test_the_twin_steps_aside_for_claims_not_canonical(
    runs: OwnedRuns, monkeypatch: pytest.MonkeyPatch
) -> None:
    members = [
        MemberSpec.from_runs(member_id="m0", topics=["a"], runs=runs, generation=1),
        MemberSpec(member_id="m1", topics=["a"], owned=[("a", 1)], generation=1),
    ]
    layout = build_layout({"a": 3}, members)
    spy = _Spy()
    monkeypatch.setattr(implementation, "twin", spy)
    resolve_claims(layout)
    assert spy.answers == [None]
