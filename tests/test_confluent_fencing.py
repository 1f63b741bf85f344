"""librdkafka's fatal fencing of a static member, as our confluent-kafka parts see it: the
consumer from ``create_consumer`` says it once in an ERROR line with the cause and the remedy
(:mod:`kafka_sticky_plugin.adapters.confluent_kafka.fencing`), and the group member loop
(:mod:`kafka_sticky_plugin.groups.confluent_member`) reports it as an error and ends instead
of polling a dead consumer for ever (the confluent gauntlet's "never stable" finding of
5 December 2026).

No Kafka: librdkafka's own mock cluster (:mod:`testlab.rdkafka_mock`, in this process, on
loopback) answers the static member's next OffsetCommit with FENCED_INSTANCE_ID, which
librdkafka turns into a fatal error, as it does for the self-fencing a real broker causes
after a coordinator outage (``test_librdkafka_fences_its_own_static_member`` in
integration_tests/faults/test_faults_other_clients.py shows that one with the client
alone)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator

import pytest

from kafka_sticky_plugin.adapters.confluent_kafka.fencing import FENCED_TEXT, self_fencing_line
from kafka_sticky_plugin.groups.confluent_member import confluent_consume_loop
from kafka_sticky_plugin.groups.events import EventLog
from kafka_sticky_plugin.groups.member_config import LoopControl, MemberConfig, encode_sequence

confluent_kafka = pytest.importorskip("confluent_kafka")
rdkafka_mock = pytest.importorskip("testlab.rdkafka_mock")

pytestmark = pytest.mark.timeout(90)

TOPIC = "fenced"
PARTITIONS = 3


@pytest.fixture
def mock() -> Iterator[object]:
    try:
        cluster = rdkafka_mock.MockCluster(1)
    except rdkafka_mock.MockUnavailable as exc:
        pytest.skip(f"librdkafka's mock cluster is not reachable: {exc}")
    with cluster:
        cluster.create_topic(TOPIC, PARTITIONS)
        producer = confluent_kafka.Producer({"bootstrap.servers": cluster.bootstrap})
        for sequence in range(60):
            producer.produce(TOPIC, encode_sequence(sequence), partition=sequence % PARTITIONS)
        producer.flush(10)
        del producer
        yield cluster


def _fence_next_commits(mock: object) -> None:
    """The next OffsetCommit requests are answered FENCED_INSTANCE_ID (82)."""
    mock.push_errors("OffsetCommit", ["FENCED_INSTANCE_ID"] * 3)  # type: ignore[attr-defined]


def test_line_only_for_a_fenced_static_member() -> None:
    fatal = f"Fatal error: Broker: {FENCED_TEXT}: OffsetCommit failed"
    line = self_fencing_line("g", "c", "m0-static", 6000, fatal)
    assert line is not None
    assert "group.instance.id m0-static" in line and "session.timeout.ms=6000" in line
    assert "create a new one" in line
    assert self_fencing_line("g", "c", None, 6000, fatal) is None  # dynamic member
    assert self_fencing_line("g", "c", "m0-static", 6000, "Fatal error: other") is None


def test_create_consumer_says_the_fencing_once(
    mock: object, caplog: pytest.LogCaptureFixture
) -> None:
    from kafka_sticky_plugin.confluent import create_consumer, subscribe

    class Quiet:
        def on_partitions_revoked(self, revoked: object) -> None: ...

        def on_partitions_assigned(self, assigned: object) -> None: ...

    consumer = create_consumer(
        {
            "bootstrap.servers": mock.bootstrap,  # type: ignore[attr-defined]
            "group.id": "fenced-line",
            "client.id": "static-one",
            "group.instance.id": "static-one-id",
            "partition.assignment.strategy": "cooperative-sticky",
            "session.timeout.ms": 6000,
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            "log_level": 0,
        }
    )
    caplog.set_level(logging.ERROR, logger="kafka_sticky_plugin.confluent")
    try:
        subscribe(consumer, [TOPIC], Quiet())
        deadline = time.monotonic() + 20
        seen = 0
        while seen < 60 and time.monotonic() < deadline:
            seen += sum(1 for m in consumer.consume(100, 0.2) if m.error() is None)
        assert seen == 60, "the mock cluster's records were not delivered"
        _fence_next_commits(mock)
        consumer.commit(offsets=[confluent_kafka.TopicPartition(TOPIC, 0, 5)], asynchronous=True)
        fatal: list[object] = []
        deadline = time.monotonic() + 10
        while len(fatal) < 2 and time.monotonic() < deadline:
            errors = [m.error() for m in consumer.consume(100, 0.2) if m.error() is not None]
            fatal += [e for e in errors if e.code() == confluent_kafka.KafkaError._FATAL]
            if fatal:
                consumer.poll(0.2)  # a second look: still one line
                break
    finally:
        consumer.close()
    assert fatal, "librdkafka did not raise its fatal error"
    lines = [
        r.getMessage() for r in caplog.records if "fenced this static member" in r.getMessage()
    ]
    print(lines)
    assert len(lines) == 1
    assert "group.instance.id static-one-id" in lines[0] and "session.timeout.ms=6000" in lines[0]


def test_member_loop_reports_the_fatal_error_and_ends(mock: object) -> None:
    log = EventLog()
    stop = threading.Event()
    config = MemberConfig(
        bootstrap=mock.bootstrap,  # type: ignore[attr-defined]
        group_id="fenced-loop",
        topics=(TOPIC,),
        member="m0",
        client="confluent",
        group_instance_id="m0-static",
        commit_interval_s=0.2,
    )
    failure: list[BaseException] = []

    def run() -> None:
        try:
            confluent_consume_loop(config, log, LoopControl(should_stop=stop.is_set))
        except BaseException as exc:  # the loop re-raises what it reported
            failure.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 20
        while len(log.deliveries()) < 60 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(log.deliveries()) == 60, "the mock cluster's records were not delivered"
        _fence_next_commits(mock)
        thread.join(15)  # the periodic commit (every 0.2 s) meets the fencing
        ended = not thread.is_alive()
    finally:
        stop.set()
        thread.join(15)
    errors = [e for e in log.events() if e.kind == "error"]
    print([e.detail for e in errors])
    assert ended, "the member kept polling a consumer librdkafka declared unusable"
    assert errors and "fenced" in errors[0].detail.lower()
    assert [e.kind for e in log.events()][-1] == "stopped"
    assert failure and isinstance(failure[0], confluent_kafka.KafkaException)
