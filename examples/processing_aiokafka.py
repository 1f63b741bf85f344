"""Long processing with aiokafka that never drops the member out of its group.

Needs ``pip install "kafka-sticky-plugin[aiokafka]"`` and a broker (``python -m
kafka_sticky_plugin broker`` for one on 127.0.0.1:9092). Then::

    python examples/processing_aiokafka.py --produce 20 --work-ms 4000

Each record takes ``--work-ms`` of (asynchronous) work, longer than the consumer's
``max_poll_interval_ms`` (3000 here): a plain ``getmany`` loop that awaits the work would be
expelled from the group. :class:`~kafka_sticky_plugin.aiokafka.Processor` runs the work as
tasks, each partition's records in order, keeps polling with the partitions in work paused,
and commits only finished records, also from the revoke callback before a partition leaves.
Prints ``done`` per record, then ``consumed N records`` and the committed offsets.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import time
from typing import Any

from aiokafka import AIOKafkaConsumer
from consumer_aiokafka import create_and_fill  # the sibling example's topic filler

from kafka_sticky_plugin.aiokafka import CooperativeStickyAssignor, Processor, install_hooks


async def consume(args: argparse.Namespace) -> int:
    if args.produce:
        await create_and_fill(args.bootstrap, args.topic, args.partitions, args.produce)
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stopping.set)
    consumer = AIOKafkaConsumer(
        bootstrap_servers=args.bootstrap,
        group_id=args.group,
        enable_auto_commit=False,  # the processor commits finished records only
        auto_offset_reset="earliest",
        partition_assignment_strategy=[CooperativeStickyAssignor],
        session_timeout_ms=6000,
        heartbeat_interval_ms=1000,
        max_poll_interval_ms=3000,  # shorter than the work: the processor keeps polling
    )
    install_hooks(consumer)  # after creating the consumer, before start()
    consumed = 0

    async def work(record: Any) -> None:  # one task per partition at a time, in order
        nonlocal consumed
        await asyncio.sleep(args.work_ms / 1000)
        consumed += 1
        print(f"done {record.topic}[{record.partition}]@{record.offset}", flush=True)

    processor = Processor(consumer, work, max_in_flight=100, max_records=20, revoke_wait_s=2.0)
    consumer.subscribe([args.topic], listener=processor.listener())
    await consumer.start()
    started = time.monotonic()
    try:
        while not stopping.is_set():
            if args.max_records and consumed >= args.max_records:
                break
            if args.seconds and time.monotonic() - started >= args.seconds:
                break
            await processor.poll(timeout_ms=500)
        await processor.close()  # waits for running work, commits what finished
        committed = {tp: await consumer.committed(tp) for tp in sorted(consumer.assignment())}
    finally:
        await consumer.stop()
    print(f"consumed {consumed} records", flush=True)
    for tp, offset in committed.items():
        print(f"committed {tp.topic}[{tp.partition}]={offset}", flush=True)
    return 0


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
    return asyncio.run(consume(parser.parse_args()))


if __name__ == "__main__":
    raise SystemExit(main())
