"""``examples/consumer_kafka_python2.py`` (sync listener, blocking commit on revoke) on the
kafka-python 2.x clients of the version matrix; on 3.x that listener pattern fails (the
listener runs on the IO thread), which is why 3.x has its own example (``test_examples.py``).
"""

from __future__ import annotations

import signal
from typing import Any

import kafka
import pytest
from example_runs import committed_offsets, finish, run_example, start_example, wait_for_line

from kafka_sticky_plugin.groups.admin import unique_name

RECORDS = 30
pytestmark = pytest.mark.skipif(
    int(kafka.__version__.split(".")[0]) >= 3,
    reason="the 2.x example's sync listener is for kafka-python 2.x (3.x: the async example)",
)


def _fresh(request: pytest.FixtureRequest) -> tuple[str, str]:
    return unique_name(f"t-{request.node.name}"), unique_name(f"g-{request.node.name}")


@pytest.mark.timeout(90)
def test_kafka_python2_example_consumes_and_commits(
    broker: Any, request: pytest.FixtureRequest
) -> None:
    topic, group = _fresh(request)
    run = run_example(
        "consumer_kafka_python2.py",
        *("--bootstrap", broker.bootstrap, "--topic", topic, "--group", group),
        *("--produce", str(RECORDS), "--max-records", str(RECORDS)),
    )
    run.assert_clean()
    assert run.consumed == RECORDS
    assert sum(run.committed.values()) == RECORDS
    assert committed_offsets(broker.bootstrap, group, topic) == run.committed


@pytest.mark.timeout(120)
def test_kafka_python2_example_commits_on_revoke_when_a_second_copy_joins(
    broker: Any, request: pytest.FixtureRequest
) -> None:
    topic, group = _fresh(request)
    common = ("--bootstrap", broker.bootstrap, "--topic", topic, "--group", group)
    first = start_example("consumer_kafka_python2.py", *common, "--produce", str(RECORDS))
    early = wait_for_line(first, "assigned", 40)
    second_run = finish(start_example("consumer_kafka_python2.py", *common, "--seconds", "12"), 60)
    first.send_signal(signal.SIGTERM)
    first_run = finish(first, 60)
    first_run.output = "".join(early) + first_run.output
    first_run.assert_clean()
    second_run.assert_clean()
    assert "committed revoked" in first_run.output, first_run.output
    committed = committed_offsets(broker.bootstrap, group, topic)
    assert sum(committed.values()) == RECORDS, committed
