"""What the security tier's modules share: one secured Apache Kafka node per module, groups of
non-super users over a chosen transport, and the scan of every log line for secrets.

- ``secured_kafka`` (a module-scoped fixture; import it into a test module): a
  :func:`~testlab.kafka_security.secured_kafka_broker` with the users
  :data:`USERS`, stopped after the module's last test.
- ``secured_flow`` (a fixture: import it too): ``secured_flow(user, transport, assignors,
  partitions)`` gives a fresh topic (created by the super user over the transport), the ACLs
  a consumer needs (``READ`` on the group, ``READ``/``DESCRIBE`` on the topic) granted to
  ``user``, a keyed producer (the super user) filling it and then sending at a steady rate,
  and a :class:`~kafka_sticky_plugin.groups.runner.ConsumerGroupRunner` whose members
  connect as ``user`` over the transport, logging at DEBUG (``debug_logs``: librdkafka's
  security, configuration, connection and protocol lines, and a child-process member's
  every line, reach this process's loggers): a :class:`~group_flow.FlowingGroup` (``finish``
  it; its group and producer are closed at teardown in any case).
- :class:`LogLines` (the ``log_lines`` fixture): every log record of the test at DEBUG,
  for our loggers, kafka-python's, aiokafka's and librdkafka's (the members' own and those
  their child processes forward), formatted with its traceback; it counts the lines of
  each source (:meth:`LogLines.count`), so a test can refuse a blind scan.
  :func:`assert_no_secret` scans them, the group's event details and the node's log (one
  known kafka-python leak aside, :data:`KNOWN_CLIENT_LEAKS`).
- :func:`cli_options`: the command-line security options of a
  :class:`~kafka_sticky_plugin.client_security.ClientSecurity` (never the password).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Literal

import pytest
from group_flow import FlowingGroup

from kafka_sticky_plugin.client_security import ClientSecurity
from kafka_sticky_plugin.groups.admin import create_topic, unique_name
from kafka_sticky_plugin.groups.member_config import DEBUG_LOGGERS, LIBRDKAFKA_LOGGER
from kafka_sticky_plugin.groups.producer import KeyedProducer
from kafka_sticky_plugin.groups.runner import ConsumerGroupRunner
from testlab.kafka_security import SecuredKafka, secured_kafka_broker
from testlab.secret_scan import SecretScan, scan_for_secrets

__all__ = [
    "EMBEDDED_SKIP",
    "USERS",
    "LogLines",
    "assert_no_secret",
    "cli_options",
    "log_lines",
    "secured_flow",
    "secured_kafka",
    "start_secured_flow",
]

#: The users every secured node has (besides ``admin`` and ``broker``), none a super user.
USERS = ("alice", "bob", "carol")

#: The tier runs on Apache Kafka only: the node is started by the tier itself.
EMBEDDED_SKIP = pytest.mark.skipif(
    os.environ.get("KAFKA_STICKY_BROKER") == "embedded",
    reason="secured listeners and ACLs: the security tier starts its own Apache Kafka node",
)

#: The loggers a test listens to at DEBUG: ours, the Python clients' and librdkafka's.
SCANNED_LOGGERS = DEBUG_LOGGERS
#: What a child-process member's forwarded lines end with
#: (:mod:`~kafka_sticky_plugin.groups.member_process`).
CHILD_MARK = ", child process]"


@pytest.fixture(scope="module")
def secured_kafka(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecuredKafka]:
    """One secured node for the whole module (see the module docstring)."""
    with secured_kafka_broker(Path(tmp_path_factory.mktemp("secured")), users=USERS) as kafka:
        yield kafka


def start_secured_flow(
    kafka: SecuredKafka,
    user: str,
    transport: str,
    assignors: list[str],
    partitions: int,
    *,
    rate_per_s: float = 20.0,
    **member_settings: object,
) -> FlowingGroup:
    """A flowing group of ``user``'s members over ``transport`` (see the module docstring)."""
    bootstrap = kafka.bootstrap(transport)
    admin = kafka.admin(transport)
    topic = create_topic(bootstrap, unique_name(f"sec-{transport}"), partitions, security=admin)
    group_id = unique_name(f"sec-{transport}")
    kafka.grant(user, "topic", topic, ("READ", "DESCRIBE"))
    kafka.grant(user, "group", group_id, ("READ",))
    producer = KeyedProducer(bootstrap, topic, security=admin)
    producer.send_burst(partitions * 10)
    producer.start(rate_per_s)
    group = ConsumerGroupRunner(
        bootstrap,
        group_id,
        {topic: partitions},
        assignors,
        None,
        security=kafka.client(user, transport).as_dict(),
        **{"debug_logs": True, **member_settings},
    )
    return FlowingGroup(topic, producer, group)


@pytest.fixture
def secured_flow(secured_kafka: SecuredKafka) -> Iterator[Callable[..., FlowingGroup]]:
    """:func:`start_secured_flow` on the module's node; what it made is closed at teardown."""
    made: list[FlowingGroup] = []

    def make(*args: Any, **kwargs: Any) -> FlowingGroup:
        flow = start_secured_flow(secured_kafka, *args, **kwargs)
        made.append(flow)
        return flow

    yield make
    for flow in made:
        flow.group.close()
        flow.producer.close()


class LogLines(logging.Handler):
    """Keeps every record it is given, formatted (message and traceback), and counts the
    lines of librdkafka and of child processes."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
        self.lines: list[str] = []
        self._counts = {"librdkafka": 0, "child": 0}

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = self.format(record)
        except Exception:  # a record whose arguments do not format is still kept
            line = f"{record.name} {record.levelname} {record.msg!r} {record.args!r}"
        self.lines.append(line)
        if record.name == LIBRDKAFKA_LOGGER:
            self._counts["librdkafka"] += 1
        if line.endswith(CHILD_MARK):
            self._counts["child"] += 1

    def count(self, source: Literal["librdkafka", "child"]) -> int:
        """Lines from librdkafka (its logger, in this process or forwarded by a child) or
        forwarded by a child-process member (any logger)."""
        return self._counts[source]


@pytest.fixture
def log_lines() -> Iterator[LogLines]:
    """Every record of :data:`SCANNED_LOGGERS` at DEBUG during the test."""
    handler = LogLines()
    loggers = [logging.getLogger(name) for name in SCANNED_LOGGERS]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.DEBUG)
        logger.addHandler(handler)
    try:
        yield handler
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.removeHandler(handler)
            logger.setLevel(level)


#: Log lines of the clients themselves known to carry a password (the start of the line as
#: :class:`LogLines` formats it): kafka-python's ``KafkaAdminClient`` logs its keyword
#: arguments, ``sasl_plain_password`` included, at DEBUG (docs/security.md says so). The
#: scan tells them apart, counts them, and fails on any other line with a secret.
KNOWN_CLIENT_LEAKS = ("kafka.admin.client DEBUG Starting KafkaAdminClient with configuration",)


def assert_no_secret(kafka: SecuredKafka, texts: Iterable[str]) -> SecretScan:
    """Fail naming the leaked lines (secrets masked) if any line contains a password or a
    private-key line of ``kafka``'s run, :data:`KNOWN_CLIENT_LEAKS` aside; scans ``texts``
    and the node's log (:func:`~testlab.secret_scan.scan_for_secrets`).
    Returns the scan (how many lines were read, so a caller can check it saw something, and
    how many were known client leaks)."""
    node_log = kafka.log_path.read_text(errors="replace") if kafka.log_path else ""
    scan = scan_for_secrets(kafka.secrets(), [*texts, *node_log.splitlines()], KNOWN_CLIENT_LEAKS)
    assert not scan.leaks, f"a secret is logged: {scan.describe()}"
    return scan


def cli_options(sec: ClientSecurity, password_file: Path | None = None) -> list[str]:
    """The command-line security options (:mod:`kafka_sticky_plugin.cli_security`) for
    ``sec``; the password is never among them (it goes by the environment or ``password_file``)."""
    argv = [f"--security-protocol={sec.protocol}"]
    if sec.username is not None:
        argv += [f"--sasl-username={sec.username}", f"--sasl-mechanism={sec.mechanism}"]
    if password_file is not None:
        argv.append(f"--sasl-password-file={password_file}")
    for option, value in (
        ("--ssl-cafile", sec.cafile),
        ("--ssl-certfile", sec.certfile),
        ("--ssl-keyfile", sec.keyfile),
    ):
        if value is not None:
            argv.append(f"{option}={value}")
    return argv
