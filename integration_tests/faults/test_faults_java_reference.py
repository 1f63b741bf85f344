"""The reference: the same broker failover with the genuine Java consumer (kafka-clients
4.4.0, StickyAssignor and CooperativeStickyAssignor, commitSync in onPartitionsRevoked).
Its rows go into the same table (build/faults/figures.txt) beside ours."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from faults_cluster import cluster_or_skip, record_and_check

from testlab.faults import (
    FaultRun,
    broker_failover,
)
from testlab.kafka_cluster import KafkaCluster

pytestmark = [pytest.mark.timeout(600), pytest.mark.faults_full]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaCluster]:
    yield from cluster_or_skip(tmp_path_factory)


JAVA = "java-4.4.0"


@pytest.mark.parametrize("strategy", ["sticky", "cooperative-sticky"])
def test_broker_failover_java(cluster: KafkaCluster, strategy: str) -> None:
    label = f"Java 4.4.0 {strategy}: broker failover"
    with FaultRun(cluster, [strategy], label=label, client=JAVA) as run:
        figures = broker_failover(run)
    record_and_check(figures)
