"""A child-process member's warnings reach the parent's logging (and so a test's ``caplog``):
the child's handler writes this package's WARNING+ records as JSON lines on its pipe, the
parent logs each again under the same logger name, naming the member."""

from __future__ import annotations

import io
import json
import logging

import pytest

from kafka_sticky_plugin.testing.events import EventLog
from kafka_sticky_plugin.testing.member_config import MemberConfig
from kafka_sticky_plugin.testing.member_process import (
    ProcessMember,
    _ForwardedLogs,
    _JsonLinesSink,
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
