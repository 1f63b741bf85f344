"""The faults tier's broker failover (coordinator's broker SIGKILLed, then every broker
bounced) for the other clients we hook: aiokafka (hooked) and confluent-kafka (our listener
bridge), cooperative-sticky (the suite budget; kafka-python 3 runs both strategies)."""

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


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaCluster]:
    yield from cluster_or_skip(tmp_path_factory)


@pytest.mark.parametrize("client", ["aiokafka", "confluent"])
def test_broker_failover(cluster: KafkaCluster, client: str) -> None:
    label = f"{client} cooperative-sticky: broker failover"
    with FaultRun(cluster, ["cooperative-sticky"], label=label, client=client) as run:
        run.start()
        kill_coordinator(run)
        run.group.wait_stable(timeout_s=90)
        rolling_bounce(run)
        figures = run.finish()
    record(figures)
    check_figures(figures)
