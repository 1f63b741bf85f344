"""The auto-commit before a rejoin (issue 24; issue 23 saw it at a KIP-848 conversion): on
kafka-python 2.2, 2.3 and 3.0 it is bounded by its own deadline, not by what is left of the
``poll()`` that started the rebalance, and when it does fail the hooks say so in one WARNING
line (group, partition count, reason), the traceback only at DEBUG (2.0.2 and kafka-python-ng
commit without a deadline: only the zero-poll test applies to them).

Before the fix a member polling with ``timeout_ms=0`` failed every pre-rebalance commit with a
multi-line ``ERROR ... KafkaTimeoutError: None`` traceback (the client hands the commit the
poll's remaining time, here none), and its consumed positions were never committed.
"""

from __future__ import annotations

import inspect
import logging
import os
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hooks_harness import wait_stable
from kafka.coordinator.consumer import ConsumerCoordinator

pytestmark = pytest.mark.timeout(120)

#: kafka-python 2.2+ commits with a deadline (2.0.2 and kafka-python-ng block until answered).
COMMIT_HAS_DEADLINE = (
    "timeout_ms" in inspect.signature(ConsumerCoordinator.commit_offsets_sync).parameters
)

HOOKS_LOGGER = "kafka_sticky_plugin.hooks"


def _debug_tracebacks(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    """The hooks' DEBUG records carrying a traceback."""
    return [
        r
        for r in caplog.records
        if r.name == HOOKS_LOGGER and r.levelno == logging.DEBUG and r.exc_info is not None
    ]


def _commit_lines(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    """Commit-failure lines at WARNING or above: the hooks', and the client's own (2.x logs
    "Offset commit failed" with a traceback when it commits for the hooks)."""
    return [
        r
        for r in caplog.records
        if r.levelno >= logging.WARNING
        and (
            (r.name == HOOKS_LOGGER and "pre-rebalance commit" in r.getMessage())
            or (r.name.startswith("kafka.") and "commit failed" in r.getMessage())
        )
    ]


def test_pre_rebalance_commit_is_not_bounded_by_a_zero_poll(
    group: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """A member polling with ``timeout_ms=0`` (auto-commit on) hands half its partitions to
    a newcomer: the commit before the rejoin succeeds (no failure line at all)."""
    caplog.set_level(logging.INFO, logger=HOOKS_LOGGER)
    g = group({"t": 6})
    first = g.member("a", poll_ms=0)
    everything = g.all_partitions()
    wait_stable([first], everything)
    time.sleep(1.0)  # some records consumed, so there are positions to commit
    second = g.member("b", poll_ms=0)
    wait_stable([first, second], everything)
    assert not _commit_lines(caplog), [r.getMessage() for r in _commit_lines(caplog)]


def _listening_pid(port: int) -> int | None:
    """The pid of the local process listening on TCP ``port`` (Linux /proc), else ``None``."""
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        path = Path(table)
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            fields = line.split()
            local, state, inode = fields[1], fields[3], fields[9]
            if state == "0A" and int(local.rsplit(":", 1)[1], 16) == port:
                inodes.add(f"socket:[{inode}]")
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            for fd in (entry / "fd").iterdir():
                if os.readlink(fd) in inodes:
                    return int(entry.name)
        except OSError:
            continue
    return None


@contextmanager
def _frozen(pid: int) -> Iterator[None]:
    """The broker stopped with SIGSTOP for the block, always resumed after it."""
    os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(pid, signal.SIGCONT)


@pytest.mark.skipif(not COMMIT_HAS_DEADLINE, reason="this client's commit has no deadline")
def test_a_failed_pre_rebalance_commit_is_one_warning_line(
    group: Any, broker: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """The broker is frozen (SIGSTOP) just before a member changes its subscription: the
    commit before its rejoin gets no answer within its deadline (half the 10 s poll interval)
    and fails. The hooks log exactly one WARNING line naming the group, the partition count
    and the reason, with no traceback (that is at DEBUG only) and nothing at ERROR; once the
    broker resumes the group settles on both topics."""
    if not broker.kind.startswith(("embedded-tansu", "apache-kafka")):
        pytest.skip(f"the test freezes the broker it started; this one is {broker.kind}")
    pid = _listening_pid(int(broker.bootstrap.rsplit(":", 1)[1]))
    if pid is None:
        pytest.skip("no process found listening on the broker's port")
    caplog.set_level(logging.DEBUG, logger=HOOKS_LOGGER)
    g = group({"t": 4, "u": 2})
    member = g.member("a", topics=["t"])
    wait_stable([member], g.all_partitions("t"))
    time.sleep(1.0)  # records consumed: positions to commit
    with _frozen(pid):
        member.resubscribe([g.names["t"], g.names["u"]])
        deadline = time.monotonic() + 20
        # The member's thread logs the WARNING, then the DEBUG traceback: wait for both (this
        # thread could otherwise read the records between the two calls).
        while time.monotonic() < deadline and not (
            _commit_lines(caplog) and _debug_tracebacks(caplog)
        ):
            time.sleep(0.2)
    lines = _commit_lines(caplog)
    assert len(lines) == 1, [r.getMessage() for r in lines]
    line = lines[0]
    message = line.getMessage()
    assert line.levelno == logging.WARNING and line.exc_info is None, message
    assert g.group_id in message and "of 4 partitions" in message, message
    assert "no answer from the group coordinator within 5000 ms" in message, message
    assert "\n" not in message, message
    ours_at_error = [
        r for r in caplog.records if r.name.startswith("kafka_sticky_plugin") and r.levelno >= 40
    ]
    assert not ours_at_error, [r.getMessage() for r in ours_at_error]
    assert _debug_tracebacks(caplog), "the traceback belongs at DEBUG"
    wait_stable([member], g.all_partitions(), timeout_s=60)
