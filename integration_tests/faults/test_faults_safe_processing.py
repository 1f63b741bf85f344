"""Safe processing under broker faults (issue 25's "the same under the faults tier's broker
bounces"): three hooked kafka-python 3.x members (cooperative-sticky), each running the
:class:`~kafka_sticky_plugin.kafka_python.Processor` with
:func:`~kafka_sticky_plugin.kafka_python.guard_commits` on, under steady keyed production
with ``acks=all`` (the faults tier's :class:`~testlab.faults.FaultRun`
gives the topic, the producer and the scenarios; the members are this module's own threads,
since FaultRun's members run a plain poll loop). Every record takes 50-200 ms of work (seeded),
so work is in flight at every fault: a fourth member joins and a second later the group
coordinator's broker is SIGKILLed (so partitions are revoked, with work in flight, while the
coordinator moves) and restarted, then every broker bounced.

Checks: every acknowledged record processed at least once; no record re-processed after a
commit covering it was acknowledged (so duplicates are only records in flight or finished
and not yet committed at a handover), and at most what the old owners held then; every
commit a member made was for a partition it owned at that moment (the guard's refusals
counted and printed); each partition's committed offset, read from the broker every ~2 s and
after each fault, never moves backwards and ends at the log end; nothing raised out of
``poll()``.
"""

from __future__ import annotations

import os
import random
import threading
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from faults_cluster import TABLE, cluster_or_skip
from kafka import KafkaConsumer, TopicPartition

from kafka_sticky_plugin.kafka_python import (
    CooperativeStickyAssignor,
    Processor,
    guard_commits,
    install_hooks,
)
from testlab.faults import FaultRun, kill_coordinator, rolling_bounce
from testlab.kafka_cluster import KafkaCluster

pytestmark = pytest.mark.timeout(600)

Partition = tuple[str, int]

PARTITIONS = 6
MEMBERS = 3
JOIN_LEAD_S = 1.0  # the joiner's head start before the coordinator's broker is killed
RATE_PER_S = 20.0  # the group processes ~40 records/s at most (6 partitions, ~125 ms each)
MAX_IN_FLIGHT = 12
MAX_POLL_RECORDS = 10
HELD = MAX_IN_FLIGHT + MAX_POLL_RECORDS  # records one member holds at most, unfinished


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaCluster]:
    yield from cluster_or_skip(tmp_path_factory)


class ProcessingMember:
    """One guarded member on a thread: ``processor.poll()`` until :meth:`finish`. Records
    (with monotonic times) its work's starts and ends, its commits (``on_commit``) and its
    rebalance callbacks; ``error`` is whatever its loop raised."""

    def __init__(self, name: str, bootstrap: str, group: str, topic: str, seed: int) -> None:
        self.name = name
        self.lock = threading.Lock()
        self.started: list[tuple[float, Partition, int]] = []
        self.finished: list[tuple[float, Partition, int]] = []
        self.commits: list[tuple[float, Partition, int]] = []
        self.callbacks: list[tuple[float, str, frozenset[Partition]]] = []
        self.error: BaseException | None = None
        self.consumer = KafkaConsumer(
            bootstrap_servers=bootstrap,
            group_id=group,
            client_id=name,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            partition_assignment_strategy=[CooperativeStickyAssignor],
            session_timeout_ms=10000,
            heartbeat_interval_ms=1000,
            max_poll_records=MAX_POLL_RECORDS,
        )
        install_hooks(self.consumer)
        self.guard = guard_commits(self.consumer)  # "refuse": a refused commit is retried

        def work(record: Any) -> None:
            partition = (record.topic, record.partition)
            self._note(self.started, partition, record.offset)
            time.sleep(0.05 + 0.15 * random.Random(f"{seed}/{partition}/{record.offset}").random())
            self._note(self.finished, partition, record.offset)

        self.processor = Processor(
            self.consumer,
            work,
            max_in_flight=MAX_IN_FLIGHT,
            workers=4,
            revoke_wait_s=5.0,
            commit_interval_s=0.5,
            on_commit=self._committed,
        )
        self.consumer.subscribe([topic], listener=self.processor.listener(self))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _note(self, into: list[tuple[float, Partition, int]], p: Partition, offset: int) -> None:
        with self.lock:
            into.append((time.monotonic(), p, offset))

    def _committed(self, offsets: dict[TopicPartition, int]) -> None:
        for tp, offset in offsets.items():
            self._note(self.commits, (tp.topic, tp.partition), offset)

    def _callback(self, name: str, partitions: set[TopicPartition]) -> None:
        with self.lock:
            self.callbacks.append(
                (time.monotonic(), name, frozenset((tp.topic, tp.partition) for tp in partitions))
            )

    # the user's listener, called after the processor's own work for each callback
    def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        self._callback("revoked", revoked)

    def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        self._callback("assigned", assigned)

    def on_partitions_lost(self, lost: set[TopicPartition]) -> None:
        self._callback("lost", lost)

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                self.processor.poll(timeout_ms=200)
        except BaseException as exc:
            self.error = exc
        finally:
            try:
                self.processor.close()
            finally:
                self.consumer.close()

    def settled(self) -> bool:
        coordinator = self.consumer._coordinator
        return coordinator.generation_if_stable() is not None and not coordinator.need_rejoin()

    def owned_at(self, partition: Partition, t: float) -> bool:
        """Whether ``partition`` was this member's at ``t`` (by its own callbacks)."""
        owned = False
        for when, name, partitions in self.callbacks:
            if when > t:
                break
            if partition in partitions:
                owned = name == "assigned"
        return owned

    def finish(self) -> None:
        self._stop.set()
        self._thread.join(60)
        assert not self._thread.is_alive(), f"{self.name} did not stop"


def read_committed(bootstrap: str, group: str, topic: str) -> dict[Partition, int]:
    """The group's committed offsets, from the broker (a fresh consumer that joins nothing);
    partitions with nothing committed are left out."""
    reader = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    try:
        got = {
            p: reader.committed(TopicPartition(topic, p), timeout_ms=5000)
            for p in range(PARTITIONS)
        }
    finally:
        reader.close(autocommit=False)
    return {(topic, p): int(offset) for p, offset in got.items() if offset is not None}


class CommittedWatch:
    """Reads the committed offsets every ~2 s on a thread (a read failing while a broker is
    down is counted, not fatal) and on demand; remembers every reading in order (readings
    never overlap: each one's offsets were all read after the previous one's)."""

    def __init__(self, bootstrap: str, group: str, topic: str) -> None:
        self._args = (bootstrap, group, topic)
        self.readings: list[tuple[float, str, dict[Partition, int]]] = []
        self.failed_reads = 0
        self._lock = threading.Lock()
        self._reading = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="committed-watch", daemon=True)
        self._thread.start()

    def read(self, label: str) -> dict[Partition, int] | None:
        # One read at a time: a reading (one partition after the other, each up to 5 s while
        # a broker is down) must not overlap the next, or a slow one, appended last, would
        # carry older offsets than a quick one made meanwhile.
        with self._reading:
            try:
                offsets = read_committed(*self._args)
            except Exception:
                with self._lock:
                    self.failed_reads += 1
                return None
            with self._lock:
                self.readings.append((time.monotonic(), label, offsets))
        return offsets

    def _run(self) -> None:
        while not self._stop.wait(2.0):
            self.read("periodic")

    def close(self) -> None:
        self._stop.set()
        self._thread.join(30)

    def backwards(self, t0: float = 0.0) -> list[str]:
        """Every reading where a partition's committed offset went below an earlier one
        (times from ``t0``)."""
        best: dict[Partition, tuple[float, int]] = {}
        found = []
        with self._lock:
            readings = list(self.readings)
        for t, label, offsets in readings:
            for p, offset in offsets.items():
                seen, high = best.get(p, (0.0, -1))
                if offset < high:
                    found.append(
                        f"{p} {high} at +{seen - t0:.1f}s -> {offset} at +{t - t0:.1f}s ({label})"
                    )
                if offset >= high:
                    best[p] = (t, offset)
        return found


def wait_until(
    condition: Any, timeout_s: float, what: str, members: list[ProcessingMember]
) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        failed = [f"{m.name}: {m.error!r}" for m in members if m.error is not None]
        assert not failed, f"raised out of poll(): {failed}"
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def group_settled(members: list[ProcessingMember], partitions: int) -> bool:
    """Every member stable, the partitions split between them, none twice."""
    if not all(m.settled() for m in members):
        return False
    owned = [tp for m in members for tp in m.consumer.assignment()]
    return len(owned) == len(set(owned)) == partitions


def test_processor_with_the_guard_through_broker_failover(cluster: KafkaCluster) -> None:
    seed = int(os.environ.get("KAFKA_STICKY_FAULTS_SEED", random.randrange(1 << 30)))
    print(f"work seed {seed} (KAFKA_STICKY_FAULTS_SEED={seed} replays it)")
    label = "kafka-python 3 Processor+guard: broker failover"
    t0 = time.monotonic()
    with FaultRun(
        cluster, ["cooperative-sticky"], members=0, partitions=PARTITIONS, rate_per_s=RATE_PER_S
    ) as run:
        group, topic = run.group.group_id, run.topic
        members: list[ProcessingMember] = []
        watch = CommittedWatch(cluster.bootstrap, group, topic)
        try:
            members = [
                ProcessingMember(f"p{i}", cluster.bootstrap, group, topic, seed)
                for i in range(MEMBERS)
            ]
            run.producer.start(RATE_PER_S)
            settled = lambda: group_settled(members, PARTITIONS)  # noqa: E731
            wait_until(settled, 90, "a stable group", members)
            time.sleep(3.0)  # work running on every partition
            watch.read("before the faults")
            # A fourth member joins as the coordinator's broker dies: the others revoke
            # partitions with work in flight while their commits meet a coordinator move.
            members.append(ProcessingMember("joiner", cluster.bootstrap, group, topic, seed))
            time.sleep(JOIN_LEAD_S)
            node = kill_coordinator(run)
            wait_until(settled, 90, f"a stable group after killing broker {node}", members)
            watch.read(f"after killing coordinator {node}")
            rolling_bounce(run)
            wait_until(settled, 90, "a stable group after the rolling bounce", members)
            watch.read("after the rolling bounce")
            run.producer.stop()
            acknowledged = run.producer.acknowledged()
            wanted = {(p, o) for p, offsets in acknowledged.items() for o in offsets}

            def processed() -> set[tuple[Partition, int]]:
                return {(p, o) for m in members for _, p, o in list(m.finished)}

            wait_until(lambda: wanted <= processed(), 120, "every record processed", members)
            wait_until(lambda: not run.uncommitted(), 60, "committed == log end", members)
            watch.read("at the end")
            closing = time.monotonic()  # the members' close revokes everything: not counted
        finally:
            watch.close()
            for m in members:
                m.finish()
        uncommitted = run.uncommitted()
    wall = time.monotonic() - t0

    errors = [f"{m.name}: {m.error!r}" for m in members if m.error is not None]
    finished = [(t, p, o, m) for m in members for t, p, o in m.finished]
    counts = Counter((p, o) for _, p, o, _ in finished)
    lost = sorted(wanted - set(counts))
    duplicates = sum(n - 1 for n in counts.values())
    stale = committed_then_reprocessed(members)
    bound = handover_bound(members)
    foreign = [
        f"{m.name} committed {p}@{o} at +{t - t0:.1f}s without owning it"
        for m in members
        for t, p, o in m.commits
        if not m.owned_at(p, t)
    ]
    refused = sum(m.guard.refused_total for m in members)
    handovers = sum(
        len(ps)
        for m in members
        for t, name, ps in m.callbacks
        if name in ("revoked", "lost") and t < closing
    )
    row = (
        f"{label:<44} lost={len(lost):<3} dups={duplicates:<5} (bound {bound}) "
        f"handovers={handovers:<3} guard_refused={refused:<3} foreign_commits={len(foreign)} "
        f"backwards={len(watch.backwards(t0))} committed_reads={len(watch.readings)}"
        f"(+{watch.failed_reads} failed) poll_errors={len(errors)} wall={wall:.0f}s"
    )
    print(row)
    print("    faults: " + ", ".join(f"{mark.name} at +{mark.t - t0:.1f}s" for mark in run.marks))
    TABLE.parent.mkdir(parents=True, exist_ok=True)
    with TABLE.open("a", encoding="utf-8") as table:
        table.write(row + "\n")

    assert not errors, f"raised out of poll(): {errors}"
    assert not lost, f"{len(lost)} acknowledged records never processed: {lost[:10]}"
    assert not stale, f"re-processed after a commit covered them: {stale[:5]}"
    assert duplicates <= bound, f"{duplicates} duplicates, more than held at handovers ({bound})"
    assert not foreign, foreign[:5]
    backwards = watch.backwards(t0)
    if backwards:
        for m in members:
            print(
                f"    {m.name} commits: "
                + " ".join(f"{p[1]}@{o}+{t - t0:.1f}s" for t, p, o in m.commits)
            )
    assert not backwards, f"committed offsets moved backwards: {backwards[:5]}"
    assert not uncommitted, f"committed != log end (committed, end): {uncommitted}"


def committed_then_reprocessed(members: list[ProcessingMember]) -> list[str]:
    """Records some member started again after a commit past them had been acknowledged
    (by any member): the commit points only ever cover finished records, so the next owner
    must start at or after them."""
    commits: dict[Partition, list[tuple[float, int]]] = {}
    for m in members:
        for t, p, o in m.commits:
            commits.setdefault(p, []).append((t, o))
    starts: dict[tuple[Partition, int], list[tuple[float, str]]] = {}
    for m in members:
        for t, p, o in m.started:
            starts.setdefault((p, o), []).append((t, m.name))
    found = []
    for (p, o), runs in starts.items():
        for t, name in sorted(runs)[1:]:
            covering = [(tc, c) for tc, c in commits.get(p, []) if c > o and tc < t]
            if covering:
                found.append(f"{name} started {p}@{o} after commit {covering[0]}")
    return found


def handover_bound(members: list[ProcessingMember]) -> int:
    """How many records the old owners held uncommitted when they gave partitions up: per
    revocation or loss, the records of that partition finished since the member's last
    commit of it, plus what one member may hold unfinished (:data:`HELD`)."""
    total = 0
    for m in members:
        for t, name, partitions in m.callbacks:
            if name not in ("revoked", "lost"):
                continue
            for p in partitions:
                last = max((o for tc, q, o in m.commits if q == p and tc <= t), default=0)
                total += HELD + sum(
                    1 for tf, q, o in m.finished if q == p and tf <= t and o >= last
                )
    return total
