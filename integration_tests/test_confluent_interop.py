"""Mixed groups on the real embedded broker: kafka-python members running this package's
``CooperativeStickyAssignor`` and confluent-kafka members running librdkafka's
``cooperative-sticky``, subscribed through :func:`kafka_sticky_plugin.confluent.subscribe`.

Each scenario runs the same script with either client as the group leader (on Tansu the
group's protocol and leader come from the first member to join): join, join, scale out, one
member stops polling past ``max.poll.interval.ms`` and comes back, one member leaves. Keyed
records are produced before and during all of it. Members run in threads of this process
and record every rebalance callback, commit, pause and delivery with ``time.monotonic()``.

Checked after every step: the live members' assignments are disjoint, complete and balanced
(max - min <= 1), and members that keep their place keep their partitions (stickiness across
clients). Checked on the whole run: no partition is owned by two members at once (ownership
intervals from the callbacks; a lost partition's interval ends when its member stopped
polling, since the broker expelled it for that); every delivery happened while its member
owned the partition; every record was consumed; the paused member saw on_partitions_lost;
the records read twice are exactly the in-flight ones (read, not committed, by a member that
then lost the partition), plus any batch a kafka-python poll() returned while its IO thread
was running the revocation (counted separately); the last owners committed everything.
When our assignor leads, what it decoded from librdkafka is checked too: consumer protocol
v3 subscriptions claiming what the member really owned, with its generation, sticky user data
that decodes to the same generation, and a plan that never hands a partition to a member
while another member's winning claim holds it (older generations included).
"""

from __future__ import annotations

import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import confluent_kafka
import pytest

from kafka_sticky_plugin import CooperativeStickyAssignor
from kafka_sticky_plugin.adapters.kafka_python._metadata import to_subscription
from kafka_sticky_plugin.codec import decode_assignment, decode_sticky_user_data
from kafka_sticky_plugin.confluent import (
    RebalanceProtocol,
    TopicPartition,
    commit_positions,
    create_consumer,
    rebalance_protocol,
    subscribe,
)

pytestmark = [pytest.mark.broker]

PARTITIONS = 12
GROUP_TIMEOUTS = {"session.timeout.ms": 6000, "heartbeat.interval.ms": 1000}
MAX_POLL_MS = 7000  # >= session.timeout.ms (librdkafka refuses less)
PAUSE_S = 20.0  # long enough for the broker to expel the member and the group to settle
CONVERGE_TIMEOUT_S = 45.0
COMMIT_EVERY_S = 1.0


# -- the journal ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Event:
    """One callback or life event of a member, at monotonic time ``t``."""

    t: float
    member: str
    kind: str  # started|assigned|revoking|revoked|lost|committed|commit_failed|paused|...
    #            resumed|stopped|error
    partitions: tuple[int, ...] = ()
    detail: str = ""
    offsets: tuple[int, ...] = ()  # committed: the offset committed for each partition


@dataclass(frozen=True)
class Delivery:
    """One record handed to the application by a poll() call that ran from ``t0`` to ``t``."""

    t0: float
    t: float
    member: str
    partition: int
    offset: int
    sequence: int


@dataclass(frozen=True)
class LeaderInput:
    """What our leader decoded from one member's JoinGroup metadata, and what it gave it."""

    t: float
    member_id: str
    version: int
    owned: tuple[int, ...]
    generation: int
    has_user_data: bool
    assigned: tuple[int, ...]
    user_data: bytes | None = None


class Journal:
    """Thread-safe, append-only record of one group run."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.events: list[Event] = []
        self.deliveries: list[Delivery] = []
        self.leader_rounds: list[list[LeaderInput]] = []

    def event(self, member: str, kind: str, partitions: Any = (), detail: str = "") -> None:
        numbers = tuple(sorted(tp.partition for tp in partitions))
        with self._lock:
            self.events.append(Event(time.monotonic(), member, kind, numbers, detail))

    def committed(self, member: str, offsets: dict[int, int]) -> None:
        """``member`` committed ``offsets`` (partition -> next offset to read)."""
        parts = tuple(sorted(offsets))
        event = Event(
            time.monotonic(), member, "committed", parts, "", tuple(offsets[p] for p in parts)
        )
        with self._lock:
            self.events.append(event)

    def deliver(self, batch: list[Delivery]) -> None:
        with self._lock:
            self.deliveries.extend(batch)

    def leader_round(self, inputs: list[LeaderInput]) -> None:
        with self._lock:
            self.leader_rounds.append(inputs)

    def snapshot(self) -> tuple[list[Event], list[Delivery]]:
        with self._lock:
            return list(self.events), list(self.deliveries)


# -- members -------------------------------------------------------------------------------


class RecordingCooperativeSticky(CooperativeStickyAssignor):
    """This package's assignor, recording each leader round's decoded inputs and outputs."""

    def __init__(self, journal: Journal) -> None:
        super().__init__()
        self._journal = journal

    def assign(self, cluster: Any, members: Any) -> dict[str, bytes]:
        members = list(members)
        plan = super().assign(cluster, members)
        inputs = []
        for member in members:
            subscription = to_subscription(member.metadata)
            inputs.append(
                LeaderInput(
                    t=time.monotonic(),
                    member_id=member.member_id,
                    version=subscription.version,
                    owned=tuple(sorted(p for _, p in subscription.owned_partitions)),
                    generation=subscription.generation_id,
                    has_user_data=bool(subscription.user_data),
                    user_data=subscription.user_data,
                    assigned=tuple(
                        sorted(p for _, p in decode_assignment(plan[member.member_id]).partitions)
                    ),
                )
            )
        self._journal.leader_round(inputs)
        return plan


class Member(threading.Thread):
    """One group member polling in its own thread until stopped; can stop polling for a while.

    Commits by hand: every second from the poll loop, and on revoke through the listener
    (commit-on-revoke); never for lost partitions. ``owned`` is the member's own view.
    """

    kind = ""

    def __init__(
        self,
        name: str,
        bootstrap: str,
        group: str,
        topic: str,
        journal: Journal,
        strategy: str = "cooperative-sticky",
    ):
        super().__init__(name=name, daemon=True)
        self.strategy = strategy
        self.member = name
        self.bootstrap = bootstrap
        self.group = group
        self.topic = topic
        self.journal = journal
        self.owned: set[int] = set()
        self.ids: set[str] = set()  # every member id the broker gave this member
        self.subscribed = threading.Event()
        self._stop_flag = threading.Event()
        self._pause_s = 0.0
        self._pause_at = 0.0
        self._pause_lock = threading.Lock()
        self.paused = threading.Event()
        self.failure: BaseException | None = None

    def pause_polling(self, seconds: float, hold_commits_s: float = 2.0) -> None:
        """Stop committing now, stop calling poll() ``hold_commits_s`` later, for ``seconds``.

        Holding the periodic commits first guarantees records in flight (read, not committed)
        when the member is expelled, so the duplicate accounting is exercised every run.
        """
        with self._pause_lock:
            self._pause_s = seconds
            self._pause_at = time.monotonic() + hold_commits_s

    def commits_held(self) -> bool:
        with self._pause_lock:
            return self._pause_s > 0

    def stop(self) -> None:
        self._stop_flag.set()
        self.join(timeout=30)

    def _maybe_pause(self) -> None:
        with self._pause_lock:
            if self._pause_s <= 0 or time.monotonic() < self._pause_at:
                return
            seconds, self._pause_s = self._pause_s, 0.0
        if seconds > 0:
            self.paused.set()
            self.journal.event(self.member, "paused")
            time.sleep(seconds)
            self.journal.event(self.member, "resumed")
            self.paused.clear()

    def _poll_rounds(self, should_stop: Callable[[], bool]) -> Iterator[float]:
        """The poll loop's frame, once the member has subscribed: record ``started`` and set
        :attr:`subscribed`, then, until ``should_stop()``, sit out any pause asked for and yield
        the monotonic time the next poll() call starts."""
        self.journal.event(self.member, "started")
        self.subscribed.set()
        while not should_stop():
            self._maybe_pause()
            yield time.monotonic()

    def run(self) -> None:
        try:
            self.loop(self._stop_flag.is_set)
        except BaseException as exc:  # reported to the test through .failure
            self.failure = exc
            self.journal.event(self.member, "error", detail=repr(exc))
        finally:
            self.owned.clear()
            self.journal.event(self.member, "stopped")

    def loop(self, should_stop: Callable[[], bool]) -> None:
        raise NotImplementedError


class ConfluentMember(Member):
    """librdkafka's cooperative-sticky through kafka_sticky_plugin.confluent.subscribe."""

    kind = "confluent"

    def loop(self, should_stop: Callable[[], bool]) -> None:
        config = {
            "bootstrap.servers": self.bootstrap,
            "group.id": self.group,
            "client.id": self.member,
            "partition.assignment.strategy": self.strategy,
            "max.poll.interval.ms": MAX_POLL_MS,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "log_level": 3,
            **GROUP_TIMEOUTS,
        }
        consumer = create_consumer(config)
        member = self

        class Listener:
            def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
                # What the bridge commits next (commit-on-revoke), kept for diagnostics.
                positions = consumer.position(
                    [confluent_kafka.TopicPartition(tp.topic, tp.partition) for tp in revoked]
                )
                member.journal.event(
                    member.member,
                    "revoking",
                    positions,
                    detail=repr({tp.partition: tp.offset for tp in positions}),
                )
                member.owned.difference_update(tp.partition for tp in revoked)
                member.journal.event(member.member, "revoked", revoked)

            def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
                member.ids.add(consumer.memberid() or "")
                member.owned.update(tp.partition for tp in assigned)
                member.journal.event(member.member, "assigned", assigned)

            def on_partitions_lost(self, lost: set[TopicPartition]) -> None:
                member.owned.difference_update(tp.partition for tp in lost)
                member.journal.event(member.member, "lost", lost)

        try:
            subscribe(consumer, [self.topic], Listener(), commit_on_revoke=True)
            last_commit = time.monotonic()
            for polled_at in self._poll_rounds(should_stop):
                message = consumer.poll(0.1)
                if message is not None and message.error() is None:
                    self.journal.deliver(
                        [
                            Delivery(
                                polled_at,
                                time.monotonic(),
                                self.member,
                                message.partition() or 0,
                                message.offset() or 0,
                                int(message.value() or b"-1"),
                            )
                        ]
                    )
                if time.monotonic() - last_commit >= COMMIT_EVERY_S and not self.commits_held():
                    last_commit = time.monotonic()
                    try:
                        done = commit_positions(consumer, consumer.assignment())
                        self.journal.committed(
                            self.member, {tp.partition: tp.offset for tp in done}
                        )
                    except confluent_kafka.KafkaException as exc:  # mid-rebalance: retried
                        self.journal.event(self.member, "commit_failed", detail=repr(exc))
        finally:
            consumer.close()


class KafkaPythonMember(Member):
    """kafka-python with this package's CooperativeStickyAssignor (recording leader rounds)."""

    kind = "kafka-python"

    def loop(self, should_stop: Callable[[], bool]) -> None:
        from kafka import KafkaConsumer
        from kafka import TopicPartition as KafkaTopicPartition
        from kafka.consumer.subscription_state import AsyncConsumerRebalanceListener
        from kafka.errors import KafkaError
        from kafka.structs import OffsetAndMetadata

        consumer = KafkaConsumer(
            bootstrap_servers=self.bootstrap,
            group_id=self.group,
            client_id=self.member,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            session_timeout_ms=GROUP_TIMEOUTS["session.timeout.ms"],
            heartbeat_interval_ms=GROUP_TIMEOUTS["heartbeat.interval.ms"],
            max_poll_interval_ms=MAX_POLL_MS,
            partition_assignment_strategy=[RecordingCooperativeSticky(self.journal)],
        )
        positions: dict[Any, int] = {}
        member = self

        # kafka-python 3.0.12 runs listeners on its IO loop, where only awaiting is allowed,
        # and (cooperative) drops revoked partitions before the callback, so position() is
        # gone there: commit the positions this loop tracked.
        class Listener(AsyncConsumerRebalanceListener):  # type: ignore[misc]
            async def on_partitions_revoked(self, revoked: Any) -> None:
                offsets = {
                    tp: OffsetAndMetadata(positions[tp], "", -1)
                    for tp in revoked
                    if tp in positions
                }
                if offsets:
                    await consumer.commit_async(offsets)
                    member.journal.committed(
                        member.member, {tp.partition: o.offset for tp, o in offsets.items()}
                    )
                for tp in revoked:
                    positions.pop(tp, None)
                member.owned.difference_update(tp.partition for tp in revoked)
                member.journal.event(member.member, "revoked", revoked)

            async def on_partitions_assigned(self, assigned: Any) -> None:
                member.owned.update(tp.partition for tp in assigned)
                member.journal.event(member.member, "assigned", assigned)

            async def on_partitions_lost(self, lost: Any) -> None:
                for tp in lost:
                    positions.pop(tp, None)
                member.owned.difference_update(tp.partition for tp in lost)
                member.journal.event(member.member, "lost", lost)

        try:
            consumer.subscribe([self.topic], listener=Listener())
            last_commit = time.monotonic()
            for polled_at in self._poll_rounds(should_stop):
                records = consumer.poll(timeout_ms=100)
                self.ids.add(consumer.group_metadata().member_id or "")
                now = time.monotonic()
                batch = []
                for tp, recs in records.items():
                    for rec in recs:
                        batch.append(
                            Delivery(
                                polled_at,
                                now,
                                self.member,
                                tp.partition,
                                rec.offset,
                                int(rec.value),
                            )
                        )
                    if recs:
                        positions[KafkaTopicPartition(tp.topic, tp.partition)] = recs[-1].offset + 1
                self.journal.deliver(batch)
                if now - last_commit >= COMMIT_EVERY_S and not self.commits_held():
                    last_commit = now
                    assigned = set(consumer.assignment())
                    offsets = {
                        tp: OffsetAndMetadata(off, "", -1)
                        for tp, off in list(positions.items())
                        if tp in assigned
                    }
                    if offsets:
                        try:
                            consumer.commit(offsets)
                            self.journal.committed(
                                self.member, {tp.partition: o.offset for tp, o in offsets.items()}
                            )
                        except KafkaError as exc:  # mid-rebalance: retried next second
                            self.journal.event(self.member, "commit_failed", detail=repr(exc))
        finally:
            consumer.close()


MEMBER_KINDS: dict[str, type[Member]] = {"k": KafkaPythonMember, "c": ConfluentMember}


# -- producing -----------------------------------------------------------------------------


class KeyedProducer(threading.Thread):
    """Produces keyed records (value = sequence number) at a steady rate until stopped."""

    def __init__(self, bootstrap: str, topic: str, per_second: float) -> None:
        super().__init__(name="producer", daemon=True)
        self._producer = confluent_kafka.Producer(
            {"bootstrap.servers": bootstrap, "linger.ms": 5, "log_level": 3}
        )
        self._topic = topic
        self._interval = 1.0 / per_second
        self._stop_flag = threading.Event()
        self.produced = 0
        self.failed: list[str] = []

    def produce(self, count: int) -> None:
        for _ in range(count):
            self._send()
        self._producer.flush(10)

    def _send(self) -> None:
        sequence = self.produced
        self.produced += 1

        def on_delivery(err: Any, _msg: Any) -> None:
            if err is not None:
                self.failed.append(f"{sequence}: {err}")

        self._producer.produce(
            self._topic,
            key=f"key-{sequence % 97}".encode(),
            value=str(sequence).encode(),
            on_delivery=on_delivery,
        )
        self._producer.poll(0)

    def run(self) -> None:
        while not self._stop_flag.wait(self._interval):
            self._send()
        self._producer.flush(10)

    def stop(self) -> None:
        self._stop_flag.set()
        self.join(timeout=15)


# -- the group and its checks --------------------------------------------------------------


class Group:
    """The members of one run, started and stopped by the scenario script."""

    def __init__(
        self, bootstrap: str, group: str, topic: str, strategy: str = "cooperative-sticky"
    ) -> None:
        self.strategy = strategy
        self.bootstrap = bootstrap
        self.group = group
        self.topic = topic
        self.journal = Journal()
        self.members: dict[str, Member] = {}
        self.history: list[str] = []
        self.started = time.monotonic()

    def start(self, name: str) -> Member:
        member = MEMBER_KINDS[name[0]](
            name, self.bootstrap, self.group, self.topic, self.journal, self.strategy
        )
        self.members[name] = member
        member.start()
        if not member.subscribed.wait(15):
            raise AssertionError(f"{name} did not subscribe: {member.failure!r}")
        return member

    def live(self) -> dict[str, Member]:
        return {n: m for n, m in self.members.items() if m.is_alive() and not m.paused.is_set()}

    def wait_converged(self, step: str, stable_s: float = 2.0) -> dict[str, set[int]]:
        """Wait until live members own every partition exactly once, balanced, and stable."""
        deadline = time.monotonic() + CONVERGE_TIMEOUT_S
        last_view: dict[str, tuple[int, ...]] = {}
        stable_since = time.monotonic()
        while time.monotonic() < deadline:
            for member in self.members.values():
                if member.failure is not None:
                    raise AssertionError(f"{member.member} failed: {member.failure!r}")
            view = {n: tuple(sorted(m.owned)) for n, m in self.live().items()}
            if view != last_view:
                last_view, stable_since = view, time.monotonic()
            owned = [p for parts in view.values() for p in parts]
            sizes = [len(parts) for parts in view.values()]
            settled = sorted(owned) == list(range(PARTITIONS)) and max(sizes) - min(sizes) <= 1
            if settled and time.monotonic() - stable_since >= stable_s:
                owners = ", ".join(f"{n}={list(p)}" for n, p in view.items())
                elapsed = time.monotonic() - self.started
                self.history.append(f"{elapsed:6.1f}s {step}: {owners}")
                return {n: set(p) for n, p in view.items()}
            time.sleep(0.1)
        raise AssertionError(f"no convergence after {step}: {last_view}")

    def stop_all(self) -> None:
        for member in self.members.values():
            if member.is_alive():
                member.stop()


@dataclass
class Interval:
    member: str
    partition: int
    start: float
    end: float = float("inf")
    ended_by: str = ""


def ownership_intervals(events: list[Event]) -> list[Interval]:
    """Per member and partition: from ``assigned`` to ``revoked``/``lost``/``stopped``.

    An interval ended by ``lost`` ends at the member's last ``paused`` before it, if any:
    the member stopped processing there and the broker expelled it for that.
    """
    open_: dict[tuple[str, int], Interval] = {}
    done: list[Interval] = []
    last_pause: dict[str, float] = {}
    for event in sorted(events, key=lambda e: e.t):
        if event.kind == "paused":
            last_pause[event.member] = event.t
        elif event.kind == "assigned":
            for p in event.partitions:
                open_[(event.member, p)] = Interval(event.member, p, event.t)
        elif event.kind in ("revoked", "lost"):
            for p in event.partitions:
                interval = open_.pop((event.member, p), None)
                if interval is None:
                    raise AssertionError(f"{event.member} gave up {p} it never got: {event}")
                end = event.t
                if event.kind == "lost" and last_pause.get(event.member, -1.0) > interval.start:
                    end = last_pause[event.member]
                interval.end, interval.ended_by = end, event.kind
                done.append(interval)
        elif event.kind == "stopped":
            for key in [k for k in open_ if k[0] == event.member]:
                interval = open_.pop(key)
                interval.end, interval.ended_by = event.t, "stopped"
                done.append(interval)
    return done + list(open_.values())


def check_no_double_ownership(intervals: list[Interval]) -> None:
    by_partition: dict[int, list[Interval]] = defaultdict(list)
    for interval in intervals:
        by_partition[interval.partition].append(interval)
    for partition, items in sorted(by_partition.items()):
        items.sort(key=lambda i: i.start)
        holder = items[0]
        for later in items[1:]:
            assert later.start >= holder.end, (
                f"partition {partition} owned by {holder.member} until {holder.end:.3f} "
                f"and by {later.member} from {later.start:.3f}"
            )
            if later.end > holder.end:
                holder = later


def check_deliveries(
    intervals: list[Interval], events: list[Event], deliveries: list[Delivery], produced: int
) -> dict[str, int]:
    """Every delivery inside an ownership interval; every record read; duplicates in flight.

    In flight: read by a member during an ownership that ended in ``lost``, at or above the
    last offset that member committed for the partition during that ownership. Those records
    must be read again by the next owner (it starts at the committed offset). The only other
    records that may be read again are those returned by a poll() that was still running when
    the member's revocation callback ran: kafka-python 3 runs listeners on its IO thread, so
    such a batch reaches the application after the commit-on-revoke (librdkafka runs the
    callback inside poll(), so its members never straddle). Both kinds are counted.
    """
    by_owner: dict[tuple[str, int], list[Interval]] = defaultdict(list)
    for interval in intervals:
        by_owner[(interval.member, interval.partition)].append(interval)

    def interval_of(d: Delivery) -> Interval:
        for interval in by_owner[(d.member, d.partition)]:
            if interval.start <= d.t and d.t0 <= interval.end:
                return interval
        raise AssertionError(f"{d.member} read {d.partition}@{d.offset} without owning it")

    seen: dict[tuple[int, int], list[Delivery]] = defaultdict(list)
    reads_in: dict[int, list[Delivery]] = defaultdict(list)  # id(interval) -> its reads
    for delivery in sorted(deliveries, key=lambda d: d.t):
        reads_in[id(interval_of(delivery))].append(delivery)
        seen[(delivery.partition, delivery.offset)].append(delivery)
    sequences = {d.sequence for d in deliveries}
    missing = sorted(set(range(produced)) - sequences)
    assert not missing, f"{len(missing)} records never consumed, first {missing[:10]}"

    commits: dict[tuple[str, int], list[tuple[float, int]]] = defaultdict(list)
    for event in events:
        if event.kind == "committed":
            for partition, offset in zip(event.partitions, event.offsets, strict=True):
                commits[(event.member, partition)].append((event.t, offset))
    in_flight: set[tuple[int, int]] = set()
    straddling: set[tuple[int, int]] = set()
    for interval in intervals:
        if interval.ended_by == "revoked":
            straddling.update(
                (d.partition, d.offset) for d in reads_in[id(interval)] if d.t > interval.end
            )
        if interval.ended_by != "lost":
            continue
        committed = [
            offset
            for t, offset in commits[(interval.member, interval.partition)]
            if interval.start <= t <= interval.end
        ]
        floor = max(committed, default=-1)
        in_flight.update(
            (interval.partition, d.offset) for d in reads_in[id(interval)] if d.offset >= floor
        )
    read_again = {key for key, reads in seen.items() if len(reads) > 1}

    def describe(read: Delivery) -> str:
        interval = interval_of(read)
        own_commits = [c for c in commits[(read.member, read.partition)] if c[0] <= interval.end]
        revoking = [
            (e.t, e.detail)
            for e in events
            if e.member == read.member and e.kind == "revoking" and read.partition in e.partitions
        ]
        return (
            f"{read.member} at {read.t:.3f} (ownership ended by {interval.ended_by} at "
            f"{interval.end:.3f}; last commits {own_commits[-3:]}; revocations {revoking[-2:]})"
        )

    unexpected = sorted(read_again - in_flight - straddling)
    assert not unexpected, (
        "records read twice that were not in flight (commit-on-revoke or periodic commit "
        "missed them): "
        + "; ".join(
            f"{p}@{o} read by " + ", ".join(describe(d) for d in seen[(p, o)])
            for p, o in unexpected[:5]
        )
    )
    not_reread = sorted(in_flight - read_again)
    assert not not_reread, f"in-flight records nobody read again: {not_reread[:10]}"
    return {
        "records": produced,
        "deliveries": len(deliveries),
        "duplicates": sum(len(reads) - 1 for reads in seen.values()),
        "in_flight": len(in_flight),
        "straddling_revocation": len(straddling),
        "straddling_read_again": len(straddling & read_again),
    }


# A JoinGroup reaches the leader's assign() up to this long after the member sent it (the
# broker holds joins for half the session timeout, and a round can take two such holds).
JOIN_WINDOW_S = 8.0


def ownership_states(
    intervals: list[Interval], member: str, start: float, end: float
) -> list[set[int]]:
    """Every set of partitions ``member`` owned at some moment of ``[start, end]``."""
    mine = [i for i in intervals if i.member == member]
    moments = {start, end} | {t for i in mine for t in (i.start, i.end) if start <= t <= end}
    states: list[set[int]] = []
    for moment in sorted(moments):
        for probe in (moment - 1e-6, moment):
            state = {i.partition for i in mine if i.start <= probe < i.end}
            if state not in states:
                states.append(state)
    return states


def check_leader_rounds(group: Group, intervals: list[Interval]) -> dict[str, Any]:
    """Our leader's view of librdkafka members, round by round.

    Each librdkafka subscription must be consumer protocol v1+ and claim exactly the
    partitions that member owned (by its own callbacks) at some moment between sending it
    and the leader's assign() (up to ``JOIN_WINDOW_S``), with a real generation (>= 0) when
    it claims any; its sticky user data (librdkafka sends Java's v1: previous assignment and
    generation) must decode and carry the same generation. The plan must never give a
    partition to a member while another member holds the winning claim on it (the unique
    highest generation among its claimants; a member whose SyncGroup failed keeps claiming
    at its older generation, and that claim stays valid while uncontested).
    """
    names = {mid: n for n, m in group.members.items() if m.kind == "confluent" for mid in m.ids}
    checked, versions, with_user_data, older = 0, Counter[int](), 0, 0
    same_partitions = same_generation = 0
    for inputs in group.journal.leader_rounds:
        newest = max((i.generation for i in inputs), default=-1)
        claimants: dict[int, list[tuple[int, str]]] = defaultdict(list)
        for item in inputs:
            for p in item.owned:
                claimants[p].append((item.generation, item.member_id))
        for item in inputs:
            name = names.get(item.member_id)
            if name is not None:
                checked += 1
                versions[item.version] += 1
                with_user_data += item.has_user_data
                if item.user_data:
                    previous, user_generation = decode_sticky_user_data(item.user_data)
                    same_partitions += {p for _, p in previous} == set(item.owned)
                    assert user_generation == item.generation, (
                        f"{name}'s sticky user data says generation {user_generation}, its "
                        f"subscription {item.generation}"
                    )
                    same_generation += 1
                assert item.version >= 1, f"librdkafka sent subscription v{item.version}"
                states = ownership_states(intervals, name, item.t - JOIN_WINDOW_S, item.t)
                assert set(item.owned) in states, (
                    f"{name} claimed {item.owned} but owned one of {states} meanwhile"
                )
                if item.owned:
                    assert 0 <= item.generation <= newest, (
                        f"{name} claimed at generation {item.generation}, group at {newest}"
                    )
                    older += item.generation < newest
            for p in item.assigned:
                best = max(claimants[p], default=(-1, ""))
                tied = [c for c in claimants[p] if c[0] == best[0]]
                winner = best[1] if len(tied) == 1 else None
                assert winner in (None, item.member_id), (
                    f"leader gave {p} to {item.member_id} while {winner} validly owns it"
                )
    return {
        "librdkafka_subscriptions": checked,
        "versions": dict(versions),
        "with_user_data": with_user_data,
        "user_data_partitions_equal_owned": same_partitions,
        "user_data_generation_equal": same_generation,
        "claims_at_older_generation": older,
    }


# -- the scenario --------------------------------------------------------------------------


@pytest.fixture
def topic(topic_factory: Callable[[int], str]) -> str:
    """A fresh 12-partition topic (never deleted: librdkafka crashes when it is)."""
    return topic_factory(PARTITIONS)


def drive(group: Group, producer: KeyedProducer, script: Callable[[], None]) -> None:
    """Run ``script`` while ``producer`` writes, then wait until every record was delivered.

    The producer and every member are stopped (members close, so they revoke and commit)
    whatever happens, so a failing step never leaves consumers running.
    """
    producer.start()
    try:
        try:
            script()
        finally:
            producer.stop()
        drained = time.monotonic() + 30
        while time.monotonic() < drained:
            if {d.sequence for d in group.journal.snapshot()[1]} >= set(range(producer.produced)):
                break
            time.sleep(0.2)
    finally:
        group.stop_all()


def run_scenario(bootstrap: str, topic: str, order: str) -> tuple[Group, dict[str, int]]:
    """``order`` names four members by kind in join order (first is the leader), e.g. 'kckc'.

    The fourth member (the second of the non-leader kind) stops polling and comes back; the
    second member leaves at the end.
    """
    names = [f"{kind}{i + 1}" for i, kind in enumerate(order)]
    group = Group(bootstrap, f"group-{order}-{time.monotonic_ns()}", topic)
    producer = KeyedProducer(bootstrap, topic, per_second=40)
    producer.produce(300)

    def script() -> None:
        group.start(names[0])
        group.wait_converged(f"{names[0]} joins (leader)")
        before = {names[0]: set(group.members[names[0]].owned)}
        group.start(names[1])
        after = group.wait_converged(f"{names[1]} joins")
        assert after[names[0]] <= before[names[0]], "the leader's kept partitions moved"
        group.start(names[2])
        group.start(names[3])
        before = after
        after = group.wait_converged(f"{names[2]} and {names[3]} join (scale out)")
        for name in names[:2]:
            assert after[name] <= before[name], f"{name} was given partitions it did not own"
            assert len(after[name]) == PARTITIONS // 4, f"{name} unbalanced: {after[name]}"
        paused = group.members[names[3]]
        before = after
        paused.pause_polling(PAUSE_S)
        if not paused.paused.wait(5):
            raise AssertionError(f"{names[3]} did not pause")
        after = group.wait_converged(f"{names[3]} stops polling")
        assert paused.paused.is_set(), f"the others only settled after {names[3]} came back"
        for name in names[:3]:
            assert before[name] <= after[name], f"{name} lost partitions to a pause elsewhere"
        deadline = time.monotonic() + PAUSE_S + 10
        while paused.paused.is_set() and time.monotonic() < deadline:
            time.sleep(0.1)
        after = group.wait_converged(f"{names[3]} polls again")
        group.members[names[1]].stop()
        before = after
        after = group.wait_converged(f"{names[1]} leaves")
        for name in (names[0], names[2], names[3]):
            assert before[name] <= after[name], f"{name} lost partitions when {names[1]} left"

    drive(group, producer, script)
    assert not producer.failed, producer.failed[:5]
    lost_events = [e for e in group.journal.events if e.kind == "lost"]
    assert any(e.member == names[3] and e.partitions for e in lost_events), (
        f"{names[3]} paused past max.poll.interval.ms but never saw on_partitions_lost"
    )
    events, deliveries = group.journal.snapshot()
    intervals = ownership_intervals(events)
    check_no_double_ownership(intervals)
    counts = check_deliveries(intervals, events, deliveries, producer.produced)
    assert counts["in_flight"] > 0, "the paused member had nothing in flight: check not exercised"
    return group, counts


def committed_offsets(bootstrap: str, group: str, topic: str) -> dict[int, int]:
    reader = confluent_kafka.Consumer(
        {"bootstrap.servers": bootstrap, "group.id": group, "log_level": 3}
    )
    try:
        parts = [confluent_kafka.TopicPartition(topic, p) for p in range(PARTITIONS)]
        return {tp.partition: tp.offset for tp in reader.committed(parts, timeout=10)}
    finally:
        reader.close()


def end_offsets(bootstrap: str, topic: str) -> dict[int, int]:
    reader = confluent_kafka.Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "watermarks", "log_level": 3}
    )
    try:
        return {
            p: reader.get_watermark_offsets(confluent_kafka.TopicPartition(topic, p), timeout=10)[1]
            for p in range(PARTITIONS)
        }
    finally:
        reader.close()


@pytest.mark.timeout(180)
def test_mixed_group_with_our_assignor_leading(broker: Any, topic: str) -> None:
    """kafka-python (our CooperativeStickyAssignor) leads; librdkafka members follow."""
    group, counts = run_scenario(broker.bootstrap, topic, "kckc")
    seen = check_leader_rounds(group, ownership_intervals(group.journal.snapshot()[0]))
    assert seen["librdkafka_subscriptions"] > 0, "our leader never saw a librdkafka subscription"
    assert committed_offsets(broker.bootstrap, group.group, topic) == end_offsets(
        broker.bootstrap, topic
    ), "the last owners did not commit everything on close (commit-on-revoke)"
    print("\n".join(group.history), counts, seen)


@pytest.mark.timeout(180)
def test_mixed_group_with_librdkafka_leading(broker: Any, topic: str) -> None:
    """librdkafka's cooperative-sticky leads; our kafka-python members follow."""
    group, counts = run_scenario(broker.bootstrap, topic, "ckck")
    assert not group.journal.leader_rounds, "a kafka-python member led although c1 joined first"
    assert committed_offsets(broker.bootstrap, group.group, topic) == end_offsets(
        broker.bootstrap, topic
    ), "the last owners did not commit everything on close (commit-on-revoke)"
    print("\n".join(group.history), counts)


class FirstAssignment:
    """Remembers the partitions of every on_partitions_assigned call."""

    def __init__(self) -> None:
        self.assigned: list[set[TopicPartition]] = []

    def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        """Nothing to do."""

    def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        self.assigned.append(assigned)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("strategy", ["cooperative-sticky", "range"])
def test_rebalance_protocol_matches_what_librdkafka_enforces(
    broker: Any, topic: str, strategy: str
) -> None:
    """The protocol derived from the config is the one librdkafka enforces once joined:
    the bridge's calls succeed and the other kind of call is refused."""
    config = {
        "bootstrap.servers": broker.bootstrap,
        "group.id": f"protocol-{strategy}-{time.monotonic_ns()}",
        "partition.assignment.strategy": strategy,
        "auto.offset.reset": "earliest",
        "log_level": 3,
        **GROUP_TIMEOUTS,
    }
    ours = rebalance_protocol(config)
    consumer = create_consumer(config)
    listener = FirstAssignment()
    try:
        subscribe(consumer, [topic], listener)
        deadline = time.monotonic() + 20
        while not listener.assigned and time.monotonic() < deadline:
            consumer.poll(0.2)
        assert listener.assigned, f"{strategy}: no assignment"
        assert {tp.partition for tp in consumer.assignment()} == set(range(PARTITIONS))
        parts = [confluent_kafka.TopicPartition(topic, 0)]
        with pytest.raises(confluent_kafka.KafkaException):
            if ours is RebalanceProtocol.COOPERATIVE:
                consumer.assign(parts)
            else:
                consumer.incremental_unassign(parts)
        assert {tp.partition for tp in consumer.assignment()} == set(range(PARTITIONS))
    finally:
        consumer.close()


@pytest.mark.timeout(120)
def test_eager_confluent_members_hand_over_with_commit_on_revoke(broker: Any, topic: str) -> None:
    """librdkafka's eager ``range`` through the same listener API: every rebalance revokes
    everything (committed first) and assigns anew; nothing is lost, owned twice or re-read."""
    group = Group(broker.bootstrap, f"group-eager-{time.monotonic_ns()}", topic, "range")
    producer = KeyedProducer(broker.bootstrap, topic, per_second=40)
    producer.produce(200)

    def script() -> None:
        group.start("c1")
        group.wait_converged("c1 joins")
        group.start("c2")
        group.wait_converged("c2 joins")
        group.members["c1"].stop()
        group.wait_converged("c1 leaves")

    drive(group, producer, script)
    events, deliveries = group.journal.snapshot()
    revoked_all = [e for e in events if e.member == "c1" and e.kind == "revoked"]
    assert any(len(e.partitions) == PARTITIONS for e in revoked_all), "c1 never revoked all"
    intervals = ownership_intervals(events)
    check_no_double_ownership(intervals)
    counts = check_deliveries(intervals, events, deliveries, producer.produced)
    assert counts["duplicates"] == 0, counts
    assert committed_offsets(broker.bootstrap, group.group, topic) == end_offsets(
        broker.bootstrap, topic
    )
    print("\n".join(group.history), counts)
