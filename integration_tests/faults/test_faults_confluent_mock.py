"""Protocol errors injected into confluent-kafka members (librdkafka, our listener bridge,
cooperative-sticky) through librdkafka's mock cluster
(:mod:`testlab.rdkafka_mock`): ILLEGAL_GENERATION, NOT_COORDINATOR and
REBALANCE_IN_PROGRESS on JoinGroup, SyncGroup, Heartbeat and OffsetCommit, as librdkafka's
own 0113 test does. No Kafka needed (the mock brokers run inside this process, on loopback).

Each scenario (one per API): three members consume a 6-partition topic under steady
production; the errors are pushed onto the next three requests of one API (one of each), then
a fourth member joins (so JoinGroup and SyncGroup are sent; Heartbeat and OffsetCommit are sent
every second anyway). Checked: every
acknowledged record delivered, never two members owning a partition at once (from the
bridge's callbacks), nothing raised out of ``consume()``, the group stable again, and the
committed offsets reaching the log end (the periodic commits, while the group runs: the mock
refuses commits during a rebalance, which the members' parallel close starts)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from kafka_sticky_plugin.groups.analysis import analyse_deliveries
from kafka_sticky_plugin.groups.events import Partition
from kafka_sticky_plugin.groups.member_config import encode_sequence
from kafka_sticky_plugin.groups.runner import ConsumerGroupRunner
from testlab import rdkafka_mock
from testlab.checks import check_deliveries, check_exclusive_ownership

confluent_kafka = pytest.importorskip("confluent_kafka")

pytestmark = pytest.mark.timeout(180)

PARTITIONS = 6
ERRORS = ("ILLEGAL_GENERATION", "NOT_COORDINATOR", "REBALANCE_IN_PROGRESS")
APIS = ("JoinGroup", "SyncGroup", "Heartbeat", "OffsetCommit")


@pytest.fixture(scope="module")
def mock() -> Iterator[object]:
    try:
        cluster = rdkafka_mock.MockCluster(3)
    except rdkafka_mock.MockUnavailable as exc:
        pytest.skip(f"librdkafka's mock cluster is not reachable: {exc}")
    with cluster:
        yield cluster


class SteadyProducer:
    """Numbered records at a steady rate (confluent-kafka, acks=all), remembering where each
    acknowledged one landed."""

    def __init__(self, bootstrap: str, topic: str, rate_per_s: float = 100.0) -> None:
        self._producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "acks": "all"})
        self._topic = topic
        self._interval = 1.0 / rate_per_s
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self.acked: dict[Partition, set[int]] = {}
        self.failures: list[str] = []
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _ack(self, error: object, message: object) -> None:
        with self._lock:
            if error is not None:
                self.failures.append(str(error))
            else:
                key = (message.topic(), message.partition())  # type: ignore[attr-defined]
                self.acked.setdefault(key, set()).add(message.offset())  # type: ignore[attr-defined]

    def _run(self) -> None:
        sequence = 0
        while not self._stop.is_set():
            self._producer.produce(
                self._topic,
                key=f"k{sequence % 64}",
                value=encode_sequence(sequence),
                on_delivery=self._ack,
            )
            self._producer.poll(0)
            sequence += 1
            self._stop.wait(self._interval)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> dict[Partition, set[int]]:
        self._stop.set()
        self._thread.join(10)
        self._producer.flush(30)
        self._producer = None  # its threads end now, before the mock cluster does
        with self._lock:
            return {p: set(o) for p, o in self.acked.items()}


def _uncommitted(bootstrap: str, group_id: str, topic: str) -> dict[int, tuple[int, int]]:
    consumer = confluent_kafka.Consumer({"bootstrap.servers": bootstrap, "group.id": group_id})
    try:
        tps = [confluent_kafka.TopicPartition(topic, p) for p in range(PARTITIONS)]
        gaps = {}
        for tp in consumer.committed(tps, timeout=10):
            _, high = consumer.get_watermark_offsets(tp, timeout=10)
            committed = tp.offset if tp.offset >= 0 else 0
            if committed != high:
                gaps[tp.partition] = (committed, high)
        return gaps
    finally:
        consumer.close()


@pytest.mark.parametrize("api", APIS)
def test_injected_errors(mock: object, api: str) -> None:
    """The next three requests of ``api`` answered ILLEGAL_GENERATION, NOT_COORDINATOR and
    REBALANCE_IN_PROGRESS in turn (module docstring)."""
    cluster = mock
    topic = f"mock-{api}".lower()
    group_id = f"group-{api}".lower()
    cluster.create_topic(topic, PARTITIONS)  # type: ignore[attr-defined]
    bootstrap: str = cluster.bootstrap  # type: ignore[attr-defined]
    producer = SteadyProducer(bootstrap, topic)
    group = ConsumerGroupRunner(
        bootstrap, group_id, {topic: PARTITIONS}, ["cooperative-sticky"], client="confluent"
    )
    with group:
        producer.start()
        for name in ("m0", "m1", "m2"):
            group.start_member(name)
        group.wait_stable(timeout_s=60)
        cluster.push_errors(api, ERRORS)  # type: ignore[attr-defined]
        injected_at = time.monotonic()
        group.start_member("m3")
        time.sleep(3.0)  # heartbeats and periodic commits meet the errors
        group.wait_stable(timeout_s=60)
        acknowledged = producer.stop()
        assert group.wait_delivered(acknowledged, timeout_s=30)
        group.wait_stable(timeout_s=60)
        # The periodic commits reach the log end while the group runs (the mock refuses
        # commits during a rebalance, so the commits of a parallel close are not counted on).
        deadline = time.monotonic() + 20
        gaps = _uncommitted(bootstrap, group_id, topic)
        while gaps and time.monotonic() < deadline:
            time.sleep(0.5)
            gaps = _uncommitted(bootstrap, group_id, topic)
    events = group.log.events()
    errors = [f"{e.key}: {e.detail}" for e in events if e.kind == "error"]
    assert not errors, f"raised out of consume(): {errors}"
    check_exclusive_ownership(events, time.monotonic())
    report = analyse_deliveries(acknowledged, group.log.deliveries(), events)
    check_deliveries(report)
    assert not producer.failures
    assert not gaps, f"committed != log end: {gaps}"
    moved = sum(1 for e in events if e.t > injected_at and e.kind in ("revoked", "lost"))
    print(
        f"{api} {'/'.join(ERRORS)}: {report.acknowledged} acknowledged,"
        f" {report.duplicates} re-delivered, {moved} revoke/lost callbacks after the injection"
    )
