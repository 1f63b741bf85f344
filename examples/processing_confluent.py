"""Long processing with confluent-kafka that never drops the member out of its group.

Needs ``pip install "kafka-sticky-plugin[confluent]"`` and a broker (``python -m
kafka_sticky_plugin broker`` for one on 127.0.0.1:9092). Then::

    python examples/processing_confluent.py --produce 20 --work-ms 8000

Each record takes ``--work-ms`` of work, longer than ``max.poll.interval.ms`` (6000 here;
librdkafka wants it at least the session timeout): a plain poll loop would be expelled.
:class:`~kafka_sticky_plugin.confluent.Processor` runs the work on a thread pool, each
partition's messages in order, keeps polling with the partitions in work paused, and commits
only finished messages, also from the revoke callback before a partition leaves. Prints
``done`` per message, one line per rebalance callback, then ``consumed N records`` and the
committed offsets.
"""

from __future__ import annotations

import argparse
import signal
import time
from typing import Any

from consumer_confluent import PrintingListener, create_and_fill  # the sibling example's

from kafka_sticky_plugin.confluent import Processor, create_consumer, subscribe


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bootstrap", default="127.0.0.1:9092")
    parser.add_argument("--topic", default="orders")
    parser.add_argument("--group", default="billing")
    parser.add_argument("--partitions", type=int, default=6, help="when creating the topic")
    parser.add_argument("--produce", type=int, default=0, help="write N records first")
    parser.add_argument("--work-ms", type=int, default=8000, help="work per message")
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
            "enable.auto.commit": False,  # the processor commits finished messages only
            "session.timeout.ms": 6000,
            "heartbeat.interval.ms": 1000,
            "max.poll.interval.ms": 6000,  # shorter than the work: the processor keeps polling
        }
    )
    consumed = 0

    def work(message: Any) -> None:  # runs on the pool; one message of a partition at a time
        nonlocal consumed
        time.sleep(args.work_ms / 1000)
        consumed += 1
        print(f"done {message.topic()}[{message.partition()}]@{message.offset()}", flush=True)

    processor = Processor(consumer, work, workers=8, max_in_flight=100, revoke_wait_s=2.0)
    subscribe(consumer, [args.topic], processor.listener(PrintingListener()))
    started = time.monotonic()
    try:
        while not stopping:
            if args.max_records and consumed >= args.max_records:
                break
            if args.seconds and time.monotonic() - started >= args.seconds:
                break
            processor.poll(0.5)
        processor.close()  # waits for running work, commits what finished
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
