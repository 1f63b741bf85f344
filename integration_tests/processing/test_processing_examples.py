"""The processing examples (``examples/processing_*.py``) run against the real broker: work
longer than the poll interval, every record consumed once and committed, no rebalance."""

from __future__ import annotations

from typing import Any

import pytest
from example_runs import committed_offsets, run_example

from kafka_sticky_plugin.groups.admin import unique_name

pytestmark = pytest.mark.kafka_only()

RECORDS = 8


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    ("script", "work_ms"),
    [
        ("processing_kafka_python3.py", 4000),
        ("processing_aiokafka.py", 4000),
        ("processing_confluent.py", 7000),
    ],
)
def test_processing_example_consumes_and_commits(
    script: str, work_ms: int, broker: Any, request: pytest.FixtureRequest
) -> None:
    """8 records on 4 partitions, each longer than max poll interval: all done, all committed,
    one assignment (no rebalance while working)."""
    topic, group = unique_name(f"t-{request.node.name}"), unique_name(f"g-{request.node.name}")
    run = run_example(
        script,
        *("--bootstrap", broker.bootstrap, "--topic", topic, "--group", group),
        *("--partitions", "4", "--produce", str(RECORDS), "--max-records", str(RECORDS)),
        *("--work-ms", str(work_ms)),
        timeout_s=100,
    )
    run.assert_clean()
    assert run.consumed == RECORDS
    assert sum(run.committed.values()) == RECORDS
    assert committed_offsets(broker.bootstrap, group, topic) == run.committed
    lines = run.output.splitlines()
    assert not any(line.startswith("lost") for line in lines), run.output
    assigned = [line for line in lines if line.startswith("assigned") and line != "assigned []"]
    assert len(assigned) <= 1, run.output  # (the aiokafka example prints no callbacks)
