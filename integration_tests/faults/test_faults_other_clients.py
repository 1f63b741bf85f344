"""The faults tier's broker failover (coordinator's broker SIGKILLed, then every broker
bounced) for the other clients we hook: aiokafka (hooked) and confluent-kafka (our listener
bridge), cooperative-sticky (the suite budget; kafka-python 3 runs both strategies)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from faults_cluster import cluster_or_skip, record_and_check

from kafka_sticky_plugin.testing.faults import (
    FaultRun,
    broker_failover,
)
from kafka_sticky_plugin.testing.kafka_cluster import KafkaCluster

pytestmark = [pytest.mark.timeout(600), pytest.mark.faults_full]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaCluster]:
    yield from cluster_or_skip(tmp_path_factory)


@pytest.mark.parametrize("client", ["aiokafka", "confluent"])
def test_broker_failover(cluster: KafkaCluster, client: str) -> None:
    label = f"{client} cooperative-sticky: broker failover"
    with FaultRun(cluster, ["cooperative-sticky"], label=label, client=client) as run:
        figures = broker_failover(run)
    record_and_check(figures)
