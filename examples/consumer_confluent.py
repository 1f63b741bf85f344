"""A complete confluent-kafka consumer: cooperative-sticky, commit on revoke, clean shutdown.

Needs ``pip install "kafka-sticky-plugin[confluent]"`` and a broker; for one on
127.0.0.1:9092 run ``python -m kafka_sticky_plugin broker`` in another terminal
(``pip install "kafka-sticky-plugin[broker]"``). Then::

    python examples/consumer_confluent.py --produce 100      # create the topic, fill it, consume

librdkafka runs its own ``cooperative-sticky`` (a Python assignor cannot run inside it).
:func:`kafka_sticky_plugin.confluent.create_consumer` checks the configuration first (a
wrong strategy name, a heartbeat not shorter than the session, ... are refused with the
fix); :func:`~kafka_sticky_plugin.confluent.subscribe` takes a kafka-python-style listener,
makes the incremental assign/unassign calls librdkafka demands and, with
``commit_on_revoke=True``, commits the positions of revoked partitions synchronously after
``on_partitions_revoked`` returns and before they leave. Lost partitions are never committed.
The committed positions are what ``poll()`` has returned, so finish a record before the next
``poll()`` (as this loop does); auto-commit is off and the loop commits every second.

Prints one line per rebalance callback and, at the end, ``consumed N records`` and the
committed offsets. Stops after ``--max-records`` records or ``--seconds`` seconds, or on
Ctrl-C / SIGTERM (commits what was processed, then leaves the group).
"""

from __future__ import annotations

import argparse
import signal
import time
from typing import Any

import confluent_kafka
from confluent_kafka.admin import AdminClient, NewTopic

from kafka_sticky_plugin.confluent import TopicPartition, create_consumer, subscribe


class PrintingListener:
    """Prints each callback; the commit on revoke is done by subscribe(commit_on_revoke=True)."""

    def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        print(f"revoked {_names(revoked)}", flush=True)

    def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        print(f"assigned {_names(assigned)}", flush=True)

    def on_partitions_lost(self, lost: set[TopicPartition]) -> None:
        print(f"lost {_names(lost)}", flush=True)


def _names(partitions: Any) -> str:
    return ", ".join(f"{tp.topic}[{tp.partition}]" for tp in sorted(partitions)) or "nothing"


def create_and_fill(bootstrap: str, topic: str, partitions: int, records: int) -> None:
    """Create ``topic`` if it does not exist, then write ``records`` numbered records."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(topic, partitions, 1)]).values():
        try:
            future.result(timeout=15)
        except confluent_kafka.KafkaException as exc:
            if exc.args[0].code() != confluent_kafka.KafkaError.TOPIC_ALREADY_EXISTS:
                raise
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap})
    for n in range(records):
        producer.produce(topic, key=str(n), value=str(n))
    producer.flush(15)


def commit(consumer: confluent_kafka.Consumer) -> None:
    """Commit the positions of the current assignment (synchronously)."""
    try:
        consumer.commit(asynchronous=False)
    except confluent_kafka.KafkaException as exc:
        code = exc.args[0].code()
        if code != confluent_kafka.KafkaError._NO_OFFSET:  # nothing new: not a problem
            print(f"commit skipped (the group may be rebalancing): {exc}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bootstrap", default="127.0.0.1:9092")
    parser.add_argument("--topic", default="orders")
    parser.add_argument("--group", default="billing")
    parser.add_argument("--partitions", type=int, default=6, help="when creating the topic")
    parser.add_argument("--produce", type=int, default=0, help="write N records first")
    parser.add_argument("--max-records", type=int, default=0, help="stop after N (0: never)")
    parser.add_argument("--seconds", type=float, default=0, help="stop after S (0: never)")
    args = parser.parse_args()
    if args.produce:
        create_and_fill(args.bootstrap, args.topic, args.partitions, args.produce)

    stopping = False

    def stop(_signum: int, _frame: Any) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)

    consumer = create_consumer(
        {
            "bootstrap.servers": args.bootstrap,
            "group.id": args.group,
            "partition.assignment.strategy": "cooperative-sticky",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            # Quick rebalances (the embedded broker holds every join for half the session
            # timeout); valid on Apache Kafka too.
            "session.timeout.ms": 6000,
            "heartbeat.interval.ms": 1000,
            "max.poll.interval.ms": 10000,
        }
    )
    subscribe(consumer, [args.topic], PrintingListener(), commit_on_revoke=True)
    consumed = 0
    started = time.monotonic()
    last_commit = started
    try:
        while not stopping:
            if args.max_records and consumed >= args.max_records:
                break
            if args.seconds and time.monotonic() - started >= args.seconds:
                break
            message = consumer.poll(0.5)
            if message is not None and message.error() is not None:
                print(f"consumer error: {message.error()}", flush=True)
            elif message is not None:
                consumed += 1  # your processing goes here
            if time.monotonic() - last_commit >= 1.0:
                commit(consumer)
                last_commit = time.monotonic()
        commit(consumer)
        owned = consumer.assignment()
        committed = consumer.committed(owned, timeout=10) if owned else []
    finally:
        consumer.close()
    print(f"consumed {consumed} records", flush=True)
    for tp in sorted(committed, key=lambda t: (t.topic, t.partition)):
        print(f"committed {tp.topic}[{tp.partition}]={tp.offset}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
