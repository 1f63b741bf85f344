"""A complete aiokafka consumer: cooperative-sticky, commit on revoke, clean shutdown.

Needs ``pip install "kafka-sticky-plugin[aiokafka]"`` (aiokafka 0.13.x or 0.14.x) and a
broker; for one on 127.0.0.1:9092 run ``python -m kafka_sticky_plugin broker`` in another
terminal (``pip install "kafka-sticky-plugin[broker]"``). Then::

    python examples/consumer_aiokafka.py --produce 100   # create the topic, fill it, consume

Start it twice with the same ``--group`` to watch a cooperative rebalance: the first copy
keeps consuming its other partitions while the moved ones are committed and handed over.

The order that matters: the assignor in ``partition_assignment_strategy``, then
``install_hooks(consumer)``, then ``await consumer.start()`` (the hooks attach to the group
coordinator ``start()`` creates). The rebalance listener's callbacks are coroutines run by
the consumer's own task, so ``on_partitions_revoked`` can ``await consumer.commit(offsets)``
for the partitions that move (under cooperative-sticky only those are revoked, while still
assigned). A commit can fail when the group has moved on (a rebalance in progress, a
generation that is no longer current): the records after the last commit are then delivered
again to the partition's next owner (at-least-once), so the listener logs it and lets the
rebalance go on. Lost partitions (``on_partitions_lost``: session timeout, fencing, poll
interval exceeded) are never committed: another member may own them.

Prints one line per rebalance callback and, at the end, ``consumed N records`` and the
committed offsets. Stops after ``--max-records`` records or ``--seconds`` seconds, or on
Ctrl-C / SIGTERM (the loop finishes its batch, commits and leaves the group).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import time
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRebalanceListener, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import (
    CommitFailedError,
    IllegalGenerationError,
    KafkaError,
    RebalanceInProgressError,
    TopicAlreadyExistsError,
    UnknownMemberIdError,
)

from kafka_sticky_plugin.aiokafka import CooperativeStickyAssignor, install_hooks

log = logging.getLogger("example")

# Quick rebalances (the embedded broker holds every join for half the session timeout);
# valid on Apache Kafka too.
FAST_GROUP_SETTINGS: dict[str, Any] = {
    "session_timeout_ms": 6000,
    "heartbeat_interval_ms": 1000,
    "max_poll_interval_ms": 10000,
}
# The group has moved on: a commit now cannot succeed, the next owner re-reads from the last
# committed offset.
GROUP_MOVED_ON = (
    CommitFailedError,
    RebalanceInProgressError,
    IllegalGenerationError,
    UnknownMemberIdError,
)


class CommitOnRevoke(ConsumerRebalanceListener):  # type: ignore[misc]
    """Commits what was processed of each revoked partition before it leaves this member.

    ``processed`` maps each owned partition to the next offset to read (last processed + 1);
    the consume loop fills it, the callbacks (awaited by the consumer between fetches)
    empty it.
    """

    def __init__(self, consumer: AIOKafkaConsumer, processed: dict[TopicPartition, int]) -> None:
        self.consumer = consumer
        self.processed = processed

    async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        offsets = {tp: self.processed[tp] for tp in revoked if tp in self.processed}
        if offsets:
            try:
                await self.consumer.commit(offsets)
            except GROUP_MOVED_ON as exc:
                log.warning("revoked %s: the group moved on: %r", _names(offsets), exc)
            except KafkaError as exc:
                log.error("revoked %s not committed: %r", _names(offsets), exc)
            else:
                log.info("committed revoked %s", _names(offsets))
        for tp in revoked:
            self.processed.pop(tp, None)
        print(f"revoked {_names(revoked)}", flush=True)

    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        print(f"assigned {_names(assigned)}", flush=True)

    async def on_partitions_lost(self, lost: set[TopicPartition]) -> None:
        for tp in lost:  # never commit: another member may already own them
            self.processed.pop(tp, None)
        print(f"lost {_names(lost)}", flush=True)


def _names(partitions: Any) -> str:
    return ", ".join(f"{tp.topic}[{tp.partition}]" for tp in sorted(partitions)) or "nothing"


async def commit_processed(
    consumer: AIOKafkaConsumer, processed: dict[TopicPartition, int]
) -> None:
    """Commit what was processed of the partitions this member still owns."""
    owned = consumer.assignment()
    offsets = {tp: offset for tp, offset in processed.items() if tp in owned}
    if not offsets:
        return
    try:
        await consumer.commit(offsets)
    except GROUP_MOVED_ON as exc:
        log.warning("commit skipped, the group is rebalancing: %r", exc)


async def create_and_fill(bootstrap: str, topic: str, partitions: int, records: int) -> None:
    """Create ``topic`` if it does not exist, then write ``records`` numbered records."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, partitions, 1)])
    except TopicAlreadyExistsError:
        pass
    finally:
        await admin.close()
    # A topic created a moment ago may not have a leader yet: the producer retries.
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, retry_backoff_ms=200)
    await producer.start()
    try:
        for n in range(records):
            await producer.send(topic, key=str(n).encode(), value=str(n).encode())
        await producer.flush()
    finally:
        await producer.stop()


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
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        partition_assignment_strategy=[CooperativeStickyAssignor],
        **FAST_GROUP_SETTINGS,
    )
    install_hooks(consumer)  # after creating the consumer, before start()
    processed: dict[TopicPartition, int] = {}
    consumer.subscribe([args.topic], listener=CommitOnRevoke(consumer, processed))
    await consumer.start()
    consumed = 0
    started = time.monotonic()
    last_commit = started
    try:
        while not stopping.is_set():
            if args.max_records and consumed >= args.max_records:
                break
            if args.seconds and time.monotonic() - started >= args.seconds:
                break
            batches = await consumer.getmany(timeout_ms=500)
            for tp, records in batches.items():
                for record in records:
                    consumed += 1  # your processing goes here
                    processed[tp] = record.offset + 1
            if time.monotonic() - last_commit >= 1.0:
                await commit_processed(consumer, processed)
                last_commit = time.monotonic()
        await commit_processed(consumer, processed)
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
    parser.add_argument("--max-records", type=int, default=0, help="stop after N (0: never)")
    parser.add_argument("--seconds", type=float, default=0, help="stop after S (0: never)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(message)s")
    for name in ("example", "kafka_sticky_plugin"):  # one line per rebalance, with counts
        logging.getLogger(name).setLevel(logging.INFO)
    return asyncio.run(consume(args))


if __name__ == "__main__":
    raise SystemExit(main())
