"""Members as threads or as child processes, with one interface.

:class:`ThreadMember` runs :func:`~.kafka_python_member.consume_loop` in a thread of this process
(cheap: use it by default). :class:`ProcessMember` runs it in a child Python process that reports
JSON lines on its stdout; the parent can then freeze it exactly like a debugger does
(``SIGSTOP``: no poll, no heartbeat, sockets left open), thaw it (``SIGCONT``) or crash it
(``SIGKILL``), which a thread cannot do.

:func:`member_loop` is the one place that picks a Python client's loop
(:attr:`~.member_config.MemberConfig.client`: kafka-python, aiokafka or confluent); the loops
share :mod:`.member_config` and never import one another.

Run as ``python -m kafka_sticky_plugin.groups.member_process CONFIG_JSON`` it is the child:
SIGTERM asks it to stop cleanly (close the consumer, leave the group). The child's WARNING and
ERROR records of this package's loggers go to the parent too, which logs them again under the
same logger name and level with ``[member NAME-INCARNATION, child process]`` appended, so a
test's ``caplog`` sees what a child member's hooks said (the message, then the traceback if
the record has one). With :attr:`~.member_config.MemberConfig.debug_logs` the child forwards
every record of :data:`~.member_config.DEBUG_LOGGERS` at DEBUG and above instead (its
client's own lines and librdkafka's included), so a test that scans the logs reads the
child's lines as well as its own.

Invariant: every incarnation ends with a ``stopped`` event (clean close) or a ``killed``
event (written by the parent), so ownership intervals always close.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, replace
from pathlib import Path
from typing import IO, Any

from ..lifetime import start_tied
from .events import Delivery, EventLog, OwnershipEvent
from .member_config import (
    DEBUG_LOGGERS,
    EventSink,
    LoopControl,
    MemberConfig,
    SubscriptionChange,
)

__all__ = ["PYTHON_CLIENTS", "MemberHandle", "ProcessMember", "ThreadMember", "main", "member_loop"]

#: ``loop(config, sink, control)``: runs one member as ``control`` says
MemberLoop = Callable[[MemberConfig, EventSink, LoopControl], None]

#: The Python clients a member can run on (other clients, such as the repository lab's
#: ``java-<version>`` child JVM, join through :func:`.runner.register_child_client`).
PYTHON_CLIENTS = ("kafka-python", "aiokafka", "confluent")


def member_loop(client: str) -> MemberLoop:
    """The member loop of Python client ``client`` (its module is imported only now, so a
    client that is not installed costs nothing until a member asks for it)."""
    if client == "kafka-python":
        from .kafka_python_member import consume_loop

        return consume_loop
    if client == "aiokafka":
        from .aiokafka_member import aio_consume_loop

        return aio_consume_loop
    if client == "confluent":
        from .confluent_member import confluent_consume_loop

        return confluent_consume_loop
    raise ValueError(f"unknown member client {client!r}; expected one of {PYTHON_CLIENTS}")


class MemberHandle:
    """What a group runner needs from a running member."""

    config: MemberConfig

    def start(self, timeout_s: float = 30.0) -> None:
        raise NotImplementedError

    def stop(self, timeout_s: float = 30.0) -> None:
        raise NotImplementedError

    @property
    def alive(self) -> bool:
        raise NotImplementedError


class ThreadMember(MemberHandle):
    """A member running in a thread of this process."""

    def __init__(self, config: MemberConfig, log: EventLog) -> None:
        self.config = config
        self._log = log
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._changes = SubscriptionChange()
        self._thread = threading.Thread(
            target=self._run, name=f"member-{config.member}#{config.incarnation}", daemon=True
        )

    def _run(self) -> None:
        try:
            loop = member_loop(self.config.client)
            loop(self.config, self._log, LoopControl(self._stop.is_set, self._ready, self._changes))
        except BaseException as exc:  # kept for stop() to re-raise in the test thread
            self._error = exc
            self._ready.set()

    def start(self, timeout_s: float = 30.0) -> None:
        self._thread.start()
        if not self._ready.wait(timeout_s):
            raise TimeoutError(f"member {self.config.member} not subscribed after {timeout_s}s")
        if self._error is not None:
            raise RuntimeError(f"member {self.config.member} failed to start") from self._error

    def resubscribe(self, topics: list[str]) -> None:
        """Ask the running member to subscribe to ``topics`` instead (KIP-70; see
        :class:`~.member_config.SubscriptionChange`)."""
        self._changes.request(topics)

    def request_stop(self) -> None:
        """Ask the loop to stop without waiting (see :meth:`stop`)."""
        self._stop.set()

    def stop(self, timeout_s: float = 30.0) -> None:
        self._stop.set()
        self._thread.join(timeout_s)
        if self._thread.is_alive():
            raise TimeoutError(f"member {self.config.member} did not stop within {timeout_s}s")
        if self._error is not None:
            raise RuntimeError(f"member {self.config.member} failed") from self._error

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()


def _event_from_json(raw: dict[str, Any]) -> OwnershipEvent:
    raw["partitions"] = tuple((t, p) for t, p in raw["partitions"])
    raw["owned_after"] = tuple((t, p) for t, p in raw["owned_after"])
    raw["offsets"] = tuple(raw["offsets"])
    return OwnershipEvent(**raw)


class ProcessMember(MemberHandle):
    """A member in a child process that can be frozen, thawed and killed."""

    def __init__(self, config: MemberConfig, log: EventLog) -> None:
        self.config = config
        self._log = log
        self._process: subprocess.Popen[str] | None = None
        self._reader: threading.Thread | None = None
        self._ready = threading.Event()
        self._stderr_tail: list[str] = []

    def _read(self, stream: IO[str]) -> None:
        """Read the child's JSON lines until it exits, then close the pipe."""
        with stream:
            for line in stream:
                self._handle(line)

    def _handle(self, line: str) -> None:
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            return
        if message.get("type") == "event":
            event = _event_from_json(message["event"])
            self._log.add(event)
            if event.kind in ("started", "error"):
                self._ready.set()
        elif message.get("type") == "deliveries":
            self._log.add_deliveries(Delivery(**d) for d in message["deliveries"])
        elif message.get("type") == "log":
            logging.getLogger(str(message["name"])).log(
                int(message["level"]),
                "%s [member %s-%d, child process]",
                message["message"],
                self.config.member,
                self.config.incarnation,
            )

    def _parent_event(self, kind: str) -> None:
        self._log.add(
            OwnershipEvent(
                t=time.monotonic(),
                member=self.config.member,
                incarnation=self.config.incarnation,
                kind=kind,
            )
        )

    def _command(self) -> list[str]:
        """The child's command line (a subclass runs another program that speaks the same
        JSON lines, e.g. the Java member)."""
        return [
            self.config.python or sys.executable,
            "-m",
            "kafka_sticky_plugin.groups.member_process",
            replace(self.config, security=None).to_json(),
        ]

    def _environment(self) -> dict[str, str]:
        """The child's environment: this one with the member's security settings
        (:func:`_child_environment`), plus this checkout on ``PYTHONPATH`` when the member runs
        another interpreter (a client-version venv has no install of it)."""
        environment = _child_environment(self.config)
        if self.config.python:
            checkout = str(Path(__file__).resolve().parents[2])
            path = environment.get("PYTHONPATH")
            environment["PYTHONPATH"] = checkout + (os.pathsep + path if path else "")
        return environment

    def start(self, timeout_s: float = 30.0) -> None:
        self._process = start_tied(
            self._command(),
            env=self._environment(),
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            text=True,
            encoding="utf-8",
        )
        stdout = self._process.stdout
        if stdout is None:  # pragma: no cover - PIPE always gives a stream
            raise RuntimeError("child process has no stdout")
        self._reader = threading.Thread(target=self._read, args=(stdout,), daemon=True)
        self._reader.start()
        if not self._ready.wait(timeout_s):
            self.kill()
            raise TimeoutError(
                f"member process {self.config.member} not subscribed in {timeout_s}s"
            )

    def pause(self) -> None:
        """Freeze the process (SIGSTOP), as a debugger breakpoint would."""
        if self._process is not None:
            self._process.send_signal(signal.SIGSTOP)
            self._parent_event("paused")

    def resume(self) -> None:
        """Thaw a frozen process (SIGCONT)."""
        if self._process is not None:
            self._parent_event("resumed")
            self._process.send_signal(signal.SIGCONT)

    def kill(self) -> None:
        """Crash the process (SIGKILL): no LeaveGroup, no commit."""
        if self._process is not None and self._process.poll() is None:
            self._process.kill()
            self._process.wait(10)
            self._parent_event("killed")
        if self._reader is not None:
            self._reader.join(5)

    def stop(self, timeout_s: float = 30.0) -> None:
        if self._process is None or self._process.poll() is not None:
            return
        self._process.send_signal(signal.SIGCONT)
        self._process.send_signal(signal.SIGTERM)
        try:
            self._process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.kill()
            raise TimeoutError(f"member process {self.config.member} ignored SIGTERM") from None
        if self._reader is not None:
            self._reader.join(5)

    @property
    def alive(self) -> bool:
        return self._process is not None and self._process.poll() is None


class _JsonLinesSink:
    """Child side: writes events and deliveries to stdout, one JSON object a line."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self._lock = threading.Lock()

    def _write(self, message: dict[str, Any]) -> None:
        line = json.dumps(message)
        with self._lock:
            self._stream.write(line + "\n")
            self._stream.flush()

    def add(self, event: OwnershipEvent) -> None:
        self._write({"type": "event", "event": asdict(event)})

    def add_deliveries(self, deliveries: list[Delivery]) -> None:
        if deliveries:
            self._write({"type": "deliveries", "deliveries": [asdict(d) for d in deliveries]})

    def add_log(self, name: str, level: int, message: str) -> None:
        self._write({"type": "log", "name": name, "level": level, "message": message})


class _ForwardedLogs(logging.Handler):
    """Child side: records at ``level`` and above, sent to the parent (the message, then the
    traceback if any; see the module docstring)."""

    def __init__(self, sink: _JsonLinesSink, level: int = logging.WARNING) -> None:
        super().__init__(level)
        self._sink = sink
        self._tracebacks = logging.Formatter()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage()
            if record.exc_info:
                message += "\n" + self._tracebacks.formatException(record.exc_info)
            self._sink.add_log(record.name, record.levelno, message)
        except Exception:  # a closed pipe: the parent is gone, nothing to tell
            self.handleError(record)


def forward_logs(sink: _JsonLinesSink, debug: bool) -> None:
    """Child side: forward this package's WARNING-and-worse records to the parent, or with
    ``debug`` every record of :data:`~.member_config.DEBUG_LOGGERS` (each set to DEBUG)."""
    if not debug:
        logging.getLogger("kafka_sticky_plugin").addHandler(_ForwardedLogs(sink))
        return
    handler = _ForwardedLogs(sink, logging.DEBUG)
    for name in DEBUG_LOGGERS:
        logger = logging.getLogger(name)
        logger.setLevel(logging.DEBUG)
        logger.addHandler(handler)


#: The child's :attr:`~.member_config.MemberConfig.security` (JSON), kept out of its command
#: line, which process listings and the leftover-process report show.
_SECURITY_ENV = "KAFKA_STICKY_MEMBER_SECURITY"


def _child_environment(config: MemberConfig) -> dict[str, str]:
    environment = {k: v for k, v in os.environ.items() if k != _SECURITY_ENV}
    if config.security is not None:
        environment[_SECURITY_ENV] = json.dumps(config.security)
    return environment


def main(argv: list[str] | None = None) -> int:
    """Child entry point: run one member until SIGTERM."""
    args = sys.argv[1:] if argv is None else argv
    config = MemberConfig.from_json(args[0])
    if os.environ.get(_SECURITY_ENV):
        config = replace(config, security=json.loads(os.environ[_SECURITY_ENV]))
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda _signum, _frame: stop.set())
    sink = _JsonLinesSink(sys.stdout)
    forward_logs(sink, config.debug_logs)
    member_loop(config.client)(config, sink, LoopControl(stop.is_set))
    return 0


if __name__ == "__main__":
    sys.exit(main())
