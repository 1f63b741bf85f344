"""The processing ledger (pure): per-partition order, commit points, ownership, errors."""

from __future__ import annotations

import random

import pytest

from kafka_sticky_plugin.processing import Ledger, ProcessingError


def _ledger(**lanes: list[int]) -> Ledger[str, str]:
    ledger: Ledger[str, str] = Ledger()
    for partition, offsets in lanes.items():
        ledger.offer(partition, [(o, f"{partition}@{o}") for o in offsets])
    return ledger


def test_one_record_per_partition_at_a_time_in_offset_order() -> None:
    """Each lane starts its head record only when the previous one has finished."""
    ledger = _ledger(a=[0, 1, 2], b=[7])
    first = ledger.start()
    assert sorted((t.partition, t.offset) for t in first) == [("a", 0), ("b", 7)]
    assert ledger.start() == []  # both lanes busy
    ledger.finish(first[0])
    assert [(t.partition, t.offset) for t in ledger.start()] == [("a", 1)]


def test_commit_point_is_after_the_highest_finished_record_only() -> None:
    """Nothing is offered for commit before a record finishes; then the next offset."""
    ledger = _ledger(a=[10, 11, 15])
    (task,) = ledger.start()
    assert ledger.commits() == {}
    ledger.finish(task)
    assert ledger.commits() == {"a": 11}
    (task,) = ledger.start()
    assert ledger.commits() == {"a": 11}  # 11 runs: not covered
    ledger.committed({"a": 11})
    assert ledger.commits() == {}
    ledger.finish(task)
    (task,) = ledger.start()
    ledger.finish(task)
    assert ledger.commits() == {"a": 16}  # offsets with gaps (compaction, markers)


def test_stale_work_of_a_released_partition_changes_nothing() -> None:
    """Work that ends after its partition was released (revoked, lost) moves no commit point,
    also when the same partition is owned again."""
    ledger = _ledger(a=[0, 1])
    (old,) = ledger.start()
    ledger.release({"a"})
    ledger.offer("a", [(0, "again")])
    assert ledger.finish(old) is False
    assert ledger.commits() == {}
    (new,) = ledger.start()
    assert new.record == "again" and ledger.finish(new) is True
    assert ledger.commits() == {"a": 1}


def test_records_offered_twice_are_queued_once() -> None:
    """A record at or below the highest offset seen is not queued again while owned."""
    ledger = _ledger(a=[0, 1])
    assert ledger.offer("a", [(1, "dup"), (2, "new")]) == 1
    assert ledger.held == 3


def test_failure_stops_the_partition_and_is_reported_once() -> None:
    """A failed record drops its lane's queue, keeps the commit point before it, stays busy."""
    ledger = _ledger(a=[0, 1, 2], b=[0])
    tasks = {t.partition: t for t in ledger.start()}
    ledger.finish(tasks["a"])
    (a1,) = ledger.start()
    cause = ValueError("bad record")
    assert ledger.fail(a1, cause)
    (error,) = ledger.take_errors()
    assert isinstance(error, ProcessingError) and error.offset == 1 and error.__cause__ is cause
    assert ledger.take_errors() == []
    assert ledger.commits() == {"a": 1}
    assert ledger.start() == [] and "a" in ledger.busy()
    assert ledger.offer("a", [(3, "later")]) == 0


def test_drop_queued_keeps_running_work() -> None:
    """Revoking drops what has not started; the running record still finishes and counts."""
    ledger = _ledger(a=[0, 1, 2])
    (task,) = ledger.start()
    assert ledger.drop_queued({"a"}) == 2
    assert ledger.running({"a"}) == {"a"}
    ledger.finish(task)
    assert ledger.running({"a"}) == set() and ledger.busy() == set()
    assert ledger.commits({"a"}) == {"a": 1}


def test_busy_counts_queued_and_running_against_the_share() -> None:
    """A partition is busy from ``share`` records held on, or when stopped by an error."""
    ledger = _ledger(a=[0, 1, 2], b=[0])
    ledger.start()
    assert ledger.busy() == {"a", "b"}
    assert ledger.busy(share=3) == {"a"}
    assert ledger.busy(share=4) == set()


def test_start_limit_bounds_the_tasks_started() -> None:
    """``start(limit)`` starts at most ``limit`` records."""
    ledger = _ledger(a=[0], b=[0], c=[0])
    assert len(ledger.start(limit=2)) == 2
    assert len(ledger.start()) == 1


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_random_runs_process_each_record_once_in_order(seed: int) -> None:
    """Random interleavings of offer/start/finish: every record runs once, in order per
    partition, and every commit point covers finished records only."""
    print(f"seed={seed}")
    rng = random.Random(seed)
    ledger: Ledger[int, int] = Ledger()
    next_offset = {p: 0 for p in range(4)}
    running = []
    ran: dict[int, list[int]] = {p: [] for p in range(4)}
    finished: dict[int, set[int]] = {p: set() for p in range(4)}
    for _ in range(500):
        step = rng.random()
        if step < 0.4:
            p = rng.randrange(4)
            batch = [(next_offset[p] + i, i) for i in range(rng.randint(1, 3))]
            next_offset[p] += len(batch)
            ledger.offer(p, batch)
        elif step < 0.7:
            for task in ledger.start():
                ran[task.partition].append(task.offset)
                running.append(task)
        elif running:
            task = running.pop(rng.randrange(len(running)))
            ledger.finish(task)
            finished[task.partition].add(task.offset)
        for p, point in ledger.commits().items():
            assert set(range(point)) <= finished[p]
    for p in range(4):
        assert ran[p] == sorted(set(ran[p]))
