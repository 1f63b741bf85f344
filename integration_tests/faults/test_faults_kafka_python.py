"""The faults tier for hooked kafka-python 3.0.x members on a controller + 3 brokers.

In ``make test``: one gauntlet per strategy (testlab.gauntlet: the
coordinator SIGKILLed, every broker bounced, consumer bounces clean and SIGKILL, one by one and
all at once, a static bounce, a pause past the session and a 25-step churn, checked after each
step). ``make faults`` adds the separate scenarios (testlab.faults), each
on a fresh group."""

from __future__ import annotations

import os
import random
from collections.abc import Iterator

import pytest
from faults_cluster import GauntletSpec, cluster_or_skip, record_and_check, run_gauntlets

from testlab.faults import (
    FaultRun,
    broker_failover,
    churn,
    consumer_bounces,
    static_bounce,
)
from testlab.kafka_cluster import KafkaCluster

pytestmark = pytest.mark.timeout(900)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaCluster]:
    yield from cluster_or_skip(tmp_path_factory)


def test_gauntlets(cluster: KafkaCluster) -> None:
    """Every fault in one continuous run per strategy; 0 lost, no two owners, nothing raised,
    checked after each step."""
    run_gauntlets(
        cluster,
        [GauntletSpec(f"kafka-python 3 {s}", s) for s in ("sticky", "cooperative-sticky")],
    )


@pytest.mark.faults_full
@pytest.mark.parametrize("strategy", ["sticky", "cooperative-sticky"])
def test_broker_failover(cluster: KafkaCluster, strategy: str) -> None:
    """The coordinator's broker SIGKILLed, then every broker bounced: nothing lost, nothing
    raised out of poll() (the eager hooks raised ECONNREFUSED before), no FindCoordinator
    storm (~200/s per member before), committed == log end (the revoke-time commit retried)."""
    with FaultRun(cluster, [strategy], label=f"kafka-python 3 {strategy}: broker failover") as run:
        figures = broker_failover(run)
    record_and_check(figures)


@pytest.mark.faults_full
def test_consumer_bounces(cluster: KafkaCluster) -> None:
    """Members restarted cleanly one by one, then one SIGKILLed, then one paused past its
    session and resumed (its stale view until it learns it was expelled is exempt), then all
    restarted cleanly at once and all SIGKILLed at once."""
    label = "kafka-python 3 cooperative-sticky: consumer bounces"
    with FaultRun(cluster, ["cooperative-sticky"], label=label, process_members=True) as run:
        figures = consumer_bounces(run)
    record_and_check(figures)


@pytest.mark.faults_full
def test_static_member_bounce(cluster: KafkaCluster) -> None:
    """A static member SIGKILLed and back within its session: the others revoke nothing."""
    label = "kafka-python 3 cooperative-sticky: static bounce"
    with FaultRun(
        cluster,
        ["cooperative-sticky"],
        label=label,
        members=3,
        process_members=True,
        static=True,
        session_timeout_ms=15000,
    ) as run:
        run.start()
        others_revoked = static_bounce(run, run.names[0])
        figures = run.finish()
    figures.revocations_of_others = others_revoked
    record_and_check(figures)


@pytest.mark.faults_full
def test_churn_playbook(cluster: KafkaCluster) -> None:
    """25 seeded steps of members joining, leaving and restarting under production."""
    seed = int(os.environ.get("KAFKA_STICKY_FAULTS_SEED", random.randrange(1 << 30)))
    print(f"churn seed {seed} (KAFKA_STICKY_FAULTS_SEED={seed} replays it)")
    label = "kafka-python 3 cooperative-sticky: churn x25"
    with FaultRun(cluster, ["cooperative-sticky"], label=label, members=3) as run:
        run.start()
        run.mark("churn")
        churn(run, steps=25, seed=seed, on_step=print)
        figures = run.finish()
    record_and_check(figures)
