"""The faults tier's cluster: one controller and three brokers, started once per test module
(:func:`faults_cluster`), skipped on the embedded broker (it needs Apache Kafka's jars)."""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kafka_sticky_plugin.testing.faults import FaultFigures, FaultRun, check_figures
from kafka_sticky_plugin.testing.gauntlet import gauntlet, step_table
from kafka_sticky_plugin.testing.kafka_cluster import KafkaCluster, kafka_cluster

TABLE = Path("build") / "faults" / "figures.txt"


def cluster_or_skip(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaCluster]:
    """Yield a fresh 3-broker cluster (each test module's ``cluster`` fixture), or skip
    outside the Apache Kafka tier."""
    if os.environ.get("KAFKA_STICKY_BROKER") not in ("kafka", "apache-kafka"):
        pytest.skip("starts its own 3-broker Apache Kafka cluster: runs in the Apache Kafka tier")
    with kafka_cluster(3, tmp_path_factory.mktemp("faults")) as cluster:
        yield cluster


def record_and_check(figures: FaultFigures) -> None:
    """Print the run's row, append it to build/faults/figures.txt (the tier's table), then
    check it (:func:`~kafka_sticky_plugin.testing.faults.check_figures`)."""
    row = figures.row()
    print(row)
    for label, seconds in figures.recovery_s.items():
        print(f"    recovery after {label}: {seconds:.1f}s")
    TABLE.parent.mkdir(parents=True, exist_ok=True)
    with TABLE.open("a", encoding="utf-8") as table:
        table.write(row + "\n")
    check_figures(figures)


GAUNTLET_TABLE = Path("build") / "faults" / "gauntlet.txt"


def run_gauntlet(cluster: KafkaCluster, label: str, strategy: str, **settings: Any) -> None:
    """One client+strategy's gauntlet (:mod:`kafka_sticky_plugin.testing.gauntlet`) on
    ``cluster``: print its per-step table, append it to build/faults/gauntlet.txt, then check
    every step and the whole run."""
    seed = int(os.environ.get("KAFKA_STICKY_FAULTS_SEED", random.randrange(1 << 30)))
    print(f"{label}: gauntlet seed {seed} (KAFKA_STICKY_FAULTS_SEED={seed} replays it)")
    with FaultRun(cluster, [strategy], label=label, **settings) as run:
        result = gauntlet(run, seed=seed, on_step=print)
    table = step_table(result)
    print(table)
    GAUNTLET_TABLE.parent.mkdir(parents=True, exist_ok=True)
    with GAUNTLET_TABLE.open("a", encoding="utf-8") as out:
        out.write(table + "\n")
    problems = result.problems()
    assert not problems, f"{label}: " + "; ".join(problems)
    record_and_check(result.figures)
