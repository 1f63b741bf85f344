"""The genuine Java ``KafkaConsumer`` as a group member and as a wire codec, for interop tests.

Both programs live in ``jvm/java-member/src`` and are compiled by ``make java-member`` once per
pinned ``kafka-clients`` version (:data:`JAVA_CLIENT_VERSIONS`) into
``build/jvm/java-member-<version>/``, next to that version's jars in
``build/jvm/kafka-clients-<version>/``. :func:`java_classpath` builds them on first use when
``mvn`` and ``javac`` are on the PATH.

- :class:`JavaProcessMember` runs ``kafkasticky.JavaMember``: a child process that takes the
  same :class:`~kafka_sticky_plugin.groups.member_config.MemberConfig` JSON and writes the same JSON
  lines as the Python child members, so
  :class:`~kafka_sticky_plugin.groups.runner.ConsumerGroupRunner` drives it like any other member
  (freeze, thaw, crash, stop with SIGTERM). The Java client's own log (slf4j-simple, INFO and up)
goes to a file per incarnation; :func:`log_problems` reads WARN/ERROR lines back.
- :func:`java_pack_command` runs ``kafkasticky.JavaMemberPack``: several Java members in one
  JVM, each a thread with its own ``KafkaConsumer``, driven like a Python
  :class:`~kafka_sticky_plugin.groups.member_pack.MemberPack` (a runner's ``start_pack``), so
  that a group of hundreds of Java members fits on 2 cores.
- :class:`JavaWireCodec` runs ``kafkasticky.WireCodec``: one persistent JVM answering
  encode/decode requests (one JSON line each way) with the Java client's own classes.

Invariant: nothing here downloads anything by itself; resolving jars is ``make``'s job
(Maven with its defaults).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from kafka_sticky_plugin.groups.events import EventLog
from kafka_sticky_plugin.groups.member_config import MemberConfig
from kafka_sticky_plugin.groups.member_process import ProcessMember
from kafka_sticky_plugin.groups.runner import register_child_client, register_pack_command
from kafka_sticky_plugin.lifetime import start_tied

__all__ = [
    "ASSIGNOR_LOGGERS",
    "JAVA_CLIENT_VERSIONS",
    "JavaProcessMember",
    "JavaToolsMissing",
    "JavaWireCodec",
    "JsonLineJvm",
    "LogLine",
    "client_version",
    "java_classpath",
    "java_pack_command",
    "java_tools_missing",
    "log_problems",
    "make_locked",
]

#: The pinned kafka-clients versions (the newest 4.x and 3.9.x that resolve); keep in step
#: with JAVA_CLIENT_VERSIONS in the Makefile.
JAVA_CLIENT_VERSIONS: tuple[str, ...] = ("4.4.0", "3.9.2")

_REPO_ROOT = Path(__file__).resolve().parents[1]
_BUILD = _REPO_ROOT / "build" / "jvm"
_BUILD_LOCK = threading.Lock()
_BUILT: set[str] = set()  # versions built (or found up to date) by this process


class JavaToolsMissing(RuntimeError):
    """``java``/``javac``/``mvn`` are not installed, or the build failed (message says which)."""


def java_tools_missing() -> str | None:
    """Why the Java programs cannot be built or run here, or ``None`` when they can."""
    missing = [tool for tool in ("java", "javac", "mvn") if shutil.which(tool) is None]
    if missing:
        return f"{', '.join(missing)} not on PATH (needed for the Java client interop tests)"
    if not (_REPO_ROOT / "jvm" / "java-member" / "pom.xml").is_file():
        return "jvm/java-member/pom.xml not found (not a source checkout)"
    return None


def java_classpath(version: str) -> str:
    """The classpath of the Java programs compiled against kafka-clients ``version``; runs
    ``make java-member`` first, once per process (a no-op when up to date). Raises
    :class:`JavaToolsMissing`."""
    if version not in JAVA_CLIENT_VERSIONS:
        raise ValueError(f"kafka-clients {version} is not pinned; pinned: {JAVA_CLIENT_VERSIONS}")
    reason = java_tools_missing()
    if reason is not None:
        raise JavaToolsMissing(reason)
    classes = _BUILD / f"java-member-{version}"
    classpath = os.pathsep.join([str(classes), str(_BUILD / f"kafka-clients-{version}" / "*")])
    with _BUILD_LOCK:
        if version in _BUILT:
            return classpath
        make_locked("java-member", classes / ".built")
        _BUILT.add(version)
    return classpath


def make_locked(target: str, built: Path) -> None:
    """``make <target>`` in the source checkout, under a file lock: two test processes (the
    Tansu and Kafka lanes of `make test` run side by side) must not rebuild the same folders
    at once. Raises :class:`JavaToolsMissing` when make fails or ``built`` is not there
    after it."""
    _BUILD.mkdir(parents=True, exist_ok=True)
    with open(_BUILD / f".{target}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = subprocess.run(
            ["make", "--no-print-directory", "-C", str(_REPO_ROOT), target],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            check=False,
        )
    if done.returncode != 0 or not built.is_file():
        raise JavaToolsMissing(f"make {target} failed:\n{done.stdout}\n{done.stderr}")


def client_version(client: str) -> str:
    """``java-4.4.0`` -> ``4.4.0`` (a :attr:`MemberConfig.client` naming a Java member)."""
    if not client.startswith("java-"):
        raise ValueError(f"not a Java client: {client!r}")
    return client[len("java-") :]


def _jvm_options(version: str, log_path: Path, heap_mb: int) -> list[str]:
    """The JVM flags of a member JVM (one member, or a pack of them)."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    return [
        "java",
        "-XX:+UseSerialGC",
        "-XX:TieredStopAtLevel=1",
        "-Xshare:auto",
        f"-Xmx{heap_mb}m",
        f"-Dkafkasticky.clients={version}",
        f"-Dorg.slf4j.simpleLogger.logFile={log_path}",
        "-Dorg.slf4j.simpleLogger.defaultLogLevel=info",
        "-Dorg.slf4j.simpleLogger.showDateTime=true",
        "-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS",
    ]


def java_pack_command(client: str, log_path: Path) -> list[str]:
    """The command of one JVM running several members of ``client`` (``java-<version>``;
    every member's client log goes to ``log_path``). Raises :class:`JavaToolsMissing`."""
    version = client_version(client)
    classpath = java_classpath(version)
    return [*_jvm_options(version, log_path, 768), "-cp", classpath, "kafkasticky.JavaMemberPack"]


class JavaProcessMember(ProcessMember):
    """A member running the Java ``KafkaConsumer`` (``config.client`` is ``java-<version>``)
    in a child JVM; its client log goes to ``log_path``."""

    def __init__(self, config: MemberConfig, log: EventLog, log_path: Path) -> None:
        super().__init__(config, log)
        self.version = client_version(config.client)
        self.log_path = log_path
        self._classpath = java_classpath(self.version)

    def _command(self) -> list[str]:
        return [
            *_jvm_options(self.version, self.log_path, 128),
            "-cp",
            self._classpath,
            "kafkasticky.JavaMember",
            self.config.to_json(),
        ]

    def start(self, timeout_s: float = 60.0) -> None:
        """Start the JVM (a JVM and a consumer take a few seconds on a busy machine)."""
        super().start(max(timeout_s, 60.0))


@dataclass(frozen=True)
class LogLine:
    """One WARN/ERROR line of a Java member's client log."""

    path: str
    level: str
    logger: str
    message: str


_LOG_LINE = re.compile(r"^\S+ \[[^\]]*\] (WARN|ERROR) (\S+) - (.*)$")

#: Loggers whose every WARN/ERROR is about the group's metadata or plan (assignor, protocol).
ASSIGNOR_LOGGERS = ("Assignor", "ConsumerProtocol")


def log_problems(paths: list[Path]) -> list[LogLine]:
    """Every WARN/ERROR line in the given Java client logs (missing files are skipped)."""
    found: list[LogLine] = []
    for path in paths:
        if not path.is_file():
            continue
        for raw in path.read_text(encoding="utf-8", errors="replace").splitlines():
            match = _LOG_LINE.match(raw)
            if match:
                found.append(LogLine(str(path), match[1], match[2], match[3]))
    return found


class JsonLineJvm:
    """A persistent JVM running ``main_class`` that answers one JSON line per JSON line
    request, each answer with ``"ok"`` (and ``"error"`` when false): :meth:`request`
    sends one and returns the answer (raises :class:`RuntimeError` naming ``label`` with
    Java's message when it failed). Its stderr is discarded."""

    def __init__(self, classpath: str, main_class: str, label: str) -> None:
        self.label = label
        self._process = start_tied(
            [
                "java",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                "-cp",
                classpath,
                main_class,
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            encoding="utf-8",
        )
        self._lock = threading.Lock()

    def request(self, fields: dict[str, Any]) -> dict[str, Any]:
        """One request -> the decoded answer."""
        stdin: IO[str] | None = self._process.stdin
        stdout: IO[str] | None = self._process.stdout
        if stdin is None or stdout is None:  # pragma: no cover - PIPE always gives streams
            raise RuntimeError(f"{self.label} process has no pipes")
        with self._lock:
            stdin.write(json.dumps(fields) + "\n")
            stdin.flush()
            line = stdout.readline()
        if not line:
            raise RuntimeError(f"{self.label} exited")
        answer: dict[str, Any] = json.loads(line)
        if not answer.get("ok"):
            raise RuntimeError(f"{self.label}: {answer.get('error')}")
        return answer

    def close(self) -> None:
        """End the JVM (closing its stdin ends its loop)."""
        if self._process.stdin is not None:
            self._process.stdin.close()
        try:
            self._process.wait(10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait(10)
        if self._process.stdout is not None:
            self._process.stdout.close()


class JavaWireCodec(JsonLineJvm):
    """A persistent ``kafkasticky.WireCodec`` JVM: :meth:`call` sends one request and
    returns the answer (raises :class:`RuntimeError` with Java's message when it failed)."""

    def __init__(self, version: str) -> None:
        self.version = version
        super().__init__(java_classpath(version), "kafkasticky.WireCodec", f"Java {version}")

    def call(self, op: str, **fields: Any) -> dict[str, Any]:
        """One request (``op`` and its fields, bytes as hex) -> the decoded answer."""
        return self.request({"op": op, **fields})


#: Every ConsumerGroupRunner starts ``java-<version>`` members as Java KafkaConsumers once this
#: module is imported (the integration tests' conftest imports it).
register_child_client("java-", JavaProcessMember)
register_pack_command("java-", java_pack_command)
