"""Apache Kafka (KRaft) as plain JVM processes on 127.0.0.1, from the jars Maven resolved.

``with kafka_broker() as broker:`` runs one node with the broker and controller roles;
``kafka_broker(racks=["a", "b", "c"])`` runs one node per rack (``broker.rack`` set): the first
node is broker and controller, the others are brokers only. A cluster of several nodes is what
a test needs to see replicas on different racks (KIP-881): one node has one rack, and a
partition's replicas live on distinct nodes.

The jars come from ``make kafka-broker`` (``jvm/kafka-broker/pom.xml``, pinned, Maven's
defaults) and are looked up in ``$KAFKA_STICKY_KAFKA_LIBS``, else in ``build/jvm/kafka-broker``
of the checkout (the current directory or the one this package is imported from).

What a start does, per node: pick free loopback ports (listener, and controller for the first
node), write ``server.properties`` with the settings that make groups fast
(:data:`FAST_GROUP_SETTINGS`), format a fresh log dir with Kafka's own storage tool, start
``kafka.Kafka`` with a small heap and the project's ``log4j2.properties``, and wait until every
node answers a real Metadata request listing all of them.

Invariants: every listener is on 127.0.0.1; each node writes stdout and stderr to a log file
that outlives it (``RunningBroker.log_path``; a cluster's nodes share one file, each line
tagged with its node id) so a failed test can show it; every process is reaped, whatever
happens inside the ``with`` block (SIGTERM, then SIGKILL after a grace period), and dies with
this process even when nothing can run (``SIGKILL``: see :mod:`kafka_sticky_plugin.lifetime`); the
data directories are removed after a clean stop, the logs are kept. A failure to start raises
:class:`~kafka_sticky_plugin.brokers.embedded.BrokerStartError` naming what is missing (``java``,
the jars) or carrying the end of the log.
"""

from __future__ import annotations

import base64
import contextlib
import os
import shutil
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from kafka_sticky_plugin.brokers.choose import FAST_GROUP_SETTINGS
from kafka_sticky_plugin.brokers.embedded import (
    LOOPBACK,
    BrokerStartError,
    RunningBroker,
    free_loopback_port,
    stop_process,
)
from kafka_sticky_plugin.brokers.profile import APACHE_KAFKA_PROFILE
from kafka_sticky_plugin.brokers.wire_probe import metadata_brokers
from kafka_sticky_plugin.errors import ConfigurationError
from kafka_sticky_plugin.lifetime import start_tied

__all__ = [
    "KafkaRuntime",
    "find_kafka_runtime",
    "kafka_broker",
]

_JVM_OPTIONS = ("-Xms128m", "-Xmx512m", "-XX:+UseSerialGC", "-Djava.awt.headless=true")
_LIBS_ENV = "KAFKA_STICKY_KAFKA_LIBS"
_LIBS_RELATIVE = Path("build") / "jvm" / "kafka-broker"
_LOG_CONFIG_RELATIVE = Path("jvm") / "kafka-broker" / "log4j2.properties"


class _PortTaken(BrokerStartError):
    """A node could not bind a port it was given (another process took it first)."""


@dataclass(frozen=True)
class KafkaRuntime:
    """Where the broker's jars are, and which Kafka version they are."""

    libs: Path
    version: str
    log_config: Path | None

    @property
    def classpath(self) -> str:
        return str(self.libs / "*")


def _checkout_roots() -> list[Path]:
    here = Path(__file__).resolve()
    return [Path.cwd(), *Path.cwd().parents, *here.parents]


def find_kafka_runtime(libs: Path | None = None) -> KafkaRuntime:
    """Find the jars (see the module docstring) and ``java``, or raise with what is missing."""
    if shutil.which("java") is None:
        raise BrokerStartError(
            "Apache Kafka needs Java 17 or newer, and there is no `java` on PATH"
        )
    candidates: list[Path]
    if libs is not None:
        candidates = [libs]
    elif os.environ.get(_LIBS_ENV):
        candidates = [Path(os.environ[_LIBS_ENV])]
    else:
        candidates = [root / _LIBS_RELATIVE for root in _checkout_roots()]
    for folder in candidates:
        jars = sorted(folder.glob("kafka_2.13-*.jar"))
        if jars:
            version = jars[0].name.removeprefix("kafka_2.13-").removesuffix(".jar")
            log_config = next(
                (
                    root / _LOG_CONFIG_RELATIVE
                    for root in (folder.parents[2], *_checkout_roots())
                    if (root / _LOG_CONFIG_RELATIVE).is_file()
                ),
                None,
            )
            return KafkaRuntime(libs=folder, version=version, log_config=log_config)
    where = ", ".join(str(c) for c in candidates[:2])
    raise BrokerStartError(
        f"Apache Kafka's jars (kafka_2.13-*.jar) are not in {where}: run `make kafka-broker`"
        f" in the checkout (needs mvn), or set {_LIBS_ENV} to a folder that has them"
    )


def _cluster_id() -> str:
    """A random cluster id in Kafka's own form (16 bytes, URL-safe base64, no padding), never
    starting with ``-`` (as Kafka's own ``Uuid.randomUuid``: a command line would read it as
    an option)."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode("ascii")
        if not text.startswith("-"):
            return text


@dataclass
class _Node:
    node_id: int
    port: int
    controller_port: int | None
    rack: str | None
    directory: Path
    process: subprocess.Popen[bytes] | None = None
    #: False for a controller-only node (``process.roles=controller``, no client listener).
    broker: bool = True
    #: ``server.properties`` entries written last, over :data:`FAST_GROUP_SETTINGS` (the
    #: launcher's ``settings``, a cluster's replicated internal topics); broker nodes only.
    overrides: dict[str, str] | None = None
    #: More client listeners, ``{name: port}``, listened on and advertised beside
    #: ``PLAINTEXT`` (their security protocols come from :attr:`overrides`, see
    #: :mod:`.kafka_security`).
    extra_listeners: dict[str, int] | None = None
    #: More arguments of the storage tool's ``format`` (``--add-scram ...``).
    format_args: tuple[str, ...] = ()

    @property
    def data_dir(self) -> Path:
        return self.directory / "data"

    @property
    def config_path(self) -> Path:
        return self.directory / "server.properties"

    def properties(self, quorum: str) -> str:
        """This node's ``server.properties``; :attr:`overrides` come last (broker nodes)."""
        if not self.broker:
            return self._controller_properties(quorum)
        roles = "broker,controller" if self.controller_port is not None else "broker"
        advertised = ",".join(
            f"{name}://{LOOPBACK}:{port}"
            for name, port in {"PLAINTEXT": self.port, **(self.extra_listeners or {})}.items()
        )
        listeners = advertised
        if self.controller_port is not None:
            listeners += f",CONTROLLER://{LOOPBACK}:{self.controller_port}"
        settings = {
            "process.roles": roles,
            "node.id": str(self.node_id),
            "controller.quorum.bootstrap.servers": quorum,
            "listeners": listeners,
            "advertised.listeners": advertised,
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "log.dirs": str(self.data_dir),
            **FAST_GROUP_SETTINGS,
        }
        if self.rack is not None:
            settings["broker.rack"] = self.rack
        settings.update(self.overrides or {})
        return "".join(f"{key}={value}\n" for key, value in settings.items())

    def _controller_properties(self, quorum: str) -> str:
        settings = {
            "process.roles": "controller",
            "node.id": str(self.node_id),
            "controller.quorum.bootstrap.servers": quorum,
            "listeners": f"CONTROLLER://{LOOPBACK}:{self.controller_port}",
            "controller.listener.names": "CONTROLLER",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT",
            "log.dirs": str(self.data_dir),
            "num.network.threads": "1",
            "num.io.threads": "1",
            "background.threads": "1",
        }
        return "".join(f"{key}={value}\n" for key, value in settings.items())


def _java(runtime: KafkaRuntime, node_id: int, *args: str) -> list[str]:
    command = ["java", *_JVM_OPTIONS, f"-Dkafka.test.node={node_id}"]
    if runtime.log_config is not None:
        command.append(f"-Dlog4j2.configurationFile={runtime.log_config}")
    return [*command, "-cp", runtime.classpath, *args]


def _format(runtime: KafkaRuntime, node: _Node, cluster_id: str, config: Path) -> None:
    mode = "--standalone" if node.controller_port is not None else "--no-initial-controllers"
    tool = ("kafka.tools.StorageTool", "format", mode, f"--cluster-id={cluster_id}")
    command = _java(runtime, node.node_id, *tool, *node.format_args, "-c", str(config))
    tool_process = start_tied(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    try:
        output, _ = tool_process.communicate(timeout=120)
    finally:
        stop_process(tool_process, grace_s=5)
    if tool_process.returncode != 0:
        raise BrokerStartError(
            f"Kafka's storage tool could not format {node.data_dir}"
            f" (exit {tool_process.returncode}):\n{output[-2000:]}"
        )


def _wait_ready(nodes: Sequence[_Node], log_path: Path, timeout_s: float) -> None:
    """Every node answers Metadata listing every node, or raise with the log's end."""
    deadline = time.monotonic() + timeout_s
    pending = list(nodes)
    last: object = None
    while pending:
        node = pending[0]
        assert node.process is not None
        if node.process.poll() is not None:
            message = (
                f"Kafka node {node.node_id} exited with status {node.process.returncode}"
                " before it was ready"
            )
            if "Address already in use" in _log_tail(log_path, 100_000):
                raise _PortTaken(f"{message} (a port it was given is taken)")
            raise BrokerStartError(message)
        if time.monotonic() > deadline:
            raise BrokerStartError(
                f"Kafka node {node.node_id} ({LOOPBACK}:{node.port}) not ready after"
                f" {timeout_s:.0f} s (last probe: {last!r})"
            )
        try:
            advertised = metadata_brokers(LOOPBACK, node.port, timeout_s=1.0)
        except (OSError, ValueError) as exc:
            last = exc
        else:
            last = advertised
            if {b.port for b in advertised} >= {n.port for n in nodes}:
                pending.pop(0)
                continue
        time.sleep(0.1)


def _log_tail(log_path: Path, chars: int = 3000) -> str:
    if not log_path.exists():
        return ""
    return log_path.read_text(encoding="utf-8", errors="replace")[-chars:]


@contextlib.contextmanager
def kafka_broker(
    log_dir: Path | None = None,
    *,
    racks: Sequence[str | None] = (None,),
    port: int | None = None,
    startup_timeout_s: float = 120.0,
    stop_grace_s: float = 20.0,
    libs: Path | None = None,
    settings: Mapping[str, str] | None = None,
    extra_listeners: Mapping[str, int] | None = None,
    format_args: Sequence[str] = (),
) -> Iterator[RunningBroker]:
    """Run Apache Kafka on 127.0.0.1 for the duration of the block (see module docstring).

    ``racks`` has one entry per node (``None``: no ``broker.rack``); ``port`` fixes the first
    node's listener port (else a free one is picked, and a start that loses a port race is
    retried on new ports); ``settings`` are more ``server.properties`` entries for every
    node, applied last (for example ``{"group.consumer.migration.policy": "disabled"}``);
    ``extra_listeners`` (``{name: port}``, one node only) are client listeners beside
    ``PLAINTEXT``, whose protocols ``settings`` name; ``format_args`` go to the storage tool's
    ``format`` (:mod:`.kafka_security` uses the three for a secured node).
    """
    if not racks:
        raise ConfigurationError("kafka_broker needs at least one node (racks=[None])")
    if extra_listeners and len(racks) > 1:
        raise ConfigurationError("extra_listeners are for a one-node kafka_broker only")
    runtime = find_kafka_runtime(libs)
    root = Path(log_dir) if log_dir is not None else Path(tempfile.mkdtemp(prefix="kafka-"))
    root.mkdir(parents=True, exist_ok=True)
    attempts = 1 if port is not None else 3
    last_error: BrokerStartError | None = None
    for attempt in range(attempts):
        nodes = _plan_nodes(root / f"cluster-{os.getpid()}-{attempt}", racks, port, settings)
        nodes[0].extra_listeners = dict(extra_listeners) if extra_listeners else None
        for node in nodes:
            node.format_args = tuple(format_args)
        log_path = root / f"kafka-{nodes[0].port}.log"
        try:
            _start(runtime, nodes, log_path, startup_timeout_s)
        except BrokerStartError as exc:
            _stop_all(nodes, stop_grace_s)
            _remove_data(nodes)
            tail = _log_tail(log_path)
            last_error = BrokerStartError(f"{exc}\n--- Kafka log ({log_path}) ---\n{tail}")
            if not isinstance(exc, _PortTaken):
                break
            continue
        try:
            yield RunningBroker(
                bootstrap=",".join(f"{LOOPBACK}:{n.port}" for n in nodes),
                profile=APACHE_KAFKA_PROFILE,
                kind=f"apache-kafka-{runtime.version}",
                log_path=log_path,
            )
        finally:
            _stop_all(nodes, stop_grace_s)
            _remove_data(nodes)
        return
    raise last_error if last_error is not None else BrokerStartError("Kafka did not start")


def _plan_nodes(
    directory: Path,
    racks: Sequence[str | None],
    port: int | None,
    settings: Mapping[str, str] | None = None,
) -> list[_Node]:
    nodes = []
    for index, rack in enumerate(racks):
        listener = port if (port is not None and index == 0) else free_loopback_port()
        controller = free_loopback_port() if index == 0 else None
        node_dir = directory / f"node-{index + 1}"
        node_dir.mkdir(parents=True, exist_ok=True)
        overrides = dict(settings) if settings else None
        nodes.append(_Node(index + 1, listener, controller, rack, node_dir, overrides=overrides))
    return nodes


def _start(
    runtime: KafkaRuntime,
    nodes: list[_Node],
    log_path: Path,
    timeout_s: float,
) -> None:
    if len({n.port for n in nodes} | {n.controller_port for n in nodes if n.controller_port}) < (
        len(nodes) + 1
    ):
        raise _PortTaken("two Kafka listeners were given the same port")
    controller = nodes[0]
    quorum = f"{LOOPBACK}:{controller.controller_port}"
    cluster_id = _cluster_id()
    for node in nodes:
        node.config_path.write_text(node.properties(quorum), encoding="utf-8")
        _format(runtime, node, cluster_id, node.config_path)
    with log_path.open("ab") as log_file:
        for node in nodes:
            node.process = start_tied(
                _java(runtime, node.node_id, "kafka.Kafka", str(node.config_path)),
                stdout=log_file,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
    _wait_ready(nodes, log_path, timeout_s)


def _remove_data(nodes: Sequence[_Node]) -> None:
    for node in nodes:
        shutil.rmtree(node.data_dir, ignore_errors=True)


def _stop_all(nodes: Sequence[_Node], grace_s: float) -> None:
    # Brokers first, the controller last, so brokers can shut down in a controlled way.
    for node in reversed(nodes):
        if node.process is not None:
            stop_process(node.process, grace_s)
