"""The simulator's models of the broker's KIP-848 assignors against the broker's own classes.

One JVM (``kafkasticky.BrokerAssignors``, see
:mod:`testlab.java_broker_assignors`) runs Apache Kafka 4.4's
``UniformAssignor`` and ``RangeAssignor`` from the pinned ``kafka-group-coordinator`` jar.
Seeded random groups (homogeneous and heterogeneous subscriptions) go through a few target
epochs each: members join and leave, subscriptions change, topics grow, and each epoch's
current target is the previous epoch's plan (what the broker does) or, now and then, an
arbitrary one (a hand-made target no assignor would produce, to exercise "keep what you
can"). Both sides get the same spec; any difference fails with the seed and the spec.

Needs ``java``, ``javac`` and ``mvn`` (the jars come from ``make broker-assignors``):
skipped with the reason when they are missing, except under ``CI=true``, where a missing tool
fails.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Iterator

import pytest

from kafka_sticky_plugin.core.spec import TopicPartitionTuple
from kafka_sticky_plugin.simulate.kip848_assignors import (
    broker_assign,
    group_of,
    is_homogeneous,
)
from testlab.java_broker_assignors import JavaBrokerAssignors
from testlab.java_member import java_tools_missing

SEED = int(os.environ.get("KIP848_CROSSCHECK_SEED", "848"))
GROUPS = 200
EPOCHS = 6

Members = dict[str, tuple[list[str], frozenset[TopicPartitionTuple]]]


@pytest.fixture(scope="module")
def java() -> Iterator[JavaBrokerAssignors]:
    """One JVM with the broker's assignors for the whole module."""
    reason = java_tools_missing()
    if reason is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but the broker assignor cross-check cannot run: {reason}")
        pytest.skip(reason)
    runner = JavaBrokerAssignors()
    yield runner
    runner.close()


def _subscription(rng: random.Random, topics: list[str], homogeneous: bool) -> list[str]:
    if homogeneous:
        return list(topics)
    chosen = [t for t in topics if rng.random() < 0.5]
    return chosen or [rng.choice(topics)]


def _arbitrary_current(
    rng: random.Random, topics: dict[str, int], members: Members
) -> dict[str, frozenset[TopicPartitionTuple]]:
    """A hand-made target: each partition to a random member or nobody (a member may hold
    partitions of topics it does not subscribe to, as after a subscription change)."""
    held: dict[str, set[TopicPartitionTuple]] = {m: set() for m in members}
    ids = sorted(members)
    for topic, count in topics.items():
        for partition in range(count):
            if rng.random() < 0.7:
                held[rng.choice(ids)].add((topic, partition))
    return {m: frozenset(tps) for m, tps in held.items()}


def _evolve(
    rng: random.Random,
    topics: dict[str, int],
    members: Members,
    homogeneous: bool,
    next_id: list[int],
) -> None:
    """One change between target epochs."""
    names = sorted(topics)
    change = rng.choice(["join", "leave", "subscribe", "grow", "none"])
    if change == "join" or not members:
        for _ in range(rng.randint(1, 3)):
            member_id = f"m{next_id[0]:03d}"
            next_id[0] += 1
            members[member_id] = (_subscription(rng, names, homogeneous), frozenset())
    elif change == "leave" and len(members) > 1:
        for member_id in rng.sample(sorted(members), rng.randint(1, len(members) - 1)):
            del members[member_id]
    elif change == "subscribe" and not homogeneous:
        member_id = rng.choice(sorted(members))
        members[member_id] = (_subscription(rng, names, False), members[member_id][1])
    elif change == "grow":
        topic = rng.choice(names)
        topics[topic] += rng.randint(1, 6)


def _cases() -> Iterator[tuple[int, bool, int]]:
    for index in range(GROUPS):
        yield index, index % 2 == 0, SEED * 100_000 + index


@pytest.mark.parametrize("assignor", ["uniform", "range"])
def test_models_match_the_broker_classes_plan_for_plan(
    java: JavaBrokerAssignors, assignor: str
) -> None:
    """Every epoch of every seeded group: our model's target equals the broker's, member for
    member and partition for partition, and both take the same builder (homogeneous or not)."""
    print(f"seed {SEED} (set KIP848_CROSSCHECK_SEED to replay another)")
    compared = 0
    for index, homogeneous, seed in _cases():
        rng = random.Random(seed)
        topics = {f"t{i}": rng.randint(1, 40) for i in range(rng.randint(1, 6))}
        next_id = [0]
        members: Members = {}
        for _ in range(rng.randint(1, 12)):
            members[f"m{next_id[0]:03d}"] = (
                _subscription(rng, sorted(topics), homogeneous),
                frozenset(),
            )
            next_id[0] += 1
        for epoch in range(EPOCHS):
            if epoch and rng.random() < 0.2:
                current = _arbitrary_current(rng, topics, members)
                members = {m: (ts, current[m]) for m, (ts, _) in members.items()}
            spec = [(m, ts, cur) for m, (ts, cur) in sorted(members.items())]
            ours = broker_assign(assignor, group_of(topics, spec))
            theirs, their_homogeneous = java.assign(
                assignor, topics, [(m, ts, sorted(c)) for m, ts, c in spec]
            )
            where = json.dumps(
                {
                    "seed": seed,
                    "group": index,
                    "epoch": epoch,
                    "topics": topics,
                    "members": [[m, ts, sorted(c)] for m, ts, c in spec],
                }
            )
            assert is_homogeneous(group_of(topics, spec)) == their_homogeneous, where
            assert ours == theirs, f"{assignor} differs from the broker's class on {where}"
            compared += 1
            members = {m: (ts, frozenset(ours[m])) for m, (ts, _) in members.items()}
            _evolve(rng, topics, members, homogeneous, next_id)
    assert compared == GROUPS * EPOCHS
