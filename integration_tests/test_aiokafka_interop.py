"""Hooked aiokafka members in live groups with the other clients, on the session's broker.

aiokafka members (:mod:`kafka_sticky_plugin.groups.aiokafka_member`: an ``AIOKafkaConsumer`` with
this package's assignor and :func:`kafka_sticky_plugin.aiokafka.install_hooks`, commit on
revoke) share groups with kafka-python members (this package's assignors, hooked),
confluent-kafka members (librdkafka's ``cooperative-sticky``) and the genuine Java
``KafkaConsumer`` (``CooperativeStickyAssignor`` / ``StickyAssignor``, a child JVM). The
whole-run checks are those of ``test_java_interop.py``:

- every stable generation covers every partition once, balanced, with one generation id;
- never two live owners of a partition (ownership intervals from the rebalance callbacks);
- a leave or a crash: the survivors keep all they had and, under ``cooperative-sticky``,
  none of them is revoked anything (KIP-429);
- no acknowledged record lost with commit-on-revoke, re-deliveries only above commits;
- no WARN/ERROR from the Java client's assignor classes.

Scenarios (6 partitions, fast session settings: the file runs once per broker):

- a four-client cooperative group with each client as the leader (the first to join leads);
- an eager ``sticky`` group of aiokafka, kafka-python and Java ``StickyAssignor`` (KIP-341
  user data read across clients), aiokafka leading;
- static membership (KIP-345) of aiokafka members: a restart within the session, and a second
  consumer with the same ``group_instance_id`` fencing the first (Apache Kafka only: Tansu
  never fences the replaced member);
- KIP-70: a running aiokafka member changes its subscription;
- a pattern subscription of aiokafka members picking up a newly created topic.

On Tansu the Java seat runs kafka-clients 3.9.2 (4.4.0 cannot connect; see
``test_java_interop.py``), printed. Measured on the 2-core machine under load: about 1:50 on
Apache Kafka and 4:00 on Tansu for the whole file, broker start included (cooperative joins
take 2-3 rounds on Tansu).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from group_flow import FlowingGroup, FlowingGroupFactory

from kafka_sticky_plugin.brokers.embedded import RunningBroker
from kafka_sticky_plugin.groups.admin import create_topic, unique_name
from kafka_sticky_plugin.groups.analysis import Overlap, analyse_deliveries
from kafka_sticky_plugin.groups.events import Delivery, OwnershipEvent, Partition, member_key
from kafka_sticky_plugin.groups.member_process import ProcessMember
from kafka_sticky_plugin.groups.producer import KeyedProducer
from kafka_sticky_plugin.groups.runner import ConsumerGroupRunner, StableGroup
from testlab.checks import (
    check_deliveries,
    check_exclusive_ownership,
    check_stable_assignment,
)
from testlab.java_member import (
    ASSIGNOR_LOGGERS,
    JAVA_CLIENT_VERSIONS,
    java_tools_missing,
    log_problems,
)

PARTITIONS = 6
RATE = 20.0
STABLE_S = 90.0
COOP = "cooperative-sticky"
#: Static groups use a longer session (see test_group_static_membership.py: on Tansu every
#: static JoinGroup/SyncGroup waits about 3 s more, and a restart takes about 12 s).
STATIC_TIMEOUTS = {"session_timeout_ms": 25000, "max_poll_interval_ms": 25000}


@pytest.fixture
def java_client(broker: RunningBroker) -> str:
    """The Java seat: ``java-4.4.0`` (``java-3.9.2`` on Tansu, which 4.4.0 cannot use);
    skipped, with the reason, without java/javac/mvn."""
    reason = java_tools_missing()
    if reason is not None:
        pytest.skip(reason)
    newest, older = (f"java-{v}" for v in JAVA_CLIENT_VERSIONS)
    if broker.profile.name == "tansu":
        print(f"on Tansu {newest} is replaced by {older} (it cannot connect)")
        return older
    return newest


def _brief(stable: StableGroup) -> str:
    return " ".join(
        f"{m}={[f'{t[-1]}{p}' for t, p in parts]}" for m, parts in sorted(stable.assignment.items())
    )


def _stable(group: ConsumerGroupRunner, what: str, t0: float, **kw: object) -> StableGroup:
    stable = group.wait_stable(timeout_s=STABLE_S, **kw)  # type: ignore[arg-type]
    check_stable_assignment(stable, kw.get("expect_partitions") or group.all_partitions())  # type: ignore[arg-type]
    print(f"{time.monotonic() - t0:6.1f}s {what}: gen {stable.generation} {_brief(stable)}")
    return stable


def _revocations(
    events: list[OwnershipEvent], since: float, until: float, members: set[str]
) -> list[OwnershipEvent]:
    """Revoked or lost callbacks of ``members`` (logical names) with partitions in the window."""
    return [
        e
        for e in events
        if e.member in members
        and e.kind in ("revoked", "lost")
        and e.partitions
        and since <= e.t <= until
    ]


def check_survivors_keep(
    group: ConsumerGroupRunner,
    before: StableGroup,
    after: StableGroup,
    since: float,
    cooperative: bool,
) -> None:
    """Every member of ``after`` that was in ``before`` kept all it had; under COOPERATIVE
    none of them was revoked anything in between (KIP-429)."""
    for member, parts in after.assignment.items():
        kept = set(before.assignment.get(member, ()))
        assert kept <= set(parts), f"{member} had {sorted(kept)}, now {sorted(parts)}"
    if cooperative:
        survivors = set(before.assignment) & set(after.assignment)
        revoked = _revocations(group.log.events(), since, after.t, survivors)
        assert not revoked, f"survivors were revoked partitions: {revoked}"


def check_java_logs(group: ConsumerGroupRunner) -> None:
    """No WARN/ERROR line from a Java assignor class in any Java member's log."""
    problems = log_problems(group.java_logs())
    for line in problems:
        print(f"java log {line.level} {line.logger.rsplit('.', 1)[-1]}: {line.message[:200]}")
    bad = [p for p in problems if any(name in p.logger for name in ASSIGNOR_LOGGERS)]
    assert not bad, f"the Java assignor complained: {bad[:3]}"


def finish(
    flow: FlowingGroup,
    stables: list[StableGroup],
    label: str,
    exempt: Callable[[Overlap], bool] | None = None,
    stale: Callable[[Delivery], bool] | None = None,
    fenced: tuple[str, ...] = (),
) -> None:
    """Stop the flow and check the whole run (module docstring); members of ``fenced`` may
    have ended with a FENCED_INSTANCE_ID error, nobody else with any."""
    flow.stop()
    group = flow.group
    generations = [s.generation for s in stables]
    assert generations == sorted(generations), f"generations went back: {generations}"
    events = group.log.events()
    allowed = check_exclusive_ownership(events, time.monotonic(), exempt=exempt)
    errors = [
        (e.member, e.detail)
        for e in events
        if e.kind == "error" and not (e.member in fenced and "FENCED_INSTANCE_ID" in e.detail)
    ]
    assert not errors, f"members failed: {errors}"

    def in_stale_view(delivery: Delivery) -> bool:
        # Delivered by the earlier owner of an exempted overlap while it overlapped.
        key = member_key(delivery.member, delivery.incarnation)
        where = (delivery.topic, delivery.partition)
        return any(
            o.first.key == key and o.partition == where and o.second.start <= delivery.t
            for o in allowed
            if delivery.t <= o.first.end
        )

    report = analyse_deliveries(
        flow.producer.acknowledged(),
        group.log.deliveries(),
        events,
        stale=stale if stale is not None else in_stale_view,
    )
    print(
        f"{label}: generations {generations}, acknowledged {report.acknowledged},"
        f" duplicates {report.duplicates}, stale {report.stale}"
    )
    check_deliveries(report)
    assert flow.drained, "not every acknowledged record was delivered in time"
    if group.java_logs():
        check_java_logs(group)


# -- mixed groups ---------------------------------------------------------------------------

#: leader's member name -> (the member that leaves, the member that crashes): each client
#: leaves or crashes in some run, aiokafka both.
MIXED_STEPS = {
    "aio": ("py", "java"),
    "rdk": ("aio", "java"),
    "java": ("rdk", "aio"),
    "py": ("java", "aio"),
}


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    "leader",
    [
        pytest.param("aio", id="aiokafka-leads"),
        pytest.param("rdk", id="confluent-leads"),
        pytest.param("java", id="java-leads"),
        pytest.param("py", id="kafka-python-leads"),
    ],
)
def test_four_clients_in_one_cooperative_group(
    leader: str, flowing_group: FlowingGroupFactory, java_client: str
) -> None:
    """aiokafka, kafka-python, confluent and Java in one cooperative-sticky group, ``leader``
    joining first (so leading): formed, one member leaves, one crashes; the survivors keep
    everything and are never revoked anything, nothing is lost."""
    clients = {"aio": "aiokafka", "py": "kafka-python", "rdk": "confluent", "java": java_client}
    flow = flowing_group([COOP], PARTITIONS, rate_per_s=RATE)
    group = flow.group
    t0 = time.monotonic()

    def start(name: str) -> None:
        group.start_member(name, process=name != "rdk", client=clients[name])

    start(leader)
    stables = [_stable(group, f"{clients[leader]} alone", t0)]
    for name in clients:
        if name != leader:
            start(name)
    stables.append(_stable(group, "four clients", t0))
    leaves, crashes = MIXED_STEPS[leader]
    t_leave = time.monotonic()
    group.stop_member(leaves)
    stables.append(_stable(group, f"{clients[leaves]} left", t0))
    check_survivors_keep(group, stables[-2], stables[-1], t_leave, cooperative=True)
    crashed = group.member(crashes)
    assert isinstance(crashed, ProcessMember)
    t_crash = time.monotonic()
    crashed.kill()
    stables.append(_stable(group, f"{clients[crashes]} crashed", t0))
    check_survivors_keep(group, stables[-2], stables[-1], t_crash, cooperative=True)
    finish(flow, stables, f"four clients, {clients[leader]} leads")


@pytest.mark.timeout(240)
def test_eager_sticky_group_of_aiokafka_kafka_python_and_java(
    flowing_group: FlowingGroupFactory, java_client: str
) -> None:
    """aiokafka (leading), kafka-python and Java ``StickyAssignor`` under eager ``sticky``:
    every leader reads the others' KIP-341 user data, so after kafka-python leaves the
    survivors get back everything they had (revoked and re-assigned, EAGER)."""
    flow = flowing_group(["sticky"], PARTITIONS, rate_per_s=RATE)
    group = flow.group
    t0 = time.monotonic()
    group.start_member("aio", client="aiokafka")
    stables = [_stable(group, "aiokafka alone", t0)]
    group.start_member("java", process=True, client=java_client)
    group.start_member("py")
    stables.append(_stable(group, "three clients", t0))
    t_leave = time.monotonic()
    group.stop_member("py")
    stables.append(_stable(group, "kafka-python left", t0))
    check_survivors_keep(group, stables[-2], stables[-1], t_leave, cooperative=False)
    group.stop_member("aio")
    stables.append(_stable(group, "aiokafka (the leader) left", t0))
    check_survivors_keep(group, stables[-2], stables[-1], t_leave, cooperative=False)
    finish(flow, stables, "eager sticky, aiokafka leads")


# -- static membership ----------------------------------------------------------------------


def _static_group(flow: FlowingGroup, t0: float) -> list[StableGroup]:
    """Start two static aiokafka members and a static kafka-python one; wait until stable."""
    group = flow.group
    gid = group.group_id
    group.start_member("s0", instance_id=f"{gid}-s0", client="aiokafka")
    group.start_member("s1", instance_id=f"{gid}-s1", client="aiokafka")
    group.start_member("py", instance_id=f"{gid}-py")
    return [_stable(group, "static group", t0)]


@pytest.mark.timeout(240)
def test_static_aiokafka_member_restarts_within_the_session(
    flowing_group: FlowingGroupFactory,
) -> None:
    """aiokafka members with ``group_instance_id`` (and one kafka-python static member): an
    aiokafka member restarted within the session (aiokafka sends no LeaveGroup for a static
    member) gets exactly its old partitions back, and nobody is revoked anything."""
    flow = flowing_group([COOP], PARTITIONS, rate_per_s=RATE, **STATIC_TIMEOUTS)
    group = flow.group
    t0 = time.monotonic()
    stables = _static_group(flow, t0)
    t_restart = time.monotonic()
    group.restart_member("s1")
    stables.append(_stable(group, "s1 restarted", t0))
    assert stables[-1].assignment == stables[-2].assignment, "a static restart moved partitions"
    revoked = _revocations(group.log.events(), t_restart, stables[-1].t, {"s0", "s1", "py"})
    assert not revoked, f"a static restart revoked partitions: {revoked}"
    finish(flow, stables, "static restart, aiokafka")


@pytest.mark.kafka_only("static_member_fencing")
@pytest.mark.timeout(240)
def test_second_aiokafka_consumer_with_the_same_instance_id_fences_the_first(
    flowing_group: FlowingGroupFactory,
) -> None:
    """A second aiokafka consumer started with a running member's ``group_instance_id``: the
    broker gives it the seat (and the partitions) at once. The first one hears
    UNKNOWN_MEMBER_ID at its next heartbeat (aiokafka 0.14's Heartbeat v0/v1 carries no
    instance id) and gets ``on_partitions_lost``, never committing what it lost; the hooks
    keep its member id, so its JoinGroup is answered FENCED_INSTANCE_ID and its ``getmany``
    raises, as Java's ``poll`` throws ``FencedInstanceIdException``: it never takes the seat
    back. No partition has two owners beyond the replaced member's stale view."""
    flow = flowing_group([COOP], PARTITIONS, rate_per_s=RATE, **STATIC_TIMEOUTS)
    group = flow.group
    t0 = time.monotonic()
    stables = _static_group(flow, t0)
    s0_parts = set(stables[-1].assignment["s0"])
    t_twin = time.monotonic()
    group.start_member("twin", instance_id=f"{group.group_id}-s0", client="aiokafka")
    lost = _wait_events(group, "s0#0", "lost", required=False)
    fenced = _wait_events(group, "s0#0", "error", required=False, with_partitions=False)
    stables.append(_stable(group, "the twin holds s0's seat", t0, members=["twin", "s1", "py"]))
    events = group.log.events()
    for key in ("s0#0", "twin#0"):
        seen = [
            (round(e.t - t_twin, 1), e.kind, len(e.partitions) or e.detail[:60])
            for e in events
            if e.key == key and e.t >= t_twin and e.kind in ("assigned", "lost", "revoked", "error")
        ]
        print(f"after the twin started, {key}: {seen}")
    assert lost, "s0 never reported on_partitions_lost after the twin took its seat"
    assert set(lost[0].partitions) == s0_parts, f"s0 lost {lost[0].partitions}, had {s0_parts}"
    assert fenced and "FENCED_INSTANCE_ID" in fenced[0].detail, f"s0 was not fenced: {fenced}"
    assert set(stables[-1].assignment["twin"]) == s0_parts
    twin_ends = [e for e in events if e.key == "twin#0" and e.kind in ("lost", "revoked")]
    assert not [e for e in twin_ends if e.partitions], f"the twin lost its seat: {twin_ends}"
    after_loss = [e for e in events if e.key == "s0#0" and e.t > lost[0].t]
    assert not [e for e in after_loss if e.kind in ("assigned", "committed") and e.partitions], (
        f"s0 took partitions back or committed after its loss: {after_loss}"
    )
    with pytest.raises(RuntimeError, match="failed"):
        group.stop_member("s0")  # its loop ended with the fencing error

    def stale_view(overlap: Overlap) -> bool:
        # The replaced member owns its partitions until it hears so (its on_partitions_lost).
        return overlap.first.key == "s0#0" and overlap.first.end == lost[0].t

    finish(flow, stables, "static fencing, aiokafka", exempt=stale_view, fenced=("s0",))


def _wait_events(
    group: ConsumerGroupRunner,
    key: str,
    kind: str,
    required: bool = True,
    timeout_s: float = STABLE_S,
    with_partitions: bool = True,
) -> list[OwnershipEvent]:
    """Events of ``kind`` (with partitions, unless not ``with_partitions``) from incarnation
    ``key``, waiting up to ``timeout_s`` for the first (``required``: assert there is one)."""
    deadline = time.monotonic() + timeout_s
    found: list[OwnershipEvent] = []
    while not found and time.monotonic() < deadline:
        found = [
            e
            for e in group.log.events()
            if e.key == key and e.kind == kind and (e.partitions or not with_partitions)
        ]
        time.sleep(0.2)
    assert found or not required, f"{key} never reported {kind}"
    return found


# -- KIP-70 and pattern subscriptions ---------------------------------------------------------


@pytest.mark.timeout(240)
def test_aiokafka_member_changes_its_subscription(
    flowing_group: FlowingGroupFactory,
    broker: RunningBroker,
    producer_factory: Callable[[str], KeyedProducer],
) -> None:
    """KIP-70 with a running hooked aiokafka member ``x``: it swaps topic B (one partition,
    only it subscribes) for topic C (the same size). The group rebalances; ``x`` is revoked
    exactly B's partition (still assigned in the callback: its commit-on-revoke succeeds) and
    gets C's; its partition of the unchanged topic A stays, and no other member (an aiokafka
    leader, a kafka-python member) is revoked anything.

    An aiokafka leader waits for the metadata of a topic new to the group before it assigns;
    a kafka-python leader assigns with the metadata it has (it may not block in its IO
    thread) and catches up at a follow-up rebalance, which under COOPERATIVE costs a round
    that revokes A partitions from the others and hands them back (seen on Apache Kafka)."""
    flow = flowing_group([COOP], PARTITIONS, rate_per_s=RATE)
    group = flow.group
    a = flow.topic
    b = create_topic(broker.bootstrap, unique_name("kip70-b"), 1)
    c = create_topic(broker.bootstrap, unique_name("kip70-c"), 1)
    group.set_partition_count(b, 1)
    b_producer = producer_factory(b)  # records of B: x has positions to commit at the revoke
    b_producer.start(RATE)
    t0 = time.monotonic()
    group.start_member("aio", client="aiokafka", topics=(a,))
    stables = [_stable(group, "aiokafka alone", t0, expect_partitions=_parts({a: 6}))]
    group.start_member("py", topics=(a,))
    group.start_member("x", client="aiokafka", topics=(a, b))
    stables.append(_stable(group, "A to all, B to x", t0))
    x_before = set(stables[-1].assignment["x"])
    assert (b, 0) in x_before and len(x_before) == 2, "x holds B's partition and one of A's"
    t_change = time.monotonic()
    group.resubscribe_member("x", [a, c])
    group.set_partition_count(b, 0)
    group.set_partition_count(c, 1)
    stables.append(_stable(group, "x swapped B for C", t0))
    after = stables[-1]
    x_after = set(after.assignment["x"])
    assert (c, 0) in x_after
    assert {p for p in x_before if p[0] == a} <= x_after, "x lost partitions of the kept topic"
    events = group.log.events()
    x_revoked = {p for e in _revocations(events, t_change, after.t, {"x"}) for p in e.partitions}
    assert x_revoked == {(b, 0)}, f"x was revoked {sorted(x_revoked)}"
    # Commit-on-revoke of the dropped topic's partitions works (they are still assigned in
    # on_partitions_revoked, as KIP-429 promises).
    b_commits = [
        e
        for e in events
        if e.member == "x" and t_change <= e.t <= after.t and {p[0] for p in e.partitions} == {b}
    ]
    assert [e.kind for e in b_commits if e.kind.startswith("commit")] == ["committed"], b_commits
    assert not _revocations(events, t_change, after.t, {"py", "aio"})
    for name in ("py", "aio"):
        assert set(stables[-2].assignment[name]) <= set(after.assignment[name])
    finish(flow, stables, "KIP-70 aiokafka")


def _parts(topics: dict[str, int]) -> set[Partition]:
    return {(t, p) for t, n in topics.items() for p in range(n)}


@pytest.mark.timeout(240)
def test_aiokafka_pattern_subscription_picks_up_a_new_topic(
    broker: RunningBroker,
    group_id: str,
    group_factory: Callable[..., ConsumerGroupRunner],
    producer_factory: Callable[[str], KeyedProducer],
) -> None:
    """Two hooked aiokafka members subscribed by pattern (``metadata_max_age_ms`` 1 s) and a
    kafka-python member subscribed to the first topic by name, cooperative-sticky: a topic
    created later that matches the pattern is assigned to the pattern members within a
    rebalance, and nobody is revoked anything."""
    prefix = unique_name("pat")
    first = create_topic(broker.bootstrap, f"{prefix}-first", PARTITIONS)
    producer = producer_factory(first)
    producer.send_burst(PARTITIONS * 10)
    producer.start(RATE)
    group = group_factory(group_id, {first: PARTITIONS}, [COOP])
    flow = FlowingGroup(first, producer, group)
    pattern = f"^{prefix.replace('.', '[.]')}-.*"
    t0 = time.monotonic()
    for name in ("pa", "pb"):
        group.start_member(name, client="aiokafka", topic_pattern=pattern, metadata_max_age_ms=1000)
    group.start_member("py")
    stables = [_stable(group, "pattern members and kafka-python", t0)]
    t_new = time.monotonic()
    second = create_topic(broker.bootstrap, f"{prefix}-second", 2)
    group.set_partition_count(second, 2)
    stables.append(_stable(group, "new topic picked up", t0))
    after = stables[-1]
    owners = after.owner_of()
    assert {owners[(second, p)] for p in range(2)} <= {"pa", "pb"}
    for name, parts in stables[0].assignment.items():
        assert set(parts) <= set(after.assignment[name]), f"{name} lost partitions"
    revoked = _revocations(group.log.events(), t_new, after.t, {"pa", "pb", "py"})
    assert not revoked, f"partitions revoked when a topic appeared: {revoked}"
    print(f"new topic assigned {after.t - t_new:.1f}s after it was created")
    finish(flow, stables, "pattern aiokafka")
