"""Throughput of the processing helpers against a plain poll loop, on trivial work.

One topic of ``--partitions`` partitions holding ``--records`` small records on a broker of
our own (``--broker kafka``: Apache Kafka from Maven's jars; ``embedded``: Tansu; both on
loopback). Each column consumes the whole topic once under a fresh group, with trivial work
per record (a counter), and commits at the end:

- ``plain``: the client's own poll loop (commit every second, as the examples do);
- ``processor``: the same consumer through the client's ``Processor`` (kafka-python and
  confluent: a thread pool of ``--workers``; aiokafka: tasks), one record of a partition in
  work at a time.

Timed from the start of the first poll that returns records (the group join is not timed)
to the end of the final commit. Prints one line per client: records/s of each and
``processor / plain``. The figure is the helper's overhead per record (hand-over to the pool,
per-partition order, pause/resume); work that takes real time is what the helper is for, and
there its cost is negligible. Timings on a shared machine vary: run it a few times.
``make bench-processing`` runs it.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kafka_sticky_plugin.groups.admin import create_topic, unique_name
from testlab.brokers import open_broker


def _fill(bootstrap: str, topic: str, records: int) -> None:
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=20, batch_size=65536)
    for n in range(records):
        producer.send(topic, key=str(n).encode(), value=b"x" * 100)
    producer.flush(60)
    producer.close()


def _kafka_python(bootstrap: str, topic: str, records: int, helper: bool, workers: int) -> float:
    from kafka import KafkaConsumer

    from kafka_sticky_plugin.kafka_python import CooperativeStickyAssignor, Processor, install_hooks

    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=unique_name("bench-kp"),
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        partition_assignment_strategy=[CooperativeStickyAssignor],
    )
    install_hooks(consumer)
    done = [0]

    def work(_record: Any) -> None:
        done[0] += 1

    try:
        if helper:
            processor = Processor(consumer, work, workers=workers, max_in_flight=2000)
            consumer.subscribe([topic], listener=processor.listener())
            return _timed(records, done, lambda: processor.poll(timeout_ms=100), processor.close)
        consumer.subscribe([topic])
        last = [time.monotonic()]

        def turn() -> int:
            got = 0
            for batch in consumer.poll(timeout_ms=100).values():
                got += len(batch)
                for record in batch:
                    work(record)
            if time.monotonic() - last[0] >= 1.0:
                consumer.commit()
                last[0] = time.monotonic()
            return got

        return _timed(records, done, turn, consumer.commit)
    finally:
        consumer.close()


def _confluent(bootstrap: str, topic: str, records: int, helper: bool, workers: int) -> float:
    from kafka_sticky_plugin.confluent import Processor, create_consumer, subscribe

    consumer = create_consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": unique_name("bench-ck"),
            "partition.assignment.strategy": "cooperative-sticky",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    done = [0]

    def work(_message: Any) -> None:
        done[0] += 1

    class _Quiet:
        def on_partitions_revoked(self, revoked: set[Any]) -> None: ...
        def on_partitions_assigned(self, assigned: set[Any]) -> None: ...

    try:
        if helper:
            processor = Processor(consumer, work, workers=workers, max_in_flight=2000, batch=500)
            subscribe(consumer, [topic], processor.listener())
            return _timed(records, done, lambda: processor.poll(0.1), processor.close)
        subscribe(consumer, [topic], _Quiet())
        last = [time.monotonic()]

        def turn() -> int:
            messages = consumer.consume(num_messages=500, timeout=0.1)
            for message in messages:
                if message.error() is None:
                    work(message)
            if time.monotonic() - last[0] >= 1.0:
                consumer.commit(asynchronous=False)
                last[0] = time.monotonic()
            return len(messages)

        return _timed(records, done, turn, lambda: consumer.commit(asynchronous=False))
    finally:
        consumer.close()


def _aiokafka(bootstrap: str, topic: str, records: int, helper: bool, workers: int) -> float:
    return asyncio.run(_aiokafka_run(bootstrap, topic, records, helper))


async def _aiokafka_run(bootstrap: str, topic: str, records: int, helper: bool) -> float:
    from aiokafka import AIOKafkaConsumer

    from kafka_sticky_plugin.aiokafka import CooperativeStickyAssignor, Processor, install_hooks

    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=unique_name("bench-aio"),
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        partition_assignment_strategy=[CooperativeStickyAssignor],
    )
    install_hooks(consumer)
    done = [0]

    async def work(_record: Any) -> None:
        done[0] += 1

    processor = Processor(consumer, work, max_in_flight=2000)
    consumer.subscribe([topic], listener=processor.listener() if helper else None)
    await consumer.start()
    try:
        started = None
        last = time.monotonic()
        while done[0] < records:
            before = time.monotonic()
            got = 0
            if helper:
                got = await processor.poll(timeout_ms=100)
            else:
                for batch in (await consumer.getmany(timeout_ms=100)).values():
                    got += len(batch)
                    for record in batch:
                        await work(record)
                if time.monotonic() - last >= 1.0:
                    await consumer.commit()
                    last = time.monotonic()
            if started is None and got:
                started = before
        await (processor.close() if helper else consumer.commit())
        return records / (time.monotonic() - (started or time.monotonic()))
    finally:
        await consumer.stop()


def _timed(
    records: int, done: list[int], turn: Callable[[], object], end: Callable[[], object]
) -> float:
    """Records/s from the first record done to the end of the final commit."""
    started = None
    while done[0] < records:
        turn()
        if started is None and done[0]:
            started = time.monotonic()
    end()
    return (records - 1) / (time.monotonic() - (started or time.monotonic()))


CLIENTS = {"kafka-python": _kafka_python, "confluent": _confluent, "aiokafka": _aiokafka}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--broker", default="kafka", choices=["kafka", "embedded"])
    parser.add_argument("--records", type=int, default=20000)
    parser.add_argument("--partitions", type=int, default=6)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--clients", default=",".join(CLIENTS))
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory() as logs,
        open_broker(args.broker, log_dir=Path(logs)) as broker,
    ):
        topic = create_topic(broker.bootstrap, unique_name("bench-processing"), args.partitions)
        _fill(broker.bootstrap, topic, args.records)
        shape = f"{args.records} records, {args.partitions} partitions"
        print(f"{shape}, trivial work, broker {args.broker}")
        print(f"{'client':<14}{'plain rec/s':>14}{'processor rec/s':>18}{'processor/plain':>18}")
        for name in args.clients.split(","):
            run = CLIENTS[name]
            plain = run(broker.bootstrap, topic, args.records, False, args.workers)
            helper = run(broker.bootstrap, topic, args.records, True, args.workers)
            print(f"{name:<14}{plain:>14.0f}{helper:>18.0f}{helper / plain:>18.2f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
