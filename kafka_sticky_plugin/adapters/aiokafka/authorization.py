"""GROUP_AUTHORIZATION_FAILED on a hooked aiokafka consumer: one clear line, spaced attempts,
no partitions kept once the group refused the member; and a leader refused another member's
topic steps aside once (:class:`AioLeaderRefusal`, the reasons in
:mod:`kafka_sticky_plugin.assignor.leader_refusal`).

What aiokafka (0.13, 0.14) does alone: every refused group request (FindCoordinator,
JoinGroup/SyncGroup, Heartbeat) ends in the coordination routine's ``_push_error_to_user``,
which waits only until ``getmany``/``getone`` raised it, and the routine asks again at once:
one refusal per call (75 raises in 15 s with 100 ms calls, measured). A refused heartbeat
(the group's ACL revoked while the member runs) ends the heartbeat task; the member keeps its
assignment and fetches on while the broker gives the partitions to others after the session
timeout (two owners).

Here the hooks replace ``_push_error_to_user`` only (:meth:`.hooks.AioHooks.push_error`): the
one place every refusal reaches, and one that only the refused member's own coordination
routine runs, so no other member and no healthy path is touched (an earlier attempt wrapped
``ensure_coordinator_known``, ``_do_rejoin_group`` and ``_do_heartbeat``, which every member
runs, and healthy members lost and regained their partitions). The first refusal is one
ERROR line (:func:`~kafka_sticky_plugin.authorization_advice.group_refused_line`); after each
refusal reached the user the routine waits 1 s, doubling to 30 s (or until the consumer
stops) before it asks again; a member that still held partitions loses them at once. A
successful join starts over.

Invariants: at most one refused group request per wait; a refusal never leaves the member
holding partitions; nothing here runs unless the group refused this member.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from ...assignor.leader_refusal import LeaderAction, StepAside
from ...authorization_advice import (
    group_refused_line,
    leader_stays_reason,
    leader_step_aside_line,
    leader_topics_refused_line,
    principal_text,
)

__all__ = ["AioGroupAuthorization", "AioLeaderRefusal", "is_group_refusal"]

log = logging.getLogger("kafka_sticky_plugin.aiokafka")

_FIRST_WAIT_S = 1.0
_MAX_WAIT_S = 30.0


def is_group_refusal(exc: BaseException) -> bool:
    """aiokafka's GROUP_AUTHORIZATION_FAILED error."""
    import aiokafka.errors as errors

    return isinstance(exc, errors.GroupAuthorizationFailedError)


def _principal(consumer: Any) -> str:
    client = getattr(consumer, "_client", None)
    return principal_text(
        {
            "security_protocol": getattr(client, "_security_protocol", None),
            "sasl_mechanism": getattr(client, "_sasl_mechanism", None),
            "sasl_plain_username": getattr(client, "_sasl_plain_username", None),
        }
    )


class AioGroupAuthorization:
    """One consumer's refusal state (see the module docstring).

    Invariants: ``refused_at`` is None while the group accepts the member; ``refusals``
    counts every refusal that reached the user (read by tests).
    """

    def __init__(self, consumer: Any, group_id: str) -> None:
        self._group_id = group_id
        self._principal = _principal(consumer)
        self._wait_s = _FIRST_WAIT_S
        self.refused_at: float | None = None
        self.refusals = 0

    def refused(self) -> float:
        """Count a refusal, say the first of a streak, and return how long to wait before
        the next attempt."""
        self.refusals += 1
        wait_s = self._wait_s
        if self.refused_at is None:
            self.refused_at = time.monotonic()
            line = group_refused_line(self._group_id, self._principal, "a group request", wait_s)
            log.error("%s", line)
        else:
            log.debug("group %s: refused again; next attempt in %.0f s", self._group_id, wait_s)
        self._wait_s = min(self._wait_s * 2, _MAX_WAIT_S)
        return wait_s

    def accepted(self) -> None:
        """A join succeeded: the next refusal is said again, waits start over."""
        if self.refused_at is not None:
            log.info("group %s: the group accepts this consumer again", self._group_id)
        self.refused_at = None
        self._wait_s = _FIRST_WAIT_S

    @staticmethod
    async def hold(
        push: Callable[[], Awaitable[Any]],
        closing: asyncio.Future[Any],
        wait_s: float,
        pause_s: float,
    ) -> None:
        """Keep handing the refusal to the user (``push``: aiokafka's own hand-over, which
        returns once ``getmany``/``getone`` raised it or the consumer stops) for ``wait_s``,
        ``pause_s`` apart, without asking the broker again.

        Why not simply sleep: a member without an assignment waits in ``getmany`` for one
        with no timeout (``Fetcher.fetched_records``: ``wait_for_assignment()``), so only an
        error handed over wakes it. Sleeping blocked the refused member's ``getmany`` for the
        whole wait, and a loop polling several consumers in turn then starved the healthy
        ones past ``max_poll_interval_ms``: they left and rejoined (the disturbance seen in
        the earlier attempt)."""
        deadline = time.monotonic() + wait_s
        while True:
            await push()
            left = deadline - time.monotonic()
            if closing.done() or left <= 0:
                return
            await asyncio.wait([closing], timeout=min(pause_s, left))
            if closing.done():
                return


class AioLeaderRefusal:
    """The leader's side of a topic another member subscribes to that it may not describe
    (the decision: :class:`~kafka_sticky_plugin.assignor.leader_refusal.StepAside`; the
    step-aside itself: :meth:`.hooks.AioHooks.step_aside`).

    Invariants: ``pending`` is the refused set to step aside for once this join completes
    (empty: none); ``step_asides`` counts the step-asides done (read by tests).
    """

    def __init__(self, consumer: Any, group_id: str) -> None:
        self._group_id = group_id
        self._principal = _principal(consumer)
        self.memory = StepAside()
        self.pending: frozenset[str] = frozenset()
        self.step_asides = 0

    def assigned(
        self, refused: Iterable[str], partition_counts: dict[str, int], *, static: bool
    ) -> None:
        """The leader assigned with ``refused`` topics of other members left out (their
        partitions unknown); ``partition_counts``: what it could see."""
        refused_set = frozenset(refused)
        granted = {topic for topic, count in partition_counts.items() if count}
        action, report = self.memory.decide(refused_set, static=static, granted=granted)
        if action is LeaderAction.STEP_ASIDE:
            line = leader_step_aside_line(self._group_id, refused_set, self._principal)
            log.warning("%s", line)
            self.pending = refused_set
        elif action is LeaderAction.STAY and report:
            line = leader_topics_refused_line(
                self._group_id, refused_set, self._principal, why_stays=leader_stays_reason(static)
            )
            log.warning("%s", line)
