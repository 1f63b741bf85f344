"""Child processes that die with their parent, and signals that end a command cleanly.

Every broker and member process this package starts goes through :func:`start_tied`: on
Linux the child asks the kernel for ``SIGKILL`` when its parent dies (``prctl`` with
``PR_SET_PDEATHSIG``, set between fork and exec), so a parent ended by ``SIGKILL``, or by a
signal it does not handle, takes its brokers and members with it. Elsewhere the child is
started plainly (the clean-shutdown paths still stop it).

Invariants:

- The kernel fires the parent-death signal when the *thread* that forked the child exits,
  not the process. :func:`start_tied` therefore forks from the main thread, or, when called
  from any other thread, from one long-lived spawner thread that lives as long as the
  interpreter; a child is never tied to a short-lived thread.
- The child re-checks its parent after setting the signal: if the parent died between the
  fork and the ``prctl`` call, the child kills itself before exec.
- A child runs in its own session (so its own process group): a terminal's Ctrl-C reaches
  only the parent, which then stops its children in order (members leave the group before
  the broker stops), instead of the broker dying first under members that still need it.
- Every child carries :data:`RUN_MARKER_ENV` from its parent's environment (the test suite
  sets it per session and looks for leftovers carrying it with :func:`leftover_processes`).

:func:`signals_end_cleanly` turns ``SIGTERM`` and ``SIGHUP`` into :class:`Terminated`, raised
in the main thread, so ``finally`` blocks and context managers stop what they started, as
``KeyboardInterrupt`` does for Ctrl-C.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import queue
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

__all__ = [
    "LEFTOVER_KINDS",
    "RUN_MARKER_ENV",
    "Leftover",
    "Terminated",
    "end_leftovers",
    "exit_status",
    "leftover_processes",
    "new_run_marker",
    "process_alive",
    "signals_end_cleanly",
    "start_tied",
]

#: Environment variable naming a test session (or any run) whose processes can be found later.
RUN_MARKER_ENV = "KAFKA_STICKY_RUN"

_PR_SET_PDEATHSIG = 1


class Terminated(BaseException):
    """SIGTERM or SIGHUP arrived while :func:`signals_end_cleanly` was in force.

    A ``BaseException`` (like ``KeyboardInterrupt``) so ``except Exception`` blocks on the way
    up do not swallow it.
    """

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(f"stopped by {signal.Signals(signum).name}")


def exit_status(signum: int) -> int:
    """The shell's status for a command ended by ``signum`` (128 + the signal number)."""
    return 128 + signum


def _pdeathsig_preexec(parent: int) -> Callable[[], None] | None:
    """The function the child runs before exec (None where prctl does not exist)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):  # pragma: no cover - every Linux libc has prctl
        return None

    def tie() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the signal was set
            os.kill(os.getpid(), signal.SIGKILL)

    return tie


class _Spawner:
    """One daemon thread that lives as long as the interpreter and forks on request."""

    def __init__(self) -> None:
        self._requests: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]]] = (
            queue.SimpleQueue()
        )
        self._thread = threading.Thread(target=self._run, name="tied-spawner", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            start, done = self._requests.get()
            try:
                done.set_result(start())
            except BaseException as exc:  # handed to the caller's thread
                done.set_exception(exc)

    def call(self, start: Callable[[], Any]) -> Any:
        done: Future[Any] = Future()
        self._requests.put((start, done))
        return done.result()


_spawner: _Spawner | None = None
_spawner_lock = threading.Lock()


def _spawn(start: Callable[[], Any]) -> Any:
    global _spawner
    if threading.current_thread() is threading.main_thread():
        return start()
    with _spawner_lock:
        if _spawner is None:
            _spawner = _Spawner()
    return _spawner.call(start)


def start_tied(command: Sequence[str], **popen: Any) -> subprocess.Popen[Any]:
    """``subprocess.Popen(command, **popen)`` for a child that dies with this process.

    See the module docstring for the guarantees; ``popen`` takes Popen's keyword arguments
    except ``preexec_fn`` and ``start_new_session``.
    """
    if "preexec_fn" in popen or "start_new_session" in popen:
        raise TypeError("start_tied sets preexec_fn and start_new_session itself")
    tie = _pdeathsig_preexec(os.getpid())

    def start() -> subprocess.Popen[Any]:
        return subprocess.Popen(list(command), preexec_fn=tie, start_new_session=True, **popen)

    process: subprocess.Popen[Any] = _spawn(start)
    return process


@contextlib.contextmanager
def signals_end_cleanly(
    signums: Sequence[int] = (signal.SIGTERM, signal.SIGHUP),
) -> Iterator[None]:
    """Within the block, each of ``signums`` raises :class:`Terminated` in the main thread.

    A no-op when not called from the main thread (only it can install handlers). The previous
    handlers come back at the end of the block.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        raise Terminated(signum)

    previous = {signum: signal.signal(signum, on_signal) for signum in signums}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


#: What a leftover broker or client process's command line contains, by kind.
LEFTOVER_KINDS: dict[str, str] = {
    "tansu broker": "tansu",
    "Apache Kafka broker": "kafka.Kafka",
    "Java member / codec": "kafkasticky.",
    "member process": "kafka_sticky_plugin.groups.",
    "broker command": "kafka_sticky_plugin broker",
    "demo command": "kafka_sticky_plugin demo",
    "conformance command": "kafka_sticky_plugin conformance",
    "librdkafka probe": "import confluent_kafka",
}


@dataclass(frozen=True)
class Leftover:
    """A live process of a run: its id, its kind (a key of :data:`LEFTOVER_KINDS`) and its
    command line."""

    pid: int
    kind: str
    command: str


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:  # gone, or not ours to read
        return b""


#: How long :func:`leftover_processes` waits for a process caught in the middle of ``exec``
#: to show its command line (seconds), and how often it looks.
_EXEC_WAIT_S = 2.0
_EXEC_POLL_S = 0.02


def _command_of(proc: Path) -> str:
    """The process's command line, ``''`` for a zombie, a kernel thread or a process gone.

    Linux shows an empty command line for a moment in the middle of ``exec`` (the new
    program's memory is in place before its arguments are), and ``subprocess.Popen`` can
    return inside that moment: a live user process with an empty command line is therefore
    read again until it shows one (at most :data:`_EXEC_WAIT_S`)."""
    deadline = time.monotonic() + _EXEC_WAIT_S
    while True:
        command = _read(proc / "cmdline").replace(b"\0", b" ").decode("utf-8", "replace")
        if command.strip() or time.monotonic() >= deadline or not _in_exec(proc):
            return command.strip()
        time.sleep(_EXEC_POLL_S)


def _in_exec(proc: Path) -> bool:
    """Whether a process without a command line may be between two programs: alive, not a
    zombie, and not a kernel thread (whose parent is ``kthreadd``, pid 2, or none)."""
    stat = _read(proc / "stat").decode("ascii", "replace")
    fields = stat.rpartition(")")[2].split()
    return len(fields) > 1 and fields[0] != "Z" and int(fields[1]) not in (0, 2) and proc.exists()


def _parent_of(proc: Path) -> int:
    stat = _read(proc / "stat").decode("ascii", "replace")
    fields = stat.rpartition(")")[2].split()
    return int(fields[1]) if len(fields) > 1 else 0


def process_alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie, dead but not yet reaped, counts as gone). Linux
    (``/proc``)."""
    try:
        stat = (Path("/proc") / str(pid) / "stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def leftover_processes(marker: str | None, root: int | None = None) -> list[Leftover]:
    """Live broker or client processes (see :data:`LEFTOVER_KINDS`) that carry
    ``RUN_MARKER_ENV=marker`` in their environment or descend from ``root`` (default: this
    process), this process excluded. Linux only (``/proc``); elsewhere always empty."""
    proc_root = Path("/proc")
    if not proc_root.is_dir():
        return []
    me = os.getpid()
    root = me if root is None else root
    parents: dict[int, int] = {}
    lines: dict[int, str] = {}
    marked: set[int] = set()
    needle = f"{RUN_MARKER_ENV}={marker}".encode() if marker else None
    for proc in proc_root.iterdir():
        if not proc.name.isdigit() or int(proc.name) == me:
            continue
        pid = int(proc.name)
        command = _command_of(proc)
        if not command:  # a zombie, a kernel thread, or gone
            continue
        lines[pid] = command
        parents[pid] = _parent_of(proc)
        if needle is not None and needle in _read(proc / "environ").split(b"\0"):
            marked.add(pid)

    def descends(pid: int) -> bool:
        seen = set()
        while pid > 1 and pid not in seen:
            seen.add(pid)
            pid = parents.get(pid, 0)
            if pid == root:
                return True
        return False

    found = []
    for pid, command in sorted(lines.items()):
        kind = next((k for k, text in LEFTOVER_KINDS.items() if text in command), None)
        if kind is not None and (pid in marked or descends(pid)):
            found.append(Leftover(pid, kind, command))
    return found


def new_run_marker() -> str:
    """Give this process (and so every child it starts from now on) a fresh run marker."""
    marker = uuid.uuid4().hex
    os.environ[RUN_MARKER_ENV] = marker
    return marker


def end_leftovers(marker: str | None) -> str:
    """SIGKILL every :func:`leftover_processes` of ``marker`` and describe them ('' if none).

    For the end of a test session: what it left behind is reported, and never left running.
    """
    left = leftover_processes(marker)
    for process in left:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(process.pid, signal.SIGKILL)
    if not left:
        return ""
    lines = [f"  pid {p.pid} ({p.kind}): {p.command[:300]}" for p in left]
    return "\n".join(
        [f"this run left {len(left)} broker or client process(es) running (now killed):", *lines]
    )
