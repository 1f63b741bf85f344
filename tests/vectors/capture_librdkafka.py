"""Capture the JoinGroup metadata a real librdkafka (confluent-kafka) member sends.

How: start the embedded Tansu broker on 127.0.0.1, create topic ``t1`` (6 partitions), and
for each protocol librdkafka offers that shares the consumer protocol with us
(``cooperative-sticky``, ``range``; librdkafka has no eager ``sticky``) form one group in which a
kafka-python 3.0.12 consumer joins first (so Tansu picks its protocol, see BROKER_NOTES) and
is the leader, then one confluent-kafka consumer joins; later a second kafka-python member
joins so the librdkafka member rejoins with state (owned partitions, generation). The
leader's coordinator is wrapped *in this script only* to record every member's raw metadata
bytes before kafka-python decodes them. Output: JSON lines
``{"protocol", "round", "client", "hex"}`` on stdout.

Run: ``.venv/bin/python tests/vectors/capture_librdkafka.py > tests/vectors/librdkafka.jsonl``
"""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import Any

import confluent_kafka
from kafka import KafkaAdminClient, KafkaConsumer
from kafka.admin import NewTopic
from kafka.coordinator.assignors.range import RangePartitionAssignor
from kafka.coordinator.consumer import ConsumerCoordinator

from kafka_sticky_plugin import CooperativeStickyAssignor
from kafka_sticky_plugin.brokers.embedded import embedded_broker

FAST = {"session_timeout_ms": 6000, "heartbeat_interval_ms": 1000, "max_poll_interval_ms": 10000}
RECORDS: list[dict[str, Any]] = []
LOCK = threading.Lock()
ROUND = [0]

_original = ConsumerCoordinator._perform_assignment


def _recording(self: Any, leader_id: str, protocol_name: str, members: Any) -> Any:
    with LOCK:
        ROUND[0] += 1
        for member in members:
            raw = member.metadata
            if isinstance(raw, (bytes, bytearray)):
                client = "librdkafka" if member.member_id.startswith("rdkafka") else "kafka-python"
                RECORDS.append(
                    {
                        "protocol": protocol_name,
                        "round": ROUND[0],
                        "member_id": member.member_id,
                        "client": client,
                        "hex": bytes(raw).hex(),
                    }
                )
    return _original(self, leader_id, protocol_name, members)


def _poll_kp(consumer: KafkaConsumer, stop: threading.Event) -> None:
    while not stop.is_set():
        consumer.poll(timeout_ms=200)


def capture(bootstrap: str, protocol: str, strategy: Any) -> None:
    group = f"capture-{protocol}"
    stop = threading.Event()
    leader = KafkaConsumer(
        "t1",
        bootstrap_servers=bootstrap,
        group_id=group,
        client_id="kp-leader",
        partition_assignment_strategy=[strategy()],
        **FAST,
    )
    threads = [threading.Thread(target=_poll_kp, args=(leader, stop), daemon=True)]
    threads[0].start()
    time.sleep(4)
    rd = confluent_kafka.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "client.id": "rdkafka-member",
            "partition.assignment.strategy": protocol,
            "session.timeout.ms": 6000,
            "heartbeat.interval.ms": 1000,
            "max.poll.interval.ms": 10000,
            "broker.address.family": "v4",
        }
    )
    rd.subscribe(["t1"])
    deadline = time.time() + 12
    while time.time() < deadline:
        rd.poll(0.2)
    second = KafkaConsumer(
        "t1",
        bootstrap_servers=bootstrap,
        group_id=group,
        client_id="kp-second",
        partition_assignment_strategy=[strategy()],
        **FAST,
    )
    threads.append(threading.Thread(target=_poll_kp, args=(second, stop), daemon=True))
    threads[1].start()
    deadline = time.time() + 14
    while time.time() < deadline:
        rd.poll(0.2)
    print(f"{protocol}: rd assignment {rd.assignment()}", file=sys.stderr)
    rd.close()
    stop.set()
    for thread in threads:
        thread.join()
    leader.close()
    second.close()


def main() -> None:
    # Wrapped only while this script runs (never on import).
    ConsumerCoordinator._perform_assignment = _recording  # type: ignore[method-assign]
    with embedded_broker() as broker:
        admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
        admin.create_topics([NewTopic("t1", num_partitions=6, replication_factor=1)])
        admin.close()
        print(f"librdkafka {confluent_kafka.libversion()[0]}", file=sys.stderr)
        for protocol, strategy in (
            ("cooperative-sticky", CooperativeStickyAssignor),
            ("range", RangePartitionAssignor),
        ):
            capture(broker.bootstrap, protocol, strategy)
    for record in RECORDS:
        print(json.dumps(record))


if __name__ == "__main__":
    main()
