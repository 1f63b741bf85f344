"""A small consumer-group harness that runs on every supported kafka-python version.

Each :class:`Member` is one hooked ``KafkaConsumer`` polling in its own thread and recording,
with a shared monotonic clock, every rebalance callback (``assigned``, ``revoked``, ``lost``)
and every delivered record. Commands (pause, change subscription, stop) run *in* the poll
thread, since a ``KafkaConsumer`` is not thread-safe. The shared project harness in
``kafka_sticky_plugin.brokers`` is built around kafka-python 3.x listeners and admin calls,
so the hooks' version matrix uses this one.

:func:`consumed_by_two_live_members` is the ownership check of KIP-341's debug-pause
scenario; see its docstring.
"""

from __future__ import annotations

import bisect
import queue
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from kafka import ConsumerRebalanceListener, KafkaConsumer, KafkaProducer
from kafka.admin import KafkaAdminClient, NewTopic

from kafka_sticky_plugin.hooks import install_hooks

GROUP_SETTINGS: dict[str, Any] = {
    "session_timeout_ms": 6000,
    "heartbeat_interval_ms": 1000,
    "max_poll_interval_ms": 10000,
    "auto_offset_reset": "earliest",
}

Partition = tuple[str, int]


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def create_topics(
    bootstrap: str,
    partitions: dict[str, int],
    timeout_s: float = 15.0,
    settings: dict[str, Any] | None = None,
) -> None:
    """Create topics and wait until a consumer's metadata shows every partition (``settings``:
    more client keywords, such as a secured listener's, for both clients)."""
    admin = KafkaAdminClient(
        bootstrap_servers=bootstrap, request_timeout_ms=15000, **(settings or {})
    )
    try:
        admin.create_topics([NewTopic(name, count, 1) for name, count in partitions.items()])
    finally:
        admin.close()
    probe = KafkaConsumer(bootstrap_servers=bootstrap, **(settings or {}))
    try:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            counts = {name: len(probe.partitions_for_topic(name) or ()) for name in partitions}
            if counts == partitions:
                return
            probe._client.cluster.request_update()
            time.sleep(0.2)
        raise TimeoutError(f"topics not visible: wanted {partitions}, saw {counts}")
    finally:
        probe.close()


@dataclass(frozen=True)
class Event:
    t: float
    member: str
    kind: str  # assigned | revoked | lost
    partitions: frozenset[Partition]


@dataclass(frozen=True)
class Delivery:
    t: float
    member: str
    partition: Partition
    offset: int


class _Listener(ConsumerRebalanceListener):  # type: ignore[misc]
    def __init__(self, member: Member) -> None:
        self._member = member

    def on_partitions_revoked(self, revoked: Any) -> None:
        self._member._event("revoked", revoked)

    def on_partitions_assigned(self, assigned: Any) -> None:
        self._member._event("assigned", assigned)

    def on_partitions_lost(self, lost: Any) -> None:
        self._member._event("lost", lost)


@dataclass
class Member:
    """One consumer in a thread. ``owned`` is its own view, changed only by its callbacks."""

    name: str
    bootstrap: str
    group: str
    topics: list[str]
    strategy: list[Any]
    hooks: bool = True
    poll_ms: int = 100
    work_s: float = 0.0
    #: More ``KafkaConsumer`` keywords (a secured listener's settings, for one).
    settings: dict[str, Any] = field(default_factory=dict)
    #: Errors ``poll()`` may raise without ending the member (say, a refused group): each is
    #: recorded in ``poll_errors`` (time, class name) and polling goes on.
    tolerate: tuple[type[BaseException], ...] = ()
    poll_errors: list[tuple[float, str]] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    deliveries: list[Delivery] = field(default_factory=list)
    owned: set[Partition] = field(default_factory=set)
    notes: dict[str, Any] = field(default_factory=dict)
    error: BaseException | None = None

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._commands: queue.Queue[Callable[[Any], None]] = queue.Queue()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"member-{self.name}", daemon=True)

    # -- recording ---------------------------------------------------------------------
    def _event(self, kind: str, partitions: Iterable[Any]) -> None:
        parts = frozenset((tp.topic, tp.partition) for tp in partitions)
        with self._lock:
            self.events.append(Event(time.monotonic(), self.name, kind, parts))
            if kind == "assigned":
                self.owned |= parts
            else:
                self.owned -= parts

    def snapshot(self) -> frozenset[Partition]:
        with self._lock:
            return frozenset(self.owned)

    def kinds(self) -> list[str]:
        with self._lock:
            return [e.kind for e in self.events]

    # -- lifecycle ---------------------------------------------------------------------
    def start(self) -> Member:
        self._thread.start()
        return self

    def _run(self) -> None:
        try:
            consumer = KafkaConsumer(
                bootstrap_servers=self.bootstrap,
                group_id=self.group,
                partition_assignment_strategy=self.strategy,
                client_id=f"{self.group}-{self.name}",
                **GROUP_SETTINGS,
                **self.settings,
            )
            if self.hooks:
                install_hooks(consumer)
            consumer.subscribe(self.topics, listener=_Listener(self))
            try:
                while not self._stop.is_set():
                    while not self._commands.empty():
                        self._commands.get_nowait()(consumer)
                    try:
                        batch = consumer.poll(timeout_ms=self.poll_ms)
                    except self.tolerate as exc:
                        with self._lock:
                            self.poll_errors.append((time.monotonic(), type(exc).__name__))
                        continue
                    now = time.monotonic()
                    with self._lock:
                        for tp, records in batch.items():
                            for record in records:
                                self.deliveries.append(
                                    Delivery(
                                        now, self.name, (tp.topic, tp.partition), record.offset
                                    )
                                )
                    if self.work_s:
                        time.sleep(self.work_s)
            finally:
                consumer.close()
        except BaseException as exc:  # surfaced by stop()/check()
            self.error = exc

    def pause(self, seconds: float) -> None:
        """Stop polling for ``seconds`` (KIP-341's debugger pause), from the poll thread."""
        self._commands.put(lambda _consumer: time.sleep(seconds))

    def resubscribe(self, topics: list[str]) -> None:
        """Change the subscription; records the assignment right after the call."""

        def change(consumer: Any) -> None:
            consumer.subscribe(topics, listener=_Listener(self))
            self.notes["assignment_after_subscribe"] = frozenset(
                (tp.topic, tp.partition) for tp in consumer.assignment()
            )

        self._commands.put(change)

    def note(self, key: str, read: Callable[[Any], Any]) -> None:
        """Record ``read(consumer)`` in ``notes[key]``, from the poll thread."""
        self._commands.put(lambda consumer: self.notes.__setitem__(key, read(consumer)))

    def check(self) -> None:
        if self.error is not None:
            raise AssertionError(f"member {self.name} failed: {self.error!r}") from self.error

    def stop(self, timeout_s: float = 30.0) -> None:
        self._stop.set()
        self._thread.join(timeout_s)
        self.check()


class Producer:
    """Sends numbered records round-robin over every partition until stopped."""

    def __init__(
        self,
        bootstrap: str,
        partitions: dict[str, int],
        rate_per_s: float = 100,
        settings: dict[str, Any] | None = None,
    ) -> None:
        self._producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=5, **(settings or {}))
        self._targets = [(t, p) for t, n in sorted(partitions.items()) for p in range(n)]
        self._interval = 1.0 / rate_per_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="producer", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        sequence = 0
        while not self._stop.is_set():
            topic, partition = self._targets[sequence % len(self._targets)]
            self._producer.send(topic, value=str(sequence).encode(), partition=partition)
            sequence += 1
            time.sleep(self._interval)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(10)
        self._producer.flush(10)
        self._producer.close(5)


def ownership(members: Iterable[Member]) -> dict[str, frozenset[Partition]]:
    return {m.name: m.snapshot() for m in members}


def wait_stable(
    members: list[Member],
    partitions: set[Partition],
    timeout_s: float = 60.0,
    hold_s: float = 2.0,
    every_member_owns: bool = True,
) -> dict[str, frozenset[Partition]]:
    """Wait until every partition is owned by exactly one member, unchanged for ``hold_s``
    (and, by default, every member owns something: a cooperative group is not done while a
    member waits for the second round)."""
    deadline = time.monotonic() + timeout_s
    stable_since: float | None = None
    last: dict[str, frozenset[Partition]] = {}
    while time.monotonic() < deadline:
        for member in members:
            member.check()
        current = ownership(members)
        owned = [p for parts in current.values() for p in parts]
        good = sorted(owned) == sorted(partitions)
        if every_member_owns and not all(current.values()):
            good = False
        if good and current == last:
            if stable_since is not None and time.monotonic() - stable_since >= hold_s:
                return current
        else:
            stable_since = time.monotonic() if good else None
        last = current
        time.sleep(0.2)
    history = "\n".join(
        str(e) for e in sorted((e for m in members for e in m.events), key=lambda e: e.t)
    )
    raise AssertionError(f"group not stable after {timeout_s}s: {last}\n{history}")


def consumed_by_two_live_members(members: Iterable[Member]) -> list[str]:
    """Violations of "no partition is consumed by two live members at once".

    A delivery of partition ``p`` to member ``X`` at time ``t`` is legal when ``X``'s latest
    callback about ``p`` before ``t`` assigned it (at ``ta``) and no *other* member received
    ``p`` between ``ta`` and ``t``. Two members consuming ``p`` in overlapping windows always
    produce an illegal delivery; a member that merely believed it owned ``p`` while paused
    (and then got ``on_partitions_lost``) produces none.
    """
    member_list = list(members)
    history: dict[tuple[str, Partition], list[tuple[float, str]]] = {}
    for member in member_list:
        for event in member.events:
            for partition in event.partitions:
                history.setdefault((member.name, partition), []).append((event.t, event.kind))
    for entries in history.values():
        entries.sort()
    by_partition: dict[Partition, list[Delivery]] = {}
    for member in member_list:
        for delivery in member.deliveries:
            by_partition.setdefault(delivery.partition, []).append(delivery)
    problems: list[str] = []
    for partition, deliveries in sorted(by_partition.items()):
        deliveries.sort(key=lambda d: d.t)
        last_by_member: dict[str, Delivery] = {}
        for delivery in deliveries:
            entries = history.get((delivery.member, partition), [])
            index = bisect.bisect_right(entries, (delivery.t, "~")) - 1
            if index < 0 or entries[index][1] != "assigned":
                latest = entries[index] if index >= 0 else None
                problems.append(f"{delivery} without a current assignment (latest: {latest})")
            else:
                assigned_at = entries[index][0]
                for other, seen in last_by_member.items():
                    if other != delivery.member and seen.t > assigned_at:
                        problems.append(f"{delivery} after {seen} (assigned at {assigned_at:.3f})")
                        break
            last_by_member[delivery.member] = delivery
    return problems
