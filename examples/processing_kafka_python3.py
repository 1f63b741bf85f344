"""Long processing with kafka-python 3.x that never drops the member out of its group.

Needs ``pip install "kafka-sticky-plugin[kafka-python]"`` and a broker (``python -m
kafka_sticky_plugin broker`` for one on 127.0.0.1:9092). Then::

    python examples/processing_kafka_python3.py --produce 20 --work-ms 4000

Each record takes ``--work-ms`` of work, longer than the consumer's ``max_poll_interval_ms``
(3000 here): a plain poll loop would be expelled from the group and loop through rebalances.
:class:`~kafka_sticky_plugin.kafka_python.Processor` runs the work on a thread pool, each
partition's records in order, and keeps polling with the partitions in work paused; it
commits only finished records, and from the revoke callback before a partition leaves (start
a second copy with the same ``--group`` to watch the hand-over). Prints ``done`` per record,
one line per rebalance callback, then ``consumed N records`` and the committed offsets.
"""

from __future__ import annotations

import argparse
import logging
import signal
import time
from typing import Any

from consumer_kafka_python3 import create_and_fill  # the sibling example's topic filler
from kafka import KafkaConsumer

from kafka_sticky_plugin.kafka_python import CooperativeStickyAssignor, Processor, install_hooks


class Printing:
    """Your rebalance listener (optional): called after the processor's own work."""

    def on_partitions_revoked(self, revoked: set[Any]) -> None:
        print(f"revoked {sorted(tp.partition for tp in revoked)}", flush=True)

    def on_partitions_assigned(self, assigned: set[Any]) -> None:
        print(f"assigned {sorted(tp.partition for tp in assigned)}", flush=True)

    def on_partitions_lost(self, lost: set[Any]) -> None:
        print(f"lost {sorted(tp.partition for tp in lost)}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bootstrap", default="127.0.0.1:9092")
    parser.add_argument("--topic", default="orders")
    parser.add_argument("--group", default="billing")
    parser.add_argument("--partitions", type=int, default=6, help="when creating the topic")
    parser.add_argument("--produce", type=int, default=0, help="write N records first")
    parser.add_argument("--work-ms", type=int, default=4000, help="work per record")
    parser.add_argument("--max-records", type=int, default=0, help="stop after N (0: never)")
    parser.add_argument("--seconds", type=float, default=0, help="stop after S (0: never)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(message)s")
    if args.produce:
        create_and_fill(args.bootstrap, args.topic, args.partitions, args.produce)
    stopping = False

    def stop(_signum: int, _frame: Any) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    consumer = KafkaConsumer(
        bootstrap_servers=args.bootstrap,
        group_id=args.group,
        enable_auto_commit=False,  # the processor commits finished records only
        auto_offset_reset="earliest",
        partition_assignment_strategy=[CooperativeStickyAssignor],
        session_timeout_ms=6000,
        heartbeat_interval_ms=1000,
        max_poll_interval_ms=3000,  # shorter than the work: the processor keeps polling
        max_poll_records=20,
    )
    install_hooks(consumer)
    consumed = 0

    def work(record: Any) -> None:  # runs on the pool; one record of a partition at a time
        nonlocal consumed
        time.sleep(args.work_ms / 1000)
        consumed += 1
        print(f"done {record.topic}[{record.partition}]@{record.offset}", flush=True)

    processor = Processor(consumer, work, workers=8, max_in_flight=100, revoke_wait_s=2.0)
    consumer.subscribe([args.topic], listener=processor.listener(Printing()))
    started = time.monotonic()
    try:
        while not stopping:
            if args.max_records and consumed >= args.max_records:
                break
            if args.seconds and time.monotonic() - started >= args.seconds:
                break
            processor.poll(timeout_ms=500)
        processor.close()  # waits for running work, commits what finished
        committed = {tp: consumer.committed(tp) for tp in sorted(consumer.assignment())}
    finally:
        consumer.close()
    print(f"consumed {consumed} records", flush=True)
    for tp, offset in committed.items():
        print(f"committed {tp.topic}[{tp.partition}]={offset}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
