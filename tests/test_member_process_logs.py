"""A child-process member's warnings reach the parent's logging (and so a test's ``caplog``):
the child's handler writes this package's WARNING+ records as JSON lines on its pipe, the
parent logs each again under the same logger name, naming the member. With ``debug_logs``
the child forwards every record of the clients' loggers and librdkafka's at DEBUG (the
security tier scans them for secrets), tracebacks included."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest

from kafka_sticky_plugin.groups.events import EventLog
from kafka_sticky_plugin.groups.member_config import DEBUG_LOGGERS, MemberConfig
from kafka_sticky_plugin.groups.member_process import (
    ProcessMember,
    _ForwardedLogs,
    _JsonLinesSink,
    forward_logs,
)

CONFIG = MemberConfig(bootstrap="127.0.0.1:9", group_id="g", topics=("t",), member="m0")


def _child_lines(*records: tuple[int, str]) -> list[dict[str, object]]:
    """What a child writes on its pipe for ``records`` logged on our hooks' logger."""
    stream = io.StringIO()
    logger = logging.getLogger("kafka_sticky_plugin.hooks.test_forwarding")
    handler = _ForwardedLogs(_JsonLinesSink(stream))
    logger.addHandler(handler)
    try:
        for level, message in records:
            logger.log(level, "group %s: %s", "g", message)
    finally:
        logger.removeHandler(handler)
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_the_child_sends_warnings_and_errors_only() -> None:
    lines = _child_lines(
        (logging.INFO, "joined"), (logging.WARNING, "refused"), (logging.ERROR, "lost")
    )
    assert [(line["level"], line["message"]) for line in lines] == [
        (logging.WARNING, "group g: refused"),
        (logging.ERROR, "group g: lost"),
    ]
    assert {line["type"] for line in lines} == {"log"}


def test_the_parent_logs_them_again_under_the_same_name(caplog: pytest.LogCaptureFixture) -> None:
    lines = _child_lines((logging.ERROR, "commit failed"))
    caplog.clear()  # the child side's own record
    caplog.set_level(logging.WARNING, logger="kafka_sticky_plugin")
    member = ProcessMember(CONFIG, EventLog())
    for line in lines:
        member._handle(json.dumps(line))
    [record] = [r for r in caplog.records if r.name.startswith("kafka_sticky_plugin")]
    assert record.name == "kafka_sticky_plugin.hooks.test_forwarding"
    assert record.levelno == logging.ERROR
    assert record.getMessage() == "group g: commit failed [member m0-0, child process]"


@pytest.fixture
def restored_loggers() -> Iterator[None]:
    """:func:`forward_logs` sets levels and adds handlers: put :data:`DEBUG_LOGGERS` back."""
    loggers = [logging.getLogger(name) for name in DEBUG_LOGGERS]
    saved = [(logger.level, list(logger.handlers)) for logger in loggers]
    try:
        yield
    finally:
        for logger, (level, handlers) in zip(loggers, saved, strict=True):
            logger.setLevel(level)
            logger.handlers[:] = handlers


@pytest.mark.usefixtures("restored_loggers")
@pytest.mark.parametrize("debug", [False, True])
def test_debug_logs_forward_every_client_line(debug: bool) -> None:
    """Without ``debug_logs``: this package's warnings only; with it: DEBUG lines of
    kafka-python, aiokafka, librdkafka and ours, each with its logger name and level."""
    stream = io.StringIO()
    forward_logs(_JsonLinesSink(stream), debug)
    logging.getLogger("kafka.conn").debug("authenticated as %s", "alice")
    logging.getLogger("aiokafka.conn").info("connected")
    logging.getLogger("librdkafka").debug("SASL [m0-0#consumer-1] handshake")
    logging.getLogger("kafka_sticky_plugin.hooks").warning("refused")
    logging.getLogger("unrelated").warning("not ours")
    sent = [
        (m["name"], m["level"], m["message"])
        for m in map(json.loads, stream.getvalue().splitlines())
    ]
    ours = ("kafka_sticky_plugin.hooks", logging.WARNING, "refused")
    if not debug:
        assert sent == [ours]
        return
    assert sent == [
        ("kafka.conn", logging.DEBUG, "authenticated as alice"),
        ("aiokafka.conn", logging.INFO, "connected"),
        ("librdkafka", logging.DEBUG, "SASL [m0-0#consumer-1] handshake"),
        ours,
    ]


@pytest.mark.usefixtures("restored_loggers")
def test_a_forwarded_record_keeps_its_traceback(caplog: pytest.LogCaptureFixture) -> None:
    """The traceback crosses too (a secret in an exception's text must reach the scan)."""
    stream = io.StringIO()
    logging.getLogger("kafka").setLevel(logging.DEBUG)
    logger = logging.getLogger("kafka.coordinator")
    handler = _ForwardedLogs(_JsonLinesSink(stream), logging.DEBUG)
    logger.addHandler(handler)
    try:
        try:
            raise ValueError("the reason")
        except ValueError:
            logger.debug("commit failed", exc_info=True)
    finally:
        logger.removeHandler(handler)
    [line] = stream.getvalue().splitlines()
    caplog.clear()
    caplog.set_level(logging.DEBUG, logger="kafka")
    ProcessMember(CONFIG, EventLog())._handle(line)
    [record] = [r for r in caplog.records if r.name == "kafka.coordinator"]
    text = record.getMessage()
    assert text.startswith("commit failed\nTraceback (most recent call last):")
    assert "ValueError: the reason" in text
    assert text.endswith(" [member m0-0, child process]")
