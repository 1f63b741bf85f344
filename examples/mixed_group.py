"""A consumer group mixing kafka-python and confluent-kafka members, printing who owns what.

kafka-python members run this package's ``CooperativeStickyAssignor``; confluent-kafka
(librdkafka) members run librdkafka's own ``cooperative-sticky`` and are subscribed with
:func:`kafka_sticky_plugin.confluent.subscribe`, so both kinds use the same listener API
(``on_partitions_revoked`` / ``on_partitions_assigned`` / ``on_partitions_lost``) and commit
the positions of revoked partitions before giving them up. Both strategies speak the same
wire format (consumer protocol with owned partitions and generation), so whichever member
leads, the other kind's members keep their partitions and none is owned twice.

Four members join one after the other (scale out), then the second one leaves. After every
rebalance callback the script prints the whole group's ownership, as each member sees it.

Run on the embedded broker (started and stopped by the script)::

    .venv/bin/python examples/mixed_group.py                     # a kafka-python member leads
    .venv/bin/python examples/mixed_group.py --leader confluent  # a librdkafka member leads

or on a running cluster with ``--bootstrap 127.0.0.1:9092``. Takes about a minute: on the
embedded broker every JoinGroup is held for half the session timeout.
"""

from __future__ import annotations

import argparse
import contextlib
import threading
import time
from collections.abc import Iterator

import confluent_kafka
from confluent_kafka.admin import AdminClient, NewTopic
from kafka import KafkaConsumer
from kafka.consumer.subscription_state import ConsumerRebalanceListener

from kafka_sticky_plugin import CooperativeStickyAssignor
from kafka_sticky_plugin.confluent import TopicPartition, create_consumer, subscribe

PARTITIONS = 8
# Short group timeouts keep rebalances quick (and are valid on Apache Kafka too).
SESSION_MS, HEARTBEAT_MS, MAX_POLL_MS = 6000, 1000, 10000


class Board:
    """The group's ownership as its members report it; prints a line after every change."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._owned: dict[str, set[int]] = {}
        self._start = time.monotonic()

    def update(self, member: str, what: str, partitions: set[TopicPartition]) -> None:
        numbers = {tp.partition for tp in partitions}
        with self._lock:
            mine = self._owned.setdefault(member, set())
            if what == "assigned":
                mine |= numbers
            else:
                mine -= numbers
            view = "  ".join(f"{m}={sorted(p)}" for m, p in sorted(self._owned.items()))
            elapsed = time.monotonic() - self._start
        print(f"{elapsed:6.1f}s {member} {what} {sorted(numbers)}\n        group: {view}")

    def leave(self, member: str) -> None:
        with self._lock:
            self._owned.pop(member, None)

    def settled(self, members: list[str]) -> bool:
        """Every partition owned by exactly one of ``members``, loads within one."""
        with self._lock:
            loads = [self._owned.get(m, set()) for m in members]
        owned = sorted(p for parts in loads for p in parts)
        sizes = [len(parts) for parts in loads]
        return owned == list(range(PARTITIONS)) and max(sizes) - min(sizes) <= 1


class BoardListener(ConsumerRebalanceListener):  # type: ignore[misc]
    """One kafka-python rebalance listener class, used unchanged by both clients."""

    def __init__(self, member: str, board: Board) -> None:
        self.member, self.board = member, board

    def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        self.board.update(self.member, "revoked", revoked)

    def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        self.board.update(self.member, "assigned", assigned)

    def on_partitions_lost(self, lost: set[TopicPartition]) -> None:
        self.board.update(self.member, "lost", lost)


class Member(threading.Thread):
    """One member polling in its own thread until :meth:`stop`; reports to the board."""

    def __init__(self, name: str, kind: str, bootstrap: str, group: str, topic: str, board: Board):
        super().__init__(name=name, daemon=True)
        self.member, self.kind = name, kind
        self.bootstrap, self.group, self.topic, self.board = bootstrap, group, topic, board
        self.listener = BoardListener(name, board)
        self._stop_flag = threading.Event()

    def run(self) -> None:
        if self.kind == "confluent":
            self._run_confluent()
        else:
            self._run_kafka_python()
        self.board.leave(self.member)

    def _run_confluent(self) -> None:
        consumer = create_consumer(
            {
                "bootstrap.servers": self.bootstrap,
                "group.id": self.group,
                "partition.assignment.strategy": "cooperative-sticky",
                "session.timeout.ms": SESSION_MS,
                "heartbeat.interval.ms": HEARTBEAT_MS,
                "max.poll.interval.ms": MAX_POLL_MS,
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
            }
        )
        subscribe(consumer, [self.topic], self.listener, commit_on_revoke=True)
        try:
            while not self._stop_flag.is_set():
                consumer.poll(0.2)
        finally:
            consumer.close()  # revokes (and commits) before leaving the group

    def _run_kafka_python(self) -> None:
        consumer = KafkaConsumer(
            bootstrap_servers=self.bootstrap,
            group_id=self.group,
            session_timeout_ms=SESSION_MS,
            heartbeat_interval_ms=HEARTBEAT_MS,
            max_poll_interval_ms=MAX_POLL_MS,
            auto_offset_reset="earliest",
            partition_assignment_strategy=[CooperativeStickyAssignor],
        )
        consumer.subscribe([self.topic], listener=self.listener)
        try:
            while not self._stop_flag.is_set():
                consumer.poll(timeout_ms=200)
        finally:
            consumer.close()

    def stop(self) -> None:
        self._stop_flag.set()
        self.join(timeout=30)


@contextlib.contextmanager
def bootstrap_servers(given: str | None) -> Iterator[str]:
    """``given``, or a fresh embedded broker on 127.0.0.1 for the duration of the block."""
    if given:
        yield given
        return
    from kafka_sticky_plugin.brokers.embedded import embedded_broker

    with embedded_broker() as broker:
        yield broker.bootstrap


def wait_settled(board: Board, members: list[str], what: str, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not board.settled(members):
        if time.monotonic() > deadline:
            raise SystemExit(f"the group did not settle after {what} within {timeout_s:.0f}s")
        time.sleep(0.2)
    time.sleep(1.0)  # let a follow-up cooperative round (if any) finish printing
    print(f"-- settled after {what}")


def run(bootstrap: str, leader: str) -> None:
    other = "confluent" if leader == "kafka-python" else "kafka-python"
    suffix = time.monotonic_ns()
    topic, group = f"mixed-{suffix}", f"mixed-group-{suffix}"
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(topic, PARTITIONS, 1)]).values():
        future.result(15)
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap})
    for n in range(400):
        producer.produce(topic, key=f"key-{n % 31}".encode(), value=str(n).encode())
    producer.flush(15)

    board = Board()
    kinds = [leader, other, leader, other]
    members: list[Member] = []
    for i, kind in enumerate(kinds, start=1):
        name = f"{'kp' if kind == 'kafka-python' else 'ck'}{i}"
        member = Member(name, kind, bootstrap, group, topic, board)
        members.append(member)
        print(f"-- {name} ({kind}) joins" + (" and leads" if i == 1 else ""))
        member.start()
        wait_settled(board, [m.member for m in members], f"{name} joined")
    leaving = members.pop(1)
    print(f"-- {leaving.member} ({leaving.kind}) leaves")
    leaving.stop()
    wait_settled(board, [m.member for m in members], f"{leaving.member} left")
    for member in members:
        member.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--bootstrap", help="a running cluster (default: embedded broker)")
    parser.add_argument("--leader", choices=["kafka-python", "confluent"], default="kafka-python")
    args = parser.parse_args(argv)
    with bootstrap_servers(args.bootstrap) as bootstrap:
        run(bootstrap, args.leader)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
