"""Every consumer script in ``examples/`` runs against the real broker, consumes what was
produced and commits it; the kafka-python 3.x and aiokafka ones also hand partitions over to
a second copy with commit-on-revoke (no record lost, none committed twice, no IO-thread
error).

The kafka-python 2.x script runs in the 2.x matrix venvs:
``integration_tests/hooks/test_example_kafka_python2.py``.
"""

from __future__ import annotations

import signal
from typing import Any

import kafka
import pytest
from example_runs import committed_offsets, finish, run_example, start_example, wait_for_line

from kafka_sticky_plugin.groups.admin import unique_name

RECORDS = 30
IS_KAFKA_PYTHON_3 = int(kafka.__version__.split(".")[0]) >= 3


def _fresh(request: pytest.FixtureRequest) -> tuple[str, str]:
    return unique_name(f"t-{request.node.name}"), unique_name(f"g-{request.node.name}")


#: The examples that hand partitions over with commit-on-revoke under cooperative-sticky.
COOPERATIVE_EXAMPLES = [
    pytest.param(
        "consumer_kafka_python3.py",
        marks=pytest.mark.skipif(
            not IS_KAFKA_PYTHON_3, reason="the 3.x example needs kafka-python 3.x"
        ),
        id="kafka-python3",
    ),
    pytest.param("consumer_aiokafka.py", id="aiokafka"),
]


@pytest.mark.timeout(90)
@pytest.mark.parametrize("script", COOPERATIVE_EXAMPLES)
def test_cooperative_example_consumes_and_commits(
    script: str, broker: Any, request: pytest.FixtureRequest
) -> None:
    topic, group = _fresh(request)
    run = run_example(
        script,
        *("--bootstrap", broker.bootstrap, "--topic", topic, "--group", group),
        *("--produce", str(RECORDS), "--max-records", str(RECORDS)),
    )
    run.assert_clean()
    assert run.consumed == RECORDS
    assert sum(run.committed.values()) == RECORDS
    assert committed_offsets(broker.bootstrap, group, topic) == run.committed


@pytest.mark.timeout(120)
@pytest.mark.parametrize("script", COOPERATIVE_EXAMPLES)
def test_cooperative_example_commits_on_revoke_when_a_second_copy_joins(
    script: str, broker: Any, request: pytest.FixtureRequest
) -> None:
    """A second copy joins: the first commits the partitions it gives up (kafka-python 3.x:
    from the async listener, on the IO thread) and keeps the rest; every record is
    committed once."""
    topic, group = _fresh(request)
    common = ("--bootstrap", broker.bootstrap, "--topic", topic, "--group", group)
    first = start_example(script, *common, "--produce", str(RECORDS))
    early = wait_for_line(first, "assigned", 40)
    second = start_example(script, *common, "--seconds", "12")
    second_run = finish(second, 60)
    first.send_signal(signal.SIGTERM)
    first_run = finish(first, 60)
    first_run.output = "".join(early) + first_run.output
    first_run.assert_clean()
    second_run.assert_clean()
    assert "committed revoked" in first_run.output, first_run.output
    assert "revoked" in first_run.output and "lost" not in first_run.output
    assert first_run.consumed + second_run.consumed >= RECORDS
    committed = committed_offsets(broker.bootstrap, group, topic)
    assert sum(committed.values()) == RECORDS, committed


@pytest.mark.timeout(90)
def test_confluent_example_consumes_and_commits(
    broker: Any, request: pytest.FixtureRequest
) -> None:
    topic, group = _fresh(request)
    run = run_example(
        "consumer_confluent.py",
        *("--bootstrap", broker.bootstrap, "--topic", topic, "--group", group),
        *("--produce", str(RECORDS), "--max-records", str(RECORDS)),
    )
    run.assert_clean()
    assert run.consumed == RECORDS
    assert sum(run.committed.values()) == RECORDS
    assert committed_offsets(broker.bootstrap, group, topic) == run.committed
