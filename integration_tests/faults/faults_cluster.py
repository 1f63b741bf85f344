"""The faults tier's cluster: one controller and three brokers, started once per test module
(:func:`faults_cluster`), skipped on the embedded broker (it needs Apache Kafka's jars)."""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from kafka_sticky_plugin.groups.admin import unique_name
from testlab.faults import FaultFigures, FaultRun, check_figures
from testlab.gauntlet import gauntlets, step_table
from testlab.kafka_cluster import KafkaCluster, kafka_cluster

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
    check it (:func:`~testlab.faults.check_figures`)."""
    row = figures.row()
    print(row)
    for label, seconds in figures.recovery_s.items():
        print(f"    recovery after {label}: {seconds:.1f}s")
    TABLE.parent.mkdir(parents=True, exist_ok=True)
    with TABLE.open("a", encoding="utf-8") as table:
        table.write(row + "\n")
    check_figures(figures)


GAUNTLET_TABLE = Path("build") / "faults" / "gauntlet.txt"


@dataclass(frozen=True)
class GauntletSpec:
    """One client+strategy of a gauntlet: its row label, strategy and FaultRun settings."""

    label: str
    strategy: str
    settings: dict[str, Any] = field(default_factory=dict)
    #: The genuine Java consumer as the reference: its figures are printed beside ours and its
    #: lost/two-owner/poll checks apply, but its static bounce is not held to 0 revocations of
    #: the others (a JVM restarting under load may miss its session: a harness cost, not a
    #: promise of ours).
    reference: bool = False


def colocated_group_ids(cluster: KafkaCluster, count: int, tries: int = 12) -> list[str]:
    """``count`` fresh group ids coordinated by one broker where ``tries`` candidates each
    find one (so the gauntlet's coordinator SIGKILL hits every group with one kill)."""
    first = unique_name("faults-group")
    node = cluster.coordinator_of(first)
    ids = [first]
    while len(ids) < count:
        candidates = [unique_name("faults-group") for _ in range(tries)]
        ids.append(
            next((c for c in candidates if cluster.coordinator_of(c) == node), candidates[0])
        )
    return ids


def run_gauntlets(cluster: KafkaCluster, specs: list[GauntletSpec]) -> None:
    """Every spec's gauntlet together on ``cluster``
    (:func:`testlab.gauntlet.gauntlets`: the broker steps once for all
    groups, the member steps per group): print each per-step table, append it to
    build/faults/gauntlet.txt, then check every step and every whole run."""
    seed = int(os.environ.get("KAFKA_STICKY_FAULTS_SEED", random.randrange(1 << 30)))
    print(f"gauntlet seed {seed} (KAFKA_STICKY_FAULTS_SEED={seed} replays it)")
    group_ids = colocated_group_ids(cluster, len(specs))
    with ExitStack() as stack:
        runs = [
            stack.enter_context(
                FaultRun(
                    cluster,
                    [spec.strategy],
                    label=spec.label,
                    group_id=group_id,
                    members=4,
                    rate_per_s=100.0,
                    **{"static": True, **spec.settings},
                )
            )
            for spec, group_id in zip(specs, group_ids, strict=True)
        ]
        results = gauntlets(runs, seed=seed, on_step=print)
    GAUNTLET_TABLE.parent.mkdir(parents=True, exist_ok=True)
    spec_of = {spec.label: spec for spec in specs}
    problems: list[str] = []
    for result in results:
        table = step_table(result)
        print(table)
        with GAUNTLET_TABLE.open("a", encoding="utf-8") as out:
            out.write(table + "\n")
        found = result.problems()
        if spec_of[result.label].reference:
            found = [p for p in found if "revocations of the other members" not in p]
        problems += [f"{result.label}: {p}" for p in found]
    for result in results:
        try:
            record_and_check(result.figures)
        except AssertionError as exc:
            problems.append(str(exc))
    assert not problems, "; ".join(problems)
