"""Several members in one child process, so that a group of hundreds fits on 2 cores.

A :class:`MemberPack` is one child Python process (``python -m
kafka_sticky_plugin.groups.member_pack``) running any number of members of the Python
clients, each in its own thread with its own consumer, exactly as a :class:`~.member_process.
ThreadMember` runs in the test process. The parent drives it with one JSON line per command
on the child's stdin (``start`` a member incarnation, ``stop`` one cleanly) and reads the same
JSON lines a :class:`~.member_process.ProcessMember` writes (events, deliveries, forwarded
log records), so every analysis of the :class:`~.events.EventLog` applies unchanged. A pack
may run another program speaking the same lines (``command``: a JVM running several Java
members, registered by :func:`.runner.register_pack_command`).
:class:`PackedMember` is the :class:`~.member_process.MemberHandle` of one member in a pack:
a group runner starts, stops and restarts it like any other member (a restart is a new
incarnation in the same process). :meth:`MemberPack.kill` crashes the whole process (SIGKILL:
no LeaveGroup, no commit) and records ``killed`` for every member it was running.

Invariant: as for a process member, every incarnation ends with a ``stopped`` event (clean
close, written by the child) or a ``killed`` event (written by the parent).
"""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import IO, Any

from ..lifetime import start_tied
from .events import Delivery, EventLog, OwnershipEvent
from .member_config import LoopControl, MemberConfig
from .member_process import (
    MemberHandle,
    _event_from_json,
    _JsonLinesSink,
    forward_logs,
    member_loop,
)

__all__ = ["MemberPack", "PackedMember", "main"]


class MemberPack:
    """One child process running several members (see the module docstring)."""

    def __init__(
        self, log: EventLog, python: str = "", command: Sequence[str] | None = None
    ) -> None:
        """``command``: the child program (default: this package's pack on ``python``)."""
        self._log = log
        python = python or sys.executable
        self._command = (
            list(command) if command else [python, "-m", "kafka_sticky_plugin.groups.member_pack"]
        )
        self._process: subprocess.Popen[str] | None = None
        self._reader: threading.Thread | None = None
        self._lock = threading.Condition()
        #: (member, incarnation) -> "starting" | "running" | "stopped" | "error" | "killed"
        self._states: dict[tuple[str, int], str] = {}

    # -- the child's output ----------------------------------------------------------------
    def _read(self, stream: IO[str]) -> None:
        with stream:
            for line in stream:
                self._handle(line)
        with self._lock:
            self._lock.notify_all()

    def _handle(self, line: str) -> None:
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            return
        kind = message.get("type")
        if kind == "event":
            event = _event_from_json(message["event"])
            self._log.add(event)
            state = {"started": "running", "stopped": "stopped", "error": "error"}.get(event.kind)
            if state is not None:
                with self._lock:
                    self._states[(event.member, event.incarnation)] = state
                    self._lock.notify_all()
        elif kind == "deliveries":
            self._log.add_deliveries(Delivery(**d) for d in message["deliveries"])
        elif kind == "log":
            import logging

            logging.getLogger(str(message["name"])).log(
                int(message["level"]), "%s [member pack child process]", message["message"]
            )

    # -- lifecycle -------------------------------------------------------------------------
    def _ensure_started(self) -> subprocess.Popen[str]:
        if self._process is None:
            self._process = start_tied(
                self._command,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                stdin=subprocess.PIPE,
                text=True,
                encoding="utf-8",
            )
            if self._process.stdout is None:  # pragma: no cover - PIPE always gives a stream
                raise RuntimeError("member pack has no stdout")
            self._reader = threading.Thread(
                target=self._read, args=(self._process.stdout,), daemon=True
            )
            self._reader.start()
        return self._process

    def _send(self, command: dict[str, Any]) -> None:
        process = self._ensure_started()
        if process.stdin is None:  # pragma: no cover - PIPE always gives a stream
            raise RuntimeError("member pack has no stdin")
        process.stdin.write(json.dumps(command) + "\n")
        process.stdin.flush()

    def _wait(self, key: tuple[str, int], states: set[str], timeout_s: float) -> str | None:
        deadline = time.monotonic() + timeout_s
        with self._lock:
            while self._states.get(key) not in states:
                left = deadline - time.monotonic()
                if left <= 0 or not self.alive:
                    return self._states.get(key)
                self._lock.wait(min(left, 0.5))
            return self._states[key]

    def start_member(self, config: MemberConfig, timeout_s: float = 30.0) -> None:
        """Start one member incarnation in the pack; returns once it has subscribed."""
        key = (config.member, config.incarnation)
        with self._lock:
            self._states[key] = "starting"
        self._send({"start": replace(config, security=None).to_json()})
        state = self._wait(key, {"running", "error", "stopped"}, timeout_s)
        if state != "running":
            raise TimeoutError(f"packed member {config.member} not subscribed ({state})")

    def stop_member(self, config: MemberConfig, timeout_s: float = 30.0) -> None:
        """Close one member cleanly (commit on revoke, LeaveGroup); the others go on."""
        key = (config.member, config.incarnation)
        if not self.member_alive(config):
            return
        self._send({"stop": config.member, "incarnation": config.incarnation})
        if self._wait(key, {"stopped", "error"}, timeout_s) not in ("stopped", "error"):
            raise TimeoutError(f"packed member {config.member} did not stop in {timeout_s}s")

    def member_alive(self, config: MemberConfig) -> bool:
        with self._lock:
            state = self._states.get((config.member, config.incarnation))
        return self.alive and state in ("starting", "running")

    @property
    def alive(self) -> bool:
        return self._process is not None and self._process.poll() is None

    @property
    def pid(self) -> int | None:
        """The child's process id while it runs."""
        return self._process.pid if self.alive and self._process is not None else None

    def _close_stdin(self) -> None:
        if self._process is not None and self._process.stdin is not None:
            with contextlib.suppress(OSError):  # the child is gone: nothing left to flush
                self._process.stdin.close()

    def kill(self) -> None:
        """Crash the process (SIGKILL): every member it runs is gone at once, no LeaveGroup."""
        if self._process is None or self._process.poll() is not None:
            self._close_stdin()
            return
        self._process.kill()
        self._process.wait(10)
        self._close_stdin()
        now = time.monotonic()
        with self._lock:
            running = [k for k, s in self._states.items() if s in ("starting", "running")]
            for key in running:
                self._states[key] = "killed"
        for member, incarnation in running:
            self._log.add(
                OwnershipEvent(t=now, member=member, incarnation=incarnation, kind="killed")
            )
        if self._reader is not None:
            self._reader.join(5)

    def close(self, timeout_s: float = 30.0) -> None:
        """Stop every member cleanly (SIGTERM), then the process; SIGKILL if it hangs."""
        if self._process is None or self._process.poll() is not None:
            self._close_stdin()
            return
        self._process.send_signal(signal.SIGTERM)
        try:
            self._process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.kill()
            raise TimeoutError("member pack ignored SIGTERM") from None
        self._close_stdin()
        if self._reader is not None:
            self._reader.join(5)

    def handle(self, config: MemberConfig) -> PackedMember:
        """A handle on member incarnation ``config`` in this pack (not started yet)."""
        return PackedMember(config, self)


class PackedMember(MemberHandle):
    """One member of a :class:`MemberPack` (see the module docstring)."""

    def __init__(self, config: MemberConfig, pack: MemberPack) -> None:
        self.config = config
        self.pack = pack

    def start(self, timeout_s: float = 30.0) -> None:
        self.pack.start_member(self.config, timeout_s)

    def stop(self, timeout_s: float = 30.0) -> None:
        self.pack.stop_member(self.config, timeout_s)

    def kill(self) -> None:
        """Crash this member's whole process (every member of the pack with it)."""
        self.pack.kill()

    @property
    def alive(self) -> bool:
        return self.pack.member_alive(self.config)


class _Terminated(Exception):
    """SIGTERM in the child: stop reading commands, close every member."""


def main() -> int:
    """Child entry point: run members as the parent's stdin commands say, until SIGTERM or
    the end of stdin; then close every member cleanly."""
    sink = _JsonLinesSink(sys.stdout)
    forward_logs(sink, False)
    stops: dict[tuple[str, int], threading.Event] = {}
    threads: list[threading.Thread] = []
    everything = threading.Event()

    def run(config: MemberConfig, stop: threading.Event) -> None:
        def should_stop() -> bool:
            return stop.is_set() or everything.is_set()

        try:
            member_loop(config.client)(config, sink, LoopControl(should_stop))
        except BaseException as exc:  # reported as the member's error; the others go on
            sink.add(
                OwnershipEvent(
                    t=time.monotonic(),
                    member=config.member,
                    incarnation=config.incarnation,
                    kind="error",
                    detail=repr(exc),
                )
            )

    def on_term(_signum: int, _frame: Any) -> None:
        everything.set()
        raise _Terminated

    signal.signal(signal.SIGTERM, on_term)
    try:
        for line in sys.stdin:
            command = json.loads(line)
            if "start" in command:
                config = MemberConfig.from_json(command["start"])
                stop = threading.Event()
                stops[(config.member, config.incarnation)] = stop
                thread = threading.Thread(target=run, args=(config, stop), daemon=True)
                threads.append(thread)
                thread.start()
            elif "stop" in command:
                stop_one = stops.get((command["stop"], int(command["incarnation"])))
                if stop_one is not None:
                    stop_one.set()
    except _Terminated:
        pass
    everything.set()
    for thread in threads:
        thread.join(30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
