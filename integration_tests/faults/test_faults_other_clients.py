"""The faults tier for the other clients we hook, on one shared 3-broker cluster: aiokafka
(hooked), confluent-kafka (our listener bridge), a kafka-python 2.x hook family (members in
the version matrix's ``.venvs/kafka-python-2.2`` as child processes) and the genuine Java
consumer 4.4.0 as the reference.

In ``make test``: one gauntlet per client and strategy it has (librdkafka has no eager
``sticky``; its cooperative-sticky gauntlet runs in ``make faults`` only, an open finding:
:func:`test_gauntlet_confluent_cooperative`), testlab.gauntlet: the coordinator SIGKILLed,
every broker bounced, consumer bounces clean and SIGKILL, one by one and all at once, a
static bounce, a pause past the session and a 25-step churn, checked after each step; Java 4.4.0
cooperative-sticky as the reference (its sticky gauntlet in ``make faults``). ``make faults``
adds the separate scenarios, each on a fresh group (coordinator kill, full broker failover,
consumer bounces)."""

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
    return client, {"client": client}


#: The clients and strategies of this module's gauntlets in ``make test``.
GAUNTLETS = [
    ("aiokafka", "sticky"),
    ("aiokafka", "cooperative-sticky"),
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
@pytest.mark.xfail(
    strict=False,
    reason=(
        "open finding (2026-12-05): in the gauntlet, after the coordinator's SIGKILL one"
        " confluent-kafka member (our listener bridge, cooperative-sticky) is left with no"
        " partitions and the group never counts as stable (120 s), the other three holding"
        " 4 each; reproduced with seeds 187183831 and 1059480014 at 61c7a63 (the last landed"
        " commit) as well as later; the separate coordinator-kill scenario"
        " (test_coordinator_kill[confluent-cooperative-sticky]) passes. Not investigated yet"
    ),
)
def test_gauntlet_confluent_cooperative(cluster: KafkaCluster) -> None:
    run_gauntlets(cluster, [_spec("confluent", "cooperative-sticky")])


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
