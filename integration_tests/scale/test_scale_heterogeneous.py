"""The aiokafka#1176 shape (issue 38): 84 aiokafka members with mixed subscriptions, on
Apache Kafka, several members per child process (:mod:`kafka_sticky_plugin.groups.member_pack`:
twelve processes of seven).

Twelve topics of 20 partitions (240 partitions); seven subscription classes of twelve
members each: every topic, the first six, the last six, the even ones, the odd ones, the
first three, the last three. Three topics are produced to throughout. Once the group is
stable, three members of different classes are restarted one after the other (a clean close,
then a new incarnation in the same process).

- With this package's ``cooperative-sticky`` (hooked members): the group becomes stable,
  every partition is owned by exactly one member that subscribes to its topic, every
  acknowledged record is delivered (0 lost), never two owners at once, no member raised.
- The baseline row, aiokafka's own ``StickyPartitionAssignor`` (eager, members without the
  hooks): given a bounded time (:data:`BASELINE_BOUND_S`) to become stable after every
  step; what happens is printed (stable or not, in how long, how many generations);
  asserted is only what must hold whatever the assignor: never two owners at once, no
  member raised.

No time is asserted.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from kafka_sticky_plugin.groups.analysis import analyse_deliveries
from kafka_sticky_plugin.groups.producer import KeyedProducer
from kafka_sticky_plugin.groups.runner import ConsumerGroupRunner, GroupNotStable, StableGroup
from testlab.checks import check_deliveries, check_exclusive_ownership

TOPICS = 12
PARTITIONS = 20
PACKS = 12
PER_PACK = 7
PRODUCED = (0, 6, 11)
#: How long the baseline may take to become stable after each step (then it is reported).
BASELINE_BOUND_S = 90.0
#: Restarted one after the other once the group is stable (three subscription classes).
RESTARTED = ("p0m0", "p2m5", "p5m3")

#: Subscription classes by topic index (twelve members each).
CLASSES: tuple[tuple[int, ...], ...] = (
    tuple(range(12)),
    tuple(range(6)),
    tuple(range(6, 12)),
    tuple(range(0, 12, 2)),
    tuple(range(1, 12, 2)),
    (0, 1, 2),
    (9, 10, 11),
)


def _start(group: ConsumerGroupRunner, topics: list[str], settings: dict[str, Any]) -> None:
    """Start every pack at once (each pack starts its members one after the other)."""
    names = [f"p{p}m{i}" for p in range(PACKS) for i in range(PER_PACK)]
    subscription = {
        name: tuple(sorted(topics[t] for t in CLASSES[n % len(CLASSES)]))
        for n, name in enumerate(names)
    }

    def pack(p: int) -> None:
        members = names[p * PER_PACK : (p + 1) * PER_PACK]
        per_member = {name: {"topics": subscription[name]} for name in members}
        group.start_pack(members, timeout_s=120, per_member=per_member, **settings)

    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(pack, range(PACKS)))


def _since(started: float) -> str:
    return f"{time.monotonic() - started:.1f} s"


def _settle(group: ConsumerGroupRunner, step: str) -> str:
    """The baseline's outcome after ``step``: stable (and when) or not within the bound."""
    began = time.monotonic()
    try:
        stable = group.wait_stable(timeout_s=BASELINE_BOUND_S, quiet_s=3.0)
    except GroupNotStable as exc:
        return f"{step}: not stable within {BASELINE_BOUND_S:g} s ({str(exc)[-160:]})"
    return f"{step}: stable in generation {stable.generation} after {_since(began)}"


def _subscribers_only(stable: StableGroup, group: ConsumerGroupRunner) -> None:
    for name, parts in stable.assignment.items():
        subscribed = set(group.member(name).config.topics)
        strays = [p for p in parts if p[0] not in subscribed]
        assert not strays, f"{name} owns partitions of topics it does not subscribe to: {strays}"


@pytest.mark.timeout(900)
@pytest.mark.parametrize("strategy", ["cooperative-sticky", "aiokafka-sticky"])
def test_eighty_four_aiokafka_members_with_mixed_subscriptions(
    strategy: str,
    topic_factory: Callable[[int], str],
    group_id: str,
    group_factory: Callable[..., ConsumerGroupRunner],
    producer_factory: Callable[[str], KeyedProducer],
) -> None:
    started = time.monotonic()
    topics = [topic_factory(PARTITIONS) for _ in range(TOPICS)]
    producers = [producer_factory(topics[t]) for t in PRODUCED]
    for producer in producers:
        producer.start(30)
    settings: dict[str, Any] = {
        "client": "aiokafka",
        "session_timeout_ms": 10000,
        "max_poll_interval_ms": 60000,
        "install_hooks": strategy != "aiokafka-sticky",
    }
    group = group_factory(group_id, {t: PARTITIONS for t in topics}, [strategy], **settings)
    _start(group, topics, settings)
    print(f"{strategy}: 84 members started after {time.monotonic() - started:.1f} s")
    everything = group.all_partitions()
    if strategy == "aiokafka-sticky":
        outcomes = [_settle(group, "all joined")]
        for name in RESTARTED:
            group.restart_member(name, timeout_s=120)
            outcomes.append(_settle(group, f"{name} restarted"))
        generations = {e.generation for e in group.log.events() if e.kind == "generation"}
        print(
            f"aiokafka-sticky baseline: {'; '.join(outcomes)}; {len(generations)} generations"
            f" seen, {time.monotonic() - started:.1f} s"
        )
        for producer in producers:
            producer.stop()
        group.close()
        check_exclusive_ownership(group.log.events(), time.monotonic())
    else:
        stable = group.wait_stable(timeout_s=300, quiet_s=3.0)
        _subscribers_only(stable, group)
        print(f"{strategy}: stable in generation {stable.generation} after {_since(started)}")
        for name in RESTARTED:
            group.restart_member(name, timeout_s=120)
            stable = group.wait_stable(timeout_s=300, quiet_s=3.0)
            _subscribers_only(stable, group)
            print(f"{strategy}: {name} restarted, stable in generation {stable.generation}")
        for producer in producers:
            producer.stop()
        acknowledged: dict[Any, set[int]] = {}
        for producer in producers:
            acknowledged.update(producer.acknowledged())
        drained = group.wait_delivered(acknowledged, timeout_s=60)
        group.close()
        events = group.log.events()
        check_exclusive_ownership(events, time.monotonic())
        report = analyse_deliveries(acknowledged, group.log.deliveries(), events)
        check_deliveries(report)
        assert drained, "not every acknowledged record was delivered"
        assert report.acknowledged > 0
        print(f"{strategy}: acknowledged {report.acknowledged}, duplicates {report.duplicates}")
    errors = [e for e in group.log.events() if e.kind == "error"]
    assert not errors, errors[:3]
    assert everything
    print(f"{strategy}: wall time {time.monotonic() - started:.1f} s")
