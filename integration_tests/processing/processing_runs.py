"""What a processing test records, the same for every client, and the checks on it.

A :class:`WorkLog` is filled from the user's function (``started`` / ``finished``), the
processor's ``on_commit`` and the rebalance listener; every entry carries a monotonic time so
the checks can order commits against revocations. Partitions are ``(topic, partition)``
tuples whatever the client.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Partition = tuple[str, int]


@dataclass
class WorkLog:
    """One member's processing, commits and rebalance callbacks (thread-safe)."""

    name: str
    lock: threading.Lock = field(default_factory=threading.Lock)
    finished: list[tuple[float, Partition, int]] = field(default_factory=list)
    commits: list[tuple[float, Partition, int]] = field(default_factory=list)
    callbacks: list[tuple[float, str, frozenset[Partition]]] = field(default_factory=list)

    def done(self, partition: Partition, offset: int) -> None:
        with self.lock:
            self.finished.append((time.monotonic(), partition, offset))

    def committed(self, offsets: dict[Partition, int]) -> None:
        """``on_commit``: note what was committed, when."""
        now = time.monotonic()
        with self.lock:
            self.commits.extend((now, partition, offset) for partition, offset in offsets.items())

    def callback(self, name: str, partitions: set[Partition]) -> None:
        with self.lock:
            self.callbacks.append((time.monotonic(), name, frozenset(partitions)))

    def callback_names(self) -> list[str]:
        return [name for _, name, _ in self.callbacks]

    def revoked_at(self, partition: Partition) -> float:
        times = [t for t, name, ps in self.callbacks if name == "revoked" and partition in ps]
        assert times, f"{self.name} was never revoked {partition}: {self.callbacks}"
        return times[0]


class Recorder:
    """The user's rebalance listener (any client): notes each callback in ``log``."""

    def __init__(self, log: WorkLog) -> None:
        self.log = log

    def on_partitions_revoked(self, revoked: set[Any]) -> None:
        self.log.callback("revoked", {(tp.topic, tp.partition) for tp in revoked})

    def on_partitions_assigned(self, assigned: set[Any]) -> None:
        self.log.callback("assigned", {(tp.topic, tp.partition) for tp in assigned})

    def on_partitions_lost(self, lost: set[Any]) -> None:
        self.log.callback("lost", {(tp.topic, tp.partition) for tp in lost})


def wait_for(condition: Callable[[], bool], timeout_s: float, what: str) -> None:
    """Poll ``condition`` every 0.1 s; fail naming ``what`` after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def processed_counts(*logs: WorkLog) -> Counter[tuple[Partition, int]]:
    """How often each record was finished, over ``logs``."""
    return Counter((p, o) for log in logs for _, p, o in log.finished)


def check_exactly_once(expected: dict[Partition, int], *logs: WorkLog) -> None:
    """Every record of ``expected`` (partition -> record count) finished exactly once."""
    counts = processed_counts(*logs)
    want = {(p, o) for p, n in expected.items() for o in range(n)}
    assert set(counts) == want, (
        f"missing {sorted(want - set(counts))}, extra {sorted(set(counts) - want)}"
    )
    twice = {k: n for k, n in counts.items() if n > 1}
    assert not twice, f"processed more than once: {twice}"


def check_commits_cover_finished(*logs: WorkLog) -> None:
    """Every commit of any member covers only records some member had finished by then."""
    finished = sorted((t, p, o) for log in logs for t, p, o in log.finished)
    for log in logs:
        for when, partition, offset in log.commits:
            done = {o for t, p, o in finished if p == partition and t <= when}
            missing = [o for o in range(offset) if o not in done]
            assert not missing, (
                f"{log.name} committed {partition}@{offset} before {missing} finished"
            )


def check_handover(old: WorkLog, new: WorkLog, partition: Partition) -> int:
    """``old`` made no commit of ``partition`` after it was revoked, and ``new`` started
    ``partition`` at ``old``'s last commit, which is after ``old``'s last finished record.
    Returns that offset."""
    revoked = old.revoked_at(partition)
    late = [(t - revoked, o) for t, p, o in old.commits if p == partition and t > revoked]
    assert not late, f"{old.name} committed {partition} after its revocation: {late}"
    before = [o for t, p, o in old.commits if p == partition]
    finished_old = [o for _, p, o in old.finished if p == partition]
    start = max(before) if before else 0
    assert start == (max(finished_old) + 1 if finished_old else 0), (before, finished_old)
    first_new = min(o for _, p, o in new.finished if p == partition)
    assert first_new == start, f"{new.name} started {partition} at {first_new}, not {start}"
    return start


def fill(bootstrap: str, topic: str, partitions: int, per_partition: int) -> dict[Partition, int]:
    """Write ``per_partition`` records to each partition of ``topic`` (kafka-python producer);
    returns partition -> record count."""
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap, retries=5, retry_backoff_ms=200)
    try:
        for p in range(partitions):
            for n in range(per_partition):
                producer.send(topic, value=f"{p}-{n}".encode(), partition=p)
        producer.flush(30)
    finally:
        producer.close()
    return {(topic, p): per_partition for p in range(partitions)}


class MemberThread:
    """Runs ``turn()`` on a thread until :meth:`finish`, then ``close()`` (a member's loop)."""

    def __init__(self, log: WorkLog, turn: Callable[[], object], close: Callable[[], None]) -> None:
        self.log = log
        self._turn = turn
        self._close = close
        self._stop = threading.Event()
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=log.name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                self._turn()
        except BaseException as exc:
            self.error = exc
        finally:
            try:
                self._close()
            except BaseException as exc:
                self.error = self.error or exc

    def finish(self) -> None:
        """Stop the loop, close the member; fail on what its loop raised."""
        self._stop.set()
        self._thread.join(60)
        assert not self._thread.is_alive(), f"{self.log.name} did not stop"
        assert self.error is None, f"{self.log.name} failed: {self.error!r}"


MakeMember = Callable[..., MemberThread]
"""``make(topic, log, work_s=, poll_interval_ms=, revoke_wait_s=)``: a running member."""


def long_work_run(
    bootstrap: str, topic: str, make: MakeMember, poll_interval_ms: int, per_partition: int = 2
) -> WorkLog:
    """2 partitions x ``per_partition`` records, each 3x ``poll_interval_ms`` of work, one
    member: no rebalance while it works, exactly once, commits of finished records only, all
    committed."""
    expected = fill(bootstrap, topic, 2, per_partition)
    log = WorkLog("solo")
    member = make(
        topic,
        log,
        work_s=3 * poll_interval_ms / 1000,
        poll_interval_ms=poll_interval_ms,
        revoke_wait_s=1.0,
    )
    try:
        wait_for(lambda: len(log.finished) == 2 * per_partition, 90, "the records processed")
        time.sleep(1.5)  # one more commit round and a few polls in the same generation
        before_close = list(log.callbacks)  # close() revokes: not part of the run
    finally:
        member.finish()
    check_exactly_once(expected, log)
    check_commits_cover_finished(log)
    # A fresh topic may reach the first join late (an empty first assignment): the run
    # starts at the first assignment with partitions, and no callback may follow it.
    firsts = [i for i, (_, name, ps) in enumerate(before_close) if name == "assigned" and ps]
    assert firsts and before_close[firsts[0] + 1 :] == [], log.callbacks
    assert firsts[0] == len(before_close) - 1
    last = {p: o for _, p, o in log.commits}
    assert last == expected
    return log


def revoke_run(bootstrap: str, topic: str, make: MakeMember) -> None:
    """2 partitions x 4 records of 1.5 s; a second member joins while the first works: the
    moved partition's revoke waits, commits what finished, nothing after; the next owner
    starts there; exactly once."""
    expected = fill(bootstrap, topic, 2, 4)
    first_log, second_log = WorkLog("first"), WorkLog("second")
    first = make(topic, first_log, work_s=1.5, poll_interval_ms=8000, revoke_wait_s=5.0)
    second = None
    try:
        wait_for(lambda: len(first_log.finished) >= 2, 60, "the first member's work")
        second = make(topic, second_log, work_s=0.1, poll_interval_ms=8000, revoke_wait_s=5.0)
        wait_for(lambda: len(first_log.finished) + len(second_log.finished) >= 8, 90, "all records")
        time.sleep(1.0)
        callbacks = list(first_log.callbacks)  # close() revokes: not part of the run
    finally:
        first.finish()
        if second is not None:
            second.finish()
    check_exactly_once(expected, first_log, second_log)
    check_commits_cover_finished(first_log, second_log)
    moved = {p for _, name, ps in callbacks if name == "revoked" for p in ps}
    assert len(moved) == 1, callbacks
    (partition,) = moved
    start = check_handover(first_log, second_log, partition)
    print(f"handed over {partition} at offset {start}")
    assert 0 < start < expected[partition]  # the revoke landed while work was in flight
