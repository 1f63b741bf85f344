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
from dataclasses import dataclass, field

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
