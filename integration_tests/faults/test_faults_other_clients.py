"""The faults tier for the other clients we hook, on one shared 3-broker cluster: aiokafka
(hooked), confluent-kafka (our listener bridge), a kafka-python 2.x hook family (members in
the version matrix's ``.venvs/kafka-python-2.2`` as child processes) and the genuine Java
consumer 4.4.0 as the reference.

In ``make test``: one gauntlet per client and strategy it has (librdkafka has no eager
``sticky``), testlab.gauntlet: the coordinator SIGKILLed, every broker bounced, consumer
bounces clean and SIGKILL, one by one and all at once, a static bounce, a pause past the
session and a 25-step churn, checked after each step; Java 4.4.0 cooperative-sticky as the
reference (its sticky gauntlet in ``make faults``). confluent-kafka's static member has a
30 s session (:data:`CONFLUENT_STATIC_SESSION_MS`): librdkafka fences its own static member
when the coordinator is unreachable for longer than its session
(:func:`test_librdkafka_fences_its_own_static_member`). ``make faults`` adds the separate
scenarios, each on a fresh group (coordinator kill, full broker failover, consumer bounces)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from faults_cluster import GauntletSpec, cluster_or_skip, record_and_check, run_gauntlets

from testlab.faults import (
    FaultRun,
    broker_failover,
    consumer_bounces,
    coordinator_failover,
)
from testlab.kafka_cluster import KafkaCluster

pytestmark = pytest.mark.timeout(1500)

JAVA = "java-4.4.0"
#: The kafka-python 2.x hook family run here (created by ``make matrix-venvs``).
KAFKA_PYTHON_2 = "kafka-python-2.2"
#: The session of a static confluent-kafka member (the others keep the tier's 6 s): longer
#: than a coordinator failover here (9.4 s from the SIGKILL to the new coordinator on
#: 5 December 2026), so that librdkafka's client-side session never expires during one and
#: librdkafka does not fence its own static member (docs/faults.md; without it the gauntlet's
#: ``m0`` died of FENCED_INSTANCE_ID at the coordinator SIGKILL).
CONFLUENT_STATIC_SESSION_MS = 30_000


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaCluster]:
    yield from cluster_or_skip(tmp_path_factory)


def _settings(client: str) -> tuple[str, dict[str, Any]]:
    """(label, FaultRun settings) of one client."""
    if client == KAFKA_PYTHON_2:
        python = Path(".venvs") / KAFKA_PYTHON_2 / "bin" / "python"
        if not python.exists():
            pytest.skip(f"needs {python} (make matrix-venvs)")
        # kafka-python 2.x has no static membership (KIP-345): its gauntlet has no static bounce.
        return "kafka-python 2.2", {
            "process_members": True,
            "python": str(python.absolute()),
            "static": False,
        }
    if client == JAVA:
        return "Java 4.4.0", {"client": JAVA}
    if client == "confluent":
        static = {"session_timeout_ms": CONFLUENT_STATIC_SESSION_MS}
        return client, {"client": client, "static_member_settings": static}
    return client, {"client": client}


#: The clients and strategies of this module's gauntlets in ``make test``.
GAUNTLETS = [
    ("aiokafka", "sticky"),
    ("aiokafka", "cooperative-sticky"),
    ("confluent", "cooperative-sticky"),
    (KAFKA_PYTHON_2, "sticky"),
    (KAFKA_PYTHON_2, "cooperative-sticky"),
    (JAVA, "cooperative-sticky"),
]


def _spec(client: str, strategy: str) -> GauntletSpec:
    name, settings = _settings(client)
    return GauntletSpec(f"{name} {strategy}", strategy, settings, reference=client == JAVA)


def test_gauntlets(cluster: KafkaCluster) -> None:
    """Every fault in one continuous run per client and strategy (the broker faults once for
    all groups); 0 lost, no two owners, nothing raised, checked after each step."""
    kafka_python_2 = Path(".venvs") / KAFKA_PYTHON_2 / "bin" / "python"
    wanted = GAUNTLETS
    if not kafka_python_2.exists():  # the other clients still run
        print(f"kafka-python 2.2 gauntlets left out: needs {kafka_python_2} (make matrix-venvs)")
        wanted = [(c, s) for c, s in GAUNTLETS if c != KAFKA_PYTHON_2]
    run_gauntlets(cluster, [_spec(client, strategy) for client, strategy in wanted])


@pytest.mark.faults_full
def test_gauntlet_java_sticky(cluster: KafkaCluster) -> None:
    run_gauntlets(cluster, [_spec(JAVA, "sticky")])


@pytest.mark.faults_full
@pytest.mark.parametrize(
    ("client", "strategy"),
    [
        ("aiokafka", "sticky"),
        ("aiokafka", "cooperative-sticky"),
        ("confluent", "cooperative-sticky"),
        (KAFKA_PYTHON_2, "sticky"),
        (KAFKA_PYTHON_2, "cooperative-sticky"),
        (JAVA, "sticky"),
        (JAVA, "cooperative-sticky"),
    ],
)
def test_coordinator_kill(cluster: KafkaCluster, client: str, strategy: str) -> None:
    """Nothing lost, no two owners, committed == log end, nothing raised out of poll()."""
    name, settings = _settings(client)
    label = f"{name} {strategy}: coordinator kill"
    with FaultRun(cluster, [strategy], label=label, **settings) as run:
        figures = coordinator_failover(run)
    record_and_check(figures)


@pytest.mark.faults_full
@pytest.mark.parametrize("client", ["aiokafka", "confluent"])
def test_broker_failover(cluster: KafkaCluster, client: str) -> None:
    label = f"{client} cooperative-sticky: broker failover"
    with FaultRun(cluster, ["cooperative-sticky"], label=label, client=client) as run:
        figures = broker_failover(run)
    record_and_check(figures)


@pytest.mark.faults_full
@pytest.mark.parametrize("client", ["aiokafka", "confluent"])
def test_consumer_bounces(cluster: KafkaCluster, client: str) -> None:
    """Child-process members: two restarted cleanly one by one, one SIGKILLed, one paused
    past its session and resumed, then all restarted cleanly at once and all SIGKILLed at
    once."""
    label = f"{client} cooperative-sticky: consumer bounces"
    with FaultRun(
        cluster, ["cooperative-sticky"], label=label, client=client, process_members=True
    ) as run:
        figures = consumer_bounces(run)
    record_and_check(figures)


def _static_consumer_through_coordinator_kill(cluster: KafkaCluster) -> str | None:
    """One plain ``confluent_kafka.Consumer`` (no bridge, no callbacks: librdkafka alone)
    with a ``group.instance.id`` and a 6 s session, committing its positions asynchronously
    every 0.5 s as an application does; the group coordinator's broker SIGKILLed and
    restarted 3 s later, as in the gauntlet. Returns librdkafka's fatal error text, or None
    when none came within 60 s of the kill."""
    import threading
    import time

    import confluent_kafka

    from kafka_sticky_plugin.groups.admin import create_topic, unique_name

    topic = create_topic(cluster.bootstrap, unique_name("self-fencing"), 3, replication=3)
    producer = confluent_kafka.Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all"})
    for sequence in range(30):
        producer.produce(topic, str(sequence).encode(), partition=sequence % 3)
    producer.flush(30)
    del producer  # its connections close before the kill
    group_id = unique_name("self-fencing-group")
    consumer = confluent_kafka.Consumer(
        {
            "bootstrap.servers": cluster.bootstrap,
            "group.id": group_id,
            "group.instance.id": f"{group_id}-static",
            "session.timeout.ms": 6000,
            "heartbeat.interval.ms": 1000,
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            "log_level": 0,
        }
    )
    restarter: threading.Thread | None = None
    try:
        consumer.subscribe([topic])
        deadline = time.monotonic() + 60
        delivered = 0
        while delivered < 30 and time.monotonic() < deadline:
            delivered += sum(1 for m in consumer.consume(100, 0.2) if m.error() is None)
        assert delivered == 30, f"only {delivered} of 30 records delivered before the kill"
        node = cluster.coordinator_of(group_id)

        def down_and_up() -> None:
            time.sleep(3.0)
            cluster.restart(node)

        cluster.kill(node)
        restarter = threading.Thread(target=down_and_up, daemon=True)
        restarter.start()
        last_commit = 0.0
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            for message in consumer.consume(100, 0.2):
                error = message.error()
                if error is not None and error.code() == confluent_kafka.KafkaError._FATAL:
                    return str(error.str())
            if time.monotonic() - last_commit >= 0.5:
                positions = [
                    tp for tp in consumer.position(consumer.assignment()) if tp.offset >= 0
                ]
                if positions:
                    consumer.commit(offsets=positions, asynchronous=True)
                last_commit = time.monotonic()
        return None
    finally:
        if restarter is not None:
            restarter.join(150)
        consumer.close()


@pytest.mark.faults_full
def test_librdkafka_fences_its_own_static_member(cluster: KafkaCluster) -> None:
    """librdkafka alone, no code of ours on the consumer path: a static member whose group
    coordinator stays unreachable for longer than its session timeout drops its member id,
    and a commit made while the coordinator was unknown, sent once it is back, gets
    FENCED_INSTANCE_ID, which librdkafka makes fatal (see
    :mod:`kafka_sticky_plugin.adapters.confluent_kafka.fencing`). The outage's length depends
    on the cluster (the controller moves the coordinator after ``broker.session.timeout.ms``,
    6 s here), so up to three kills are tried; the first fatal error ends the test. Should a
    librdkafka release stop doing this, this test fails: then the confluent gauntlet's longer
    session for its static member (:data:`CONFLUENT_STATIC_SESSION_MS`) can go."""
    for attempt in range(1, 4):
        fatal = _static_consumer_through_coordinator_kill(cluster)
        print(f"attempt {attempt}: {fatal or 'no fatal error within 60 s'}")
        if fatal is not None:
            assert "Static consumer fenced" in fatal
            return
        cluster.wait_all_running()
    pytest.fail("librdkafka no longer fences its own static member after a coordinator kill")
