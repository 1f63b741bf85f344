"""What every group member loop shares (``kafka_sticky_plugin/groups/member_config.py``),
without a broker."""

from __future__ import annotations

import pytest

from kafka_sticky_plugin.groups.events import EventLog
from kafka_sticky_plugin.groups.member_config import MemberConfig, reporting
from kafka_sticky_plugin.groups.python_clients import consumer_settings

CONFIG = MemberConfig(bootstrap="127.0.0.1:9", group_id="g", topics=("t",), member="m")


def test_reporting_closes_then_reports_stopped() -> None:
    """A loop body that ends normally: the consumer is closed, then ``stopped`` is reported."""
    log = EventLog()
    calls: list[str] = []
    with reporting(CONFIG, log, lambda: calls.append("closed")):
        calls.append("body")
    assert calls == ["body", "closed"]
    assert [e.kind for e in log.events()] == ["stopped"]


def test_reporting_reports_an_error_reraises_and_still_stops() -> None:
    """A failing loop body: ``error`` names the exception, the consumer is closed, ``stopped``
    follows, and the exception reaches the caller."""
    log = EventLog()
    closed: list[bool] = []
    with (
        pytest.raises(RuntimeError, match="boom"),
        reporting(CONFIG, log, lambda: closed.append(True)),
    ):
        raise RuntimeError("boom")
    events = log.events()
    assert [e.kind for e in events] == ["error", "stopped"]
    assert "boom" in events[0].detail and closed == [True]
    assert all(e.member == "m" and e.incarnation == 0 for e in events)


def test_consumer_settings_commit_by_hand_and_name_the_incarnation() -> None:
    """Both Python clients get manual commits, earliest reset, a client id naming the
    incarnation, and a rack only when one is configured."""
    settings = consumer_settings(CONFIG)
    assert settings["enable_auto_commit"] is False
    assert settings["auto_offset_reset"] == "earliest"
    assert settings["client_id"] == "m-0"
    assert "client_rack" not in settings
    racked = MemberConfig(**{**CONFIG.__dict__, "client_rack": "r1", "incarnation": 2})
    assert consumer_settings(racked)["client_rack"] == "r1"
    assert consumer_settings(racked)["client_id"] == "m-2"
