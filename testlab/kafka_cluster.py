"""A multi-node Apache Kafka (KRaft) cluster whose nodes a test can kill, stop, pause and
restart: the ground for the faults tier (broker failover, rolling bounces).

``with kafka_cluster(brokers=3) as cluster:`` runs one controller-only node and ``brokers``
broker-only nodes on 127.0.0.1 (the jars and JVM settings of :mod:`.kafka_broker`), with the
internal topics replicated (:data:`REPLICATED_SETTINGS`: offsets topic replication 3, min ISR
2, several offsets partitions), so that the group coordinator moves when its broker dies and
an ``acks=all`` write survives one broker down.

Node control (``node_id`` as in :attr:`KafkaCluster.broker_ids`): :meth:`~KafkaCluster.kill`
(SIGKILL), :meth:`~KafkaCluster.stop` (SIGTERM, controlled shutdown, waits for the exit),
:meth:`~KafkaCluster.pause` / :meth:`~KafkaCluster.resume` (SIGSTOP / SIGCONT),
:meth:`~KafkaCluster.restart` (same ports, same data directory: the node rejoins as itself
and catches up its replicas). :meth:`~KafkaCluster.coordinator_of` asks the cluster which
broker coordinates a group (FindCoordinator through kafka-python's admin client).

Invariants: every listener is on 127.0.0.1; the controller never goes down (tests fault the
brokers); every process is reaped when the block ends, a paused one included (SIGCONT before
SIGTERM), and dies with this process (:mod:`kafka_sticky_plugin.lifetime`); logs outlive the block
(one file, lines tagged by node id), data directories are removed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kafka_sticky_plugin.brokers.embedded import (
    LOOPBACK,
    BrokerStartError,
    free_loopback_port,
    stop_process,
)
from kafka_sticky_plugin.errors import ConfigurationError
from kafka_sticky_plugin.lifetime import start_tied
from testlab.kafka_broker import (
    KafkaRuntime,
    _cluster_id,
    _format,
    _java,
    _log_tail,
    _Node,
    _remove_data,
    _wait_ready,
    find_kafka_runtime,
)

__all__ = ["REPLICATED_SETTINGS", "KafkaCluster", "kafka_cluster"]

#: Broker settings of a cluster that survives one broker down: replicated internal topics,
#: acks=all writes need two in-sync replicas, several offsets partitions (coordinators spread
#: over the brokers), a quick controlled shutdown and unclean leader election off.
REPLICATED_SETTINGS: dict[str, str] = {
    "offsets.topic.replication.factor": "3",
    "offsets.topic.num.partitions": "6",
    "transaction.state.log.replication.factor": "3",
    "transaction.state.log.min.isr": "2",
    "share.coordinator.state.topic.replication.factor": "3",
    "default.replication.factor": "3",
    "min.insync.replicas": "2",
    "unclean.leader.election.enable": "false",
    "replica.lag.time.max.ms": "10000",
    "controlled.shutdown.enable": "true",
    "broker.session.timeout.ms": "6000",
    "broker.heartbeat.interval.ms": "1000",
}


@dataclass
class KafkaCluster:
    """A running cluster (see the module docstring); methods act on one broker node."""

    runtime: KafkaRuntime
    controller: _Node
    brokers: dict[int, _Node]
    log_path: Path
    stop_grace_s: float = 20.0
    paused: set[int] = field(default_factory=set)

    @property
    def bootstrap(self) -> str:
        return ",".join(f"{LOOPBACK}:{node.port}" for node in self.brokers.values())

    @property
    def broker_ids(self) -> list[int]:
        return sorted(self.brokers)

    def log_tail(self, max_chars: int = 4000) -> str:
        return _log_tail(self.log_path, max_chars)

    def _node(self, node_id: int) -> _Node:
        try:
            return self.brokers[node_id]
        except KeyError:
            raise ConfigurationError(
                f"no broker {node_id} in this cluster (brokers: {self.broker_ids})"
            ) from None

    def running(self, node_id: int) -> bool:
        process = self._node(node_id).process
        return process is not None and process.poll() is None

    def kill(self, node_id: int) -> None:
        """SIGKILL the broker and reap it (no controlled shutdown: a crash)."""
        node = self._node(node_id)
        if node.process is not None and node.process.poll() is None:
            node.process.kill()
            node.process.wait(timeout=30)
        self.paused.discard(node_id)

    def stop(self, node_id: int) -> None:
        """SIGTERM the broker (controlled shutdown: leadership moves first) and wait."""
        node = self._node(node_id)
        if node_id in self.paused:
            self.resume(node_id)
        if node.process is not None:
            stop_process(node.process, self.stop_grace_s)

    def pause(self, node_id: int) -> None:
        """SIGSTOP: the broker holds its sockets open but answers nothing."""
        process = self._node(node_id).process
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGSTOP)
            self.paused.add(node_id)

    def resume(self, node_id: int) -> None:
        """SIGCONT after :meth:`pause`."""
        process = self._node(node_id).process
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGCONT)
        self.paused.discard(node_id)

    def restart(self, node_id: int, timeout_s: float = 120.0) -> None:
        """Start a stopped or killed broker again on its ports with its data, and wait until
        it answers Metadata listing every broker."""
        node = self._node(node_id)
        if self.running(node_id):
            raise ConfigurationError(f"broker {node_id} is running; stop or kill it first")
        with self.log_path.open("ab") as log_file:
            node.process = start_tied(
                _java(self.runtime, node.node_id, "kafka.Kafka", str(node.config_path)),
                stdout=log_file,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        _wait_ready([node], self.log_path, timeout_s)

    def coordinator_of(self, group_id: str, timeout_s: float = 30.0) -> int:
        """The node id of the broker coordinating ``group_id`` now (FindCoordinator), retried
        while the cluster answers a retriable error (offsets topic not ready, election)."""
        import kafka.errors as kafka_errors
        from kafka import KafkaAdminClient

        deadline = time.monotonic() + timeout_s
        while True:
            admin = KafkaAdminClient(bootstrap_servers=self.bootstrap, request_timeout_ms=10_000)
            try:
                return int(admin._manager.run(admin._find_coordinator_id, group_id))
            except kafka_errors.KafkaError as exc:
                if not exc.retriable or time.monotonic() > deadline:
                    raise
            finally:
                admin.close()
            time.sleep(0.5)

    def wait_all_running(self, timeout_s: float = 120.0) -> None:
        """Every broker answers Metadata listing every broker."""
        _wait_ready(list(self.brokers.values()), self.log_path, timeout_s)

    def close(self) -> None:
        for node_id in list(self.paused):
            self.resume(node_id)
        for node in self.brokers.values():
            if node.process is not None:
                stop_process(node.process, self.stop_grace_s)
        if self.controller.process is not None:
            stop_process(self.controller.process, self.stop_grace_s)


@contextlib.contextmanager
def kafka_cluster(
    brokers: int = 3,
    log_dir: Path | None = None,
    *,
    settings: Mapping[str, str] | None = None,
    startup_timeout_s: float = 180.0,
    stop_grace_s: float = 20.0,
    libs: Path | None = None,
    racks: Sequence[str | None] | None = None,
) -> Iterator[KafkaCluster]:
    """Run one controller and ``brokers`` brokers for the block (see the module docstring).

    ``settings`` are written over :data:`REPLICATED_SETTINGS` on every broker; ``racks`` gives
    broker ``i`` (1-based) the ``broker.rack`` ``racks[i - 1]`` (``None``: none).
    """
    if brokers < 1:
        raise ConfigurationError("kafka_cluster needs at least one broker")
    if racks is not None and len(racks) != brokers:
        raise ConfigurationError(f"kafka_cluster: {len(racks)} racks for {brokers} brokers")
    runtime = find_kafka_runtime(libs)
    root = Path(log_dir) if log_dir is not None else Path(tempfile.mkdtemp(prefix="kafka-"))
    directory = root / f"cluster-{os.getpid()}-{time.monotonic_ns()}"
    overrides = {**REPLICATED_SETTINGS, **(settings or {})}
    controller = _Node(0, 0, free_loopback_port(), None, directory / "controller", broker=False)
    nodes = {
        index: _Node(
            index,
            free_loopback_port(),
            None,
            None if racks is None else racks[index - 1],
            directory / f"broker-{index}",
        )
        for index in range(1, brokers + 1)
    }
    for node in (controller, *nodes.values()):
        node.directory.mkdir(parents=True, exist_ok=True)
    log_path = root / f"kafka-cluster-{controller.controller_port}.log"
    cluster = KafkaCluster(runtime, controller, nodes, log_path, stop_grace_s)
    quorum = f"{LOOPBACK}:{controller.controller_port}"
    cluster_id = _cluster_id()
    try:
        for node in (controller, *nodes.values()):
            node.overrides = overrides if node.broker else None
            node.config_path.write_text(node.properties(quorum), encoding="utf-8")
            _format(runtime, node, cluster_id, node.config_path)
        with log_path.open("ab") as log_file:
            for node in (controller, *nodes.values()):
                node.process = start_tied(
                    _java(runtime, node.node_id, "kafka.Kafka", str(node.config_path)),
                    stdout=log_file,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                )
        try:
            cluster.wait_all_running(startup_timeout_s)
        except BrokerStartError as exc:
            tail = cluster.log_tail()
            raise BrokerStartError(f"{exc}\n--- Kafka log ({log_path}) ---\n{tail}") from None
        yield cluster
    finally:
        cluster.close()
        _remove_data([controller, *nodes.values()])
