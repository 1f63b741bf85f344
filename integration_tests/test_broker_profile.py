"""Conformance of the session's broker to its profile: one test per known deviation.

Each test *measures* one behaviour on the running broker and asserts that it matches the flag
in :attr:`RunningBroker.profile` (:mod:`kafka_sticky_plugin.testing.profile`). On the embedded
Tansu broker these pass because Tansu deviates exactly as written down; when a newer Tansu
build fixes a deviation, the matching test fails and says which flag to flip, so tests gated on
that capability start running. On Apache Kafka the same tests check the Kafka behaviour.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from collections.abc import Callable

import pytest

from kafka_sticky_plugin.testing.admin import create_topic, delete_topic, grow_topic, unique_name
from kafka_sticky_plugin.testing.analysis import current_ownership
from kafka_sticky_plugin.testing.embedded_broker import RunningBroker, embedded_broker
from kafka_sticky_plugin.testing.group import ConsumerGroupRunner, GroupNotStable
from kafka_sticky_plugin.testing.member_process import ProcessMember
from kafka_sticky_plugin.testing.profile import TANSU_PROFILE


def _mismatch(flag: str, observed: object, profile_value: object, what: str) -> str:
    return (
        f"{what}: observed {flag}={observed!r} but the profile says {profile_value!r};"
        " update kafka_sticky_plugin/testing/profile.py (the broker changed)"
    )


@pytest.mark.timeout(60)
def test_generations_start_at(
    broker: RunningBroker,
    topic_factory: Callable[[int], str],
    group_id: str,
    group_factory: Callable[..., ConsumerGroupRunner],
) -> None:
    """A fresh group's first stable generation id is the profile's ``generations_start_at``."""
    topic = topic_factory(2)
    group = group_factory(group_id, {topic: 2}, ["cooperative-sticky"])
    group.start_member("m0")
    stable = group.wait_stable(timeout_s=45)
    assert stable.generation == broker.profile.generations_start_at, _mismatch(
        "generations_start_at", stable.generation, broker.profile.generations_start_at, "first"
    )


@pytest.mark.timeout(90)
def test_protocol_vote(
    broker: RunningBroker,
    topic_factory: Callable[[int], str],
    group_id: str,
    group_factory: Callable[..., ConsumerGroupRunner],
) -> None:
    """First member lists [roundrobin, range], second only [range]: Kafka votes range for
    both; Tansu keeps the first member's first choice and refuses the second member."""
    topic = topic_factory(4)
    group = group_factory(group_id, {topic: 4}, ["roundrobin", "range"])
    group.start_member("first")
    group.wait_stable(timeout_s=45)
    group.start_member("second", assignors=["range"])
    try:
        stable = group.wait_stable(timeout_s=25)
    except GroupNotStable:
        joined = False
    else:
        joined = bool(stable.assignment.get("second")) and bool(stable.assignment.get("first"))
    errors = [e.detail for e in group.log.events() if e.member == "second" and e.kind == "error"]
    print(f"second member joined: {joined}; its errors: {errors[:1]}")
    assert joined == broker.profile.protocol_vote, _mismatch(
        "protocol_vote", joined, broker.profile.protocol_vote, "second member with [range]"
    )


@pytest.mark.timeout(60)
def test_partition_growth(broker: RunningBroker, topic_factory: Callable[[int], str]) -> None:
    """CreatePartitions 2 -> 4 succeeds exactly when the profile says ``partition_growth``."""
    topic = topic_factory(2)
    try:
        grow_topic(broker.bootstrap, topic, 4, timeout_s=10)
    except Exception as exc:  # the refusal itself is the observation
        grew = False
        print(f"CreatePartitions refused: {exc!r}")
    else:
        grew = True
    assert grew == broker.profile.partition_growth, _mismatch(
        "partition_growth", grew, broker.profile.partition_growth, "CreatePartitions"
    )


@pytest.mark.timeout(90)
def test_metadata_change_rebalances(
    broker: RunningBroker,
    topic_factory: Callable[[int], str],
    group_id: str,
    group_factory: Callable[..., ConsumerGroupRunner],
) -> None:
    """Deleting one of two subscribed topics makes the leader rejoin with new metadata: Kafka
    starts a new generation; Tansu ignores the rejoin (``leader_rejoin_rebalances``)."""
    kept, doomed = topic_factory(2), topic_factory(2)
    group = group_factory(group_id, {kept: 2, doomed: 2}, ["cooperative-sticky"])
    group.start_members(["m0", "m1"])
    before = group.wait_stable(timeout_s=45)
    delete_topic(broker.bootstrap, doomed)
    group.set_partition_count(doomed, 0)
    try:
        after = group.wait_stable(timeout_s=25)
    except GroupNotStable:
        rebalanced = False
    else:
        rebalanced = after.generation > before.generation
    assert rebalanced == broker.profile.leader_rejoin_rebalances, _mismatch(
        "leader_rejoin_rebalances", rebalanced, broker.profile.leader_rejoin_rebalances, "delete"
    )


@pytest.mark.timeout(240)
def test_static_member_expiry(
    broker: RunningBroker,
    topic_factory: Callable[[int], str],
    group_id: str,
    group_factory: Callable[..., ConsumerGroupRunner],
) -> None:
    """A crashed static member is removed after its session timeout (15 s: static groups need
    more than 6 s on Tansu) and the survivor gets its partitions. A profile that claims it
    (Apache Kafka) must see it within 120 s. Tansu usually removes the member after about
    12 s but sometimes never does, so its profile does not claim it; there the outcome is
    printed and what must hold either way is checked: the survivor keeps every partition it
    had, and if the crashed member was removed the survivor holds them all."""
    topic = topic_factory(4)
    group = group_factory(
        group_id,
        {topic: 4},
        ["cooperative-sticky"],
        session_timeout_ms=15000,
        max_poll_interval_ms=15000,
    )
    group.start_member("m0", instance_id=f"{group_id}-m0")
    group.start_member("gone", process=True, instance_id=f"{group_id}-gone")
    before = group.wait_stable(timeout_s=60)
    gone = group.member("gone")
    assert isinstance(gone, ProcessMember)
    gone.kill()
    try:
        after = group.wait_stable(timeout_s=120)
    except GroupNotStable as exc:
        expired = False
        print(f"static crash: the crashed member was not removed within 120 s ({exc})")
    else:
        expired = set(after.assignment["m0"]) == group.all_partitions()
        print(f"static crash: removed, survivor holds {len(after.assignment['m0'])} partitions")
    if broker.profile.static_member_expiry:
        assert expired, _mismatch("static_member_expiry", expired, True, "static crash")
    survivor = current_ownership(group.log.events()).get(group.live_keys()["m0"], ())
    assert set(before.assignment["m0"]) <= set(survivor), "the survivor lost partitions"
    if expired:
        assert set(survivor) == group.all_partitions()


@pytest.mark.timeout(120)
def test_session_timeout_is_per_member(
    broker: RunningBroker,
    topic_factory: Callable[[int], str],
    group_id: str,
    group_factory: Callable[..., ConsumerGroupRunner],
) -> None:
    """The first member has a 6 s session, the second 30 s. When the second freezes, Kafka
    waits its own 30 s; Tansu applies the first member's 6 s to everyone."""
    topic = topic_factory(2)
    group = group_factory(group_id, {topic: 2}, ["cooperative-sticky"])
    group.start_member("short")
    group.wait_stable(timeout_s=45)
    long_lived = ConsumerGroupRunner(
        broker.bootstrap,
        group_id,
        {topic: 2},
        ["cooperative-sticky"],
        log=group.log,
        session_timeout_ms=30000,
        max_poll_interval_ms=30000,
    )
    try:
        long_lived.start_member("long", process=True)
        group.wait_stable(timeout_s=60, members=["short"], expect_partitions={(topic, 0)})
    except GroupNotStable:
        pass
    try:
        frozen = long_lived.member("long")
        assert isinstance(frozen, ProcessMember)
        frozen.pause()
        t_freeze = time.monotonic()
        group.wait_stable(timeout_s=60)
        took = time.monotonic() - t_freeze
    finally:
        long_lived.close()
    per_member = took > 20.0
    print(f"frozen 30 s member expelled after {took:.1f}s")
    assert per_member == broker.profile.per_member_session_timeout, _mismatch(
        "per_member_session_timeout", per_member, broker.profile.per_member_session_timeout, ""
    )


@pytest.mark.timeout(60)
def test_embedded_broker_is_memory_only(tmp_path_factory: pytest.TempPathFactory) -> None:
    """A topic created on the embedded broker is gone after a restart on the same port."""
    log_dir = tmp_path_factory.mktemp("restart")
    with embedded_broker(log_dir=log_dir) as first:
        create_topic(first.bootstrap, "survivor", 1)
        port = int(first.bootstrap.rsplit(":", 1)[1])
    with embedded_broker(log_dir=log_dir, port=port) as second:
        from kafka_sticky_plugin.testing.admin import partition_count

        survived = partition_count(second.bootstrap, "survivor") == 1
    assert survived == TANSU_PROFILE.durable, _mismatch(
        "durable", survived, TANSU_PROFILE.durable, "restart"
    )


_LIBRDKAFKA_CHILD = textwrap.dedent(
    """
    import sys, time
    import confluent_kafka
    bootstrap, topic, group = sys.argv[1:4]
    consumer = confluent_kafka.Consumer({
        "bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
        "session.timeout.ms": 6000, "heartbeat.interval.ms": 1000,
        "max.poll.interval.ms": 10000,
    })
    consumer.subscribe([topic], on_assign=lambda c, ps: print("assigned", flush=True))
    deadline = time.monotonic() + float(sys.argv[4])
    while time.monotonic() < deadline:
        consumer.poll(0.2)
    consumer.close()
    print("survived", flush=True)
    """
)


@pytest.mark.timeout(90)
def test_topic_deletion_safe_for_librdkafka(
    broker: RunningBroker, topic_factory: Callable[[int], str]
) -> None:
    """A confluent-kafka consumer (in a child process) whose topic is deleted: it survives on
    Kafka; on Tansu librdkafka crashes (SIGSEGV) about a second later."""
    topic = topic_factory(2)
    child = subprocess.Popen(
        [sys.executable, "-c", _LIBRDKAFKA_CHILD, broker.bootstrap, topic, unique_name("g"), "25"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert child.stdout is not None
        first = child.stdout.readline().strip()
        assert first == "assigned", f"the librdkafka consumer never got an assignment: {first!r}"
        delete_topic(broker.bootstrap, topic)
        child.wait(60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(10)
    survived = child.returncode == 0
    print(f"librdkafka consumer exit status after topic deletion: {child.returncode}")
    assert survived == broker.profile.topic_deletion_safe_for_librdkafka, _mismatch(
        "topic_deletion_safe_for_librdkafka",
        survived,
        broker.profile.topic_deletion_safe_for_librdkafka,
        f"exit status {child.returncode}",
    )
