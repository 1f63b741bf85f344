"""Prompt heartbeats on a kafka-python 3.0.x coordinator
(:mod:`kafka_sticky_plugin.assignor.prompt_heartbeats` says what and why).

3.0's heartbeat loop asks ``coordinator.heartbeat.time_to_next_heartbeat()`` how long to wait
and is woken by ``coordinator._heartbeat_wakeup``; here the *instance*'s
``time_to_next_heartbeat`` is wrapped to answer sooner while the window is open, and its
``sent_heartbeat`` to count each Heartbeat. Nothing else of the client changes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ....assignor.prompt_heartbeats import PromptHeartbeats, PromptWindow

__all__ = ["PromptSchedule"]


class PromptSchedule:
    """The window of one kafka-python 3.0.x consumer; ``patch(target, name, replacement)``
    is the hooks' instance patcher (so ``uninstall`` restores the client's methods)."""

    def __init__(self, coordinator: Any, policy: PromptHeartbeats | None) -> None:
        self._coordinator = coordinator
        self.window = PromptWindow(policy)

    def install(self, patch: Callable[[Any, str, Callable[..., Any]], None]) -> None:
        heartbeat = self._coordinator.heartbeat
        client_delay = heartbeat.time_to_next_heartbeat
        client_sent = heartbeat.sent_heartbeat

        def time_to_next_heartbeat() -> float:
            delay = float(client_delay())
            if getattr(heartbeat, "heartbeat_failed", False):
                return delay  # the client's retry backoff
            last = max(heartbeat.last_send, getattr(heartbeat, "last_reset", heartbeat.last_send))
            return self.window.delay_s(delay, last, time.monotonic())

        def sent_heartbeat() -> None:
            self.window.sent(time.monotonic())
            client_sent()

        patch(heartbeat, "time_to_next_heartbeat", time_to_next_heartbeat)
        patch(heartbeat, "sent_heartbeat", sent_heartbeat)

    def joined(self) -> None:
        """A cooperative SyncGroup completed: open the window and wake the heartbeat loop
        (it may be sleeping out the whole configured interval)."""
        wakeup = getattr(self._coordinator, "_heartbeat_wakeup", None)
        if self.window.open(time.monotonic()) and wakeup is not None:
            wakeup.notify()

    def rejoining(self) -> None:
        """Before a JoinGroup: the window closes (the member is rejoining anyway)."""
        self.window.close()
