"""The reference: the same broker failover with the genuine Java consumer (kafka-clients
4.4.0, StickyAssignor and CooperativeStickyAssignor, commitSync in onPartitionsRevoked).
Its rows go into the same table (build/faults/figures.txt) beside ours."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from faults_cluster import cluster_or_skip, record

from kafka_sticky_plugin.testing.faults import (
    FaultRun,
    check_figures,
    kill_coordinator,
    rolling_bounce,
)
from kafka_sticky_plugin.testing.kafka_cluster import KafkaCluster

pytestmark = pytest.mark.timeout(600)

JAVA = "java-4.4.0"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaCluster]:
    yield from cluster_or_skip(tmp_path_factory)


@pytest.mark.parametrize("strategy", ["sticky", "cooperative-sticky"])
def test_broker_failover_java(cluster: KafkaCluster, strategy: str) -> None:
    label = f"Java 4.4.0 {strategy}: broker failover"
    with FaultRun(cluster, [strategy], label=label, client=JAVA) as run:
        run.start()
        kill_coordinator(run)
        run.group.wait_stable(timeout_s=90)
        rolling_bounce(run)
        figures = run.finish()
    record(figures)
    check_figures(figures)
