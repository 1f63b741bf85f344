"""Whatever ends the ``broker`` or ``demo`` command, its Tansu broker ends with it.

Each test starts the command as a user would (a subprocess carrying a fresh run marker, see
:mod:`kafka_sticky_plugin.lifetime`), waits until its broker answers, ends the command
with one signal, then checks that no process of that run remains and the port is free again.
These tests do not use the session broker: the command under test starts its own.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from example_runs import wait_for_line

from kafka_sticky_plugin.brokers.embedded import free_loopback_port, loopback_port_is_free
from kafka_sticky_plugin.lifetime import RUN_MARKER_ENV, leftover_processes

_started: list[subprocess.Popen[str]] = []


@pytest.fixture(autouse=True)
def _kill_what_is_left() -> Iterator[None]:
    """Whatever a failed test left running is killed (the command, then its broker)."""
    yield
    while _started:
        process = _started.pop()
        if process.poll() is None:
            process.kill()
            process.wait(10)
        if process.stdout is not None:
            process.stdout.close()


def _ctrl_c_as_a_terminal_gives_it() -> None:
    """In the child before exec: SIGINT at its default, as a terminal's foreground job has it.
    A suite started in the background of a non-interactive shell (``make test &``) inherits
    SIGINT ignored, and a Python started with SIGINT ignored keeps ignoring it (no
    KeyboardInterrupt), so the Ctrl-C tests would test the launcher, not the command."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start(marker: str, *args: str, own_group: bool = False) -> subprocess.Popen[str]:
    """The command in a subprocess (``own_group``: as a terminal runs it, the leader of its
    own process group, so a signal can go to the whole group as Ctrl-C does)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "kafka_sticky_plugin", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        env=dict(os.environ, **{RUN_MARKER_ENV: marker, "PYTHONUNBUFFERED": "1"}),
        start_new_session=own_group,
        preexec_fn=_ctrl_c_as_a_terminal_gives_it,
    )
    _started.append(process)
    return process


def _assert_nothing_left(marker: str, port: int, command: subprocess.Popen[str]) -> None:
    """No process of the run (marked with ``marker``, or still under ``command``) within 10 s,
    and the port can be bound again by then. Not "every descendant of pytest": the session's
    own broker is one, and it must survive this file."""
    deadline = time.monotonic() + 10
    left = leftover_processes(marker, root=command.pid)
    while left and time.monotonic() < deadline:
        time.sleep(0.2)
        left = leftover_processes(marker, root=command.pid)
    for process in left:  # never leave them behind, even when the test fails
        os.kill(process.pid, signal.SIGKILL)
    assert not left, f"left running: {left}"
    # A process that is still exiting no longer shows its environment (so no marker) but may
    # hold its socket a moment longer: the port gets the rest of the same 10 s.
    while not loopback_port_is_free(port) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert loopback_port_is_free(port), f"127.0.0.1:{port} is still taken"


def _finish(process: subprocess.Popen[str]) -> str:
    try:
        out, _ = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)
    return out


@pytest.mark.timeout(60)
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGKILL])
def test_the_broker_command_takes_tansu_with_it(signum: int) -> None:
    marker, port = uuid.uuid4().hex, free_loopback_port()
    process = _start(marker, "broker", "--port", str(port))
    wait_for_line(process, "Ctrl-C", 30)
    process.send_signal(signum)
    try:
        out = _finish(process)
    finally:
        _assert_nothing_left(marker, port, process)
    if signum != signal.SIGKILL:
        assert process.returncode == 0, out
        assert "broker stopped" in out


def _demo_port(banner: str) -> int:
    found = re.search(r"at 127\.0\.0\.1:(\d+)", banner)
    assert found, banner
    return int(found.group(1))


@pytest.mark.timeout(90)
@pytest.mark.parametrize(
    ("signum", "status", "said"),
    [
        (signal.SIGINT, 130, "interrupted (Ctrl-C)"),
        (signal.SIGTERM, 143, "stopped by SIGTERM"),
        (signal.SIGHUP, 129, "stopped by SIGHUP"),
        (signal.SIGKILL, -signal.SIGKILL, None),
    ],
)
def test_the_demo_takes_tansu_with_it(
    signum: int, status: int, said: str | None, tmp_path: Path
) -> None:
    """Ended mid-run: the broker is gone, and a signal it handles prints one line, no
    traceback, with the shell's status for that signal."""
    marker = uuid.uuid4().hex
    process = _start(marker, "demo", "--strategy", "sticky", "--out", str(tmp_path))
    banner = "".join(wait_for_line(process, "broker: ", 60))
    port = _demo_port(banner)
    wait_for_line(process, "", 30)  # the scenario has started (one more line)
    process.send_signal(signum)
    try:
        out = _finish(process)
    finally:
        _assert_nothing_left(marker, port, process)
    assert process.returncode == status, out
    if said is not None:
        assert "Traceback" not in out, out
        last = out.strip().splitlines()[-1]
        assert said in last, out


@pytest.mark.timeout(90)
def test_ctrl_c_in_a_terminal_stops_the_demo_at_once(tmp_path: Path) -> None:
    """A terminal's Ctrl-C signals the whole foreground process group. The broker must not
    die first under members that still need it (their shutdown then waited out timeouts
    for minutes): the demo stops within seconds, prints one line, exits 130."""
    marker = uuid.uuid4().hex
    process = _start(marker, "demo", "--strategy", "sticky", "--out", str(tmp_path), own_group=True)
    port = _demo_port("".join(wait_for_line(process, "broker: ", 60)))
    wait_for_line(process, "", 30)  # the scenario has started (one more line)
    os.killpg(process.pid, signal.SIGINT)
    started = time.monotonic()
    try:
        out = _finish(process)
    finally:
        _assert_nothing_left(marker, port, process)
    took = time.monotonic() - started
    assert process.returncode == 130, out
    assert "Traceback" not in out, out
    assert "interrupted (Ctrl-C)" in out.strip().splitlines()[-1], out
    assert took < 20, f"the demo took {took:.0f} s to stop after Ctrl-C"
