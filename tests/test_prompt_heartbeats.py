"""The prompt-heartbeat policy (kafka_sticky_plugin.assignor.prompt_heartbeats): when the
window is open, how soon the next Heartbeat goes, and what bounds it."""

from __future__ import annotations

import pytest

from kafka_sticky_plugin.assignor.prompt_heartbeats import (
    HeartbeatTally,
    PromptHeartbeats,
    PromptWindow,
)
from kafka_sticky_plugin.errors import ConfigurationError


def test_closed_window_keeps_the_clients_delay() -> None:
    window = PromptWindow(PromptHeartbeats(interval_ms=200, window_ms=2000))
    assert window.delay_s(0.9, last_send=10.0, now=10.1) == 0.9


def test_open_window_heartbeats_at_the_prompt_interval_after_the_last_send() -> None:
    window = PromptWindow(PromptHeartbeats(interval_ms=200, window_ms=2000))
    assert window.open(now=10.0)
    assert window.delay_s(0.95, last_send=10.0, now=10.05) == pytest.approx(0.15)
    assert window.delay_s(0.7, last_send=10.0, now=10.3) == 0.0  # overdue: now


def test_a_faster_configured_interval_is_kept() -> None:
    window = PromptWindow(PromptHeartbeats(interval_ms=200, window_ms=2000))
    window.open(now=0.0)
    assert window.delay_s(0.05, last_send=0.0, now=0.05) == 0.05


def test_the_window_ends_after_window_ms_and_on_close() -> None:
    window = PromptWindow(PromptHeartbeats(interval_ms=100, window_ms=1000))
    window.open(now=5.0)
    assert window.is_open(5.99) and not window.is_open(6.0)
    assert window.delay_s(0.8, last_send=6.0, now=6.2) == 0.8
    window.open(now=7.0)
    window.close()
    assert not window.is_open(7.1)


def test_off_never_opens() -> None:
    window = PromptWindow(None)
    assert not window.open(now=1.0)
    assert window.delay_s(0.5, last_send=1.0, now=1.0) == 0.5


def test_the_tally_counts_prompt_heartbeats_separately() -> None:
    tally = HeartbeatTally()
    window = PromptWindow(PromptHeartbeats(interval_ms=200, window_ms=2000))
    window.sent(now=1.0, tally=tally)
    window.open(now=2.0)
    window.sent(now=2.2, tally=tally)
    window.sent(now=4.5, tally=tally)
    assert tally.read() == (3, 1)


@pytest.mark.parametrize(("interval", "window"), [(0, 1000), (300, 200), (-1, 10)])
def test_bad_settings_are_refused_in_one_line(interval: int, window: int) -> None:
    with pytest.raises(ConfigurationError, match="interval_ms <= window_ms"):
        PromptHeartbeats(interval_ms=interval, window_ms=window)


def test_the_bound_per_rebalance() -> None:
    assert PromptHeartbeats().extra_per_rebalance == 10
