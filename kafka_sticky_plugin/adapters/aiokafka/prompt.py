"""Prompt heartbeats on an aiokafka coordinator
(:mod:`kafka_sticky_plugin.assignor.prompt_heartbeats` says what and why).

aiokafka's heartbeat routine computes its next sleep itself (the configured interval), so the
window is a separate task started after a cooperative SyncGroup: every ``interval_ms`` it
sends one Heartbeat through the hooks' heartbeat (the same request, the same handling of
REBALANCE_IN_PROGRESS: the coordinator is asked to rejoin), until the window closes, the member
must rejoin, it has no member id or the coordinator closes. The regular routine goes on
meanwhile. The task is cancelled before every JoinGroup and on leave/close.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from ...assignor.prompt_heartbeats import PromptHeartbeats, PromptWindow

__all__ = ["PromptTask"]

_log = logging.getLogger("kafka_sticky_plugin.aiokafka")


class PromptTask:
    """The window of one aiokafka consumer; ``heartbeat`` sends one Heartbeat and returns
    whether it succeeded (the hooks' wrapper of ``_do_heartbeat``)."""

    def __init__(
        self,
        coordinator: Callable[[], Any],
        heartbeat: Callable[[], Awaitable[bool]],
        policy: PromptHeartbeats | None,
    ) -> None:
        self._coordinator = coordinator
        self._heartbeat = heartbeat
        self.window = PromptWindow(policy)
        self._task: asyncio.Task[None] | None = None

    def joined(self) -> None:
        """A cooperative SyncGroup completed: open the window, start the task if needed."""
        if not self.window.open(time.monotonic()):
            return
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        """Close the window and end the task (before a JoinGroup, on leave)."""
        self.window.close()
        task, self._task = self._task, None
        if task is not None and not task.done() and task is not asyncio.current_task():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def _wanted(self) -> bool:
        coordinator = self._coordinator()
        return bool(
            self.window.is_open(time.monotonic())
            and coordinator.member_id
            and not coordinator._closing.done()
            and not coordinator._rejoin_needed_fut.done()
        )

    async def _run(self) -> None:
        policy = self.window.policy
        assert policy is not None  # joined() opened the window
        try:
            while True:
                await asyncio.sleep(policy.interval_ms / 1000)
                if not self._wanted():
                    return
                if not await self._heartbeat():
                    return  # the regular routine retries with the client's backoff
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the regular routine meets (and reports) the same failure
            _log.debug("prompt heartbeats stopped: %r", exc)
