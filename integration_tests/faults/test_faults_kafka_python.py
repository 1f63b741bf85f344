"""Broker faults under hooked kafka-python 3.0.x members (see kafka_sticky_plugin.testing.faults)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kafka_sticky_plugin.testing.faults import FaultRun, check_figures, kill_coordinator, rolling_bounce
from kafka_sticky_plugin.testing.kafka_cluster import KafkaCluster

from faults_cluster import cluster_or_skip, record


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaCluster]:
    yield from cluster_or_skip(tmp_path_factory)


@pytest.mark.parametrize("strategy", ["sticky", "cooperative-sticky"])
def test_broker_failover(cluster: KafkaCluster, strategy: str) -> None:
    """The coordinator's broker SIGKILLed, then every broker bounced: nothing lost, nothing
    raised out of poll(), no FindCoordinator storm, committed == log end."""
    with FaultRun(cluster, [strategy], label=f"kafka-python 3 {strategy} broker failover") as run:
        run.start()
        kill_coordinator(run)
        run.group.wait_stable(timeout_s=90)
        rolling_bounce(run)
        figures = run.finish()
    record(figures)
    check_figures(figures)
