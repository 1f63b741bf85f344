"""The faults soak: longer and harder than the tier in ``make test``; run by ``make soak``
only (skipped unless ``KAFKA_STICKY_FAULTS_SOAK=1``). Six members over 24 partitions at 400
records/s; ten SIGKILL/restart cycles of a random broker (Kafka's ConsumerBounceTest), a
rolling bounce with SIGKILL, then a 100-step churn playbook, per strategy. Seeded
(``KAFKA_STICKY_FAULTS_SEED`` replays a run)."""

from __future__ import annotations

import os
import random
from collections.abc import Iterator

import pytest
from faults_cluster import cluster_or_skip, record_and_check

from testlab.faults import (
    FaultRun,
    churn,
    rolling_bounce,
)
from testlab.kafka_cluster import KafkaCluster

pytestmark = [
    pytest.mark.skipif(
        os.environ.get("KAFKA_STICKY_FAULTS_SOAK") != "1",
        reason="the faults soak runs with `make soak` (KAFKA_STICKY_FAULTS_SOAK=1)",
    ),
    pytest.mark.timeout(3600),
]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaCluster]:
    yield from cluster_or_skip(tmp_path_factory)


@pytest.mark.parametrize("strategy", ["sticky", "cooperative-sticky"])
def test_soak(cluster: KafkaCluster, strategy: str) -> None:
    seed = int(os.environ.get("KAFKA_STICKY_FAULTS_SEED", random.randrange(1 << 30)))
    print(f"soak seed {seed} (KAFKA_STICKY_FAULTS_SEED={seed} replays it)")
    rng = random.Random(seed)
    label = f"soak kafka-python 3 {strategy}"
    with FaultRun(
        cluster, [strategy], label=label, members=6, partitions=24, rate_per_s=400.0
    ) as run:
        run.start()
        for cycle in range(10):
            node = rng.choice(cluster.broker_ids)
            run.mark(f"cycle {cycle}: kill broker {node}")
            cluster.kill(node)
            cluster.restart(node)
        run.group.wait_stable(timeout_s=120)
        rolling_bounce(run, hard=True)
        run.group.wait_stable(timeout_s=120)
        churn(run, steps=100, seed=seed, on_step=print)
        figures = run.finish(settle_timeout_s=240)
    record_and_check(figures)
