"""A hooked aiokafka member whose subscribed topic no member holds is told in one line (the
reasons: :mod:`kafka_sticky_plugin.assignor.leader_refusal`, point 2).

After each completed join (:meth:`AioToldCheck.joined`), a member that subscribes to a topic
it can describe but holds none of its partitions starts one task: it waits two heartbeat
intervals (a cooperative follow-up round or a leader's step-aside ends the generation
meanwhile), then, in the same generation with no rejoin pending, sends one DescribeGroups to
the coordinator (``READ`` on the group allows it) and, when the group is Stable and no
member's assignment names the topic, logs one WARNING line naming it and the leader.

Invariants: at most one DescribeGroups per generation (a new join cancels the previous
generation's task); the task ends when the consumer stops; nothing here raises into the
coordination routine (a failed request is a DEBUG line and does not mark the coordinator
dead, unlike aiokafka's ``_send_req``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterable
from typing import Any

from ...assignor.leader_refusal import (
    DescribedMember,
    ToldTopics,
    leader_of,
    topics_to_check,
    unheld_topics,
)
from ...authorization_advice import unassigned_topics_line

__all__ = ["AioToldCheck"]

log = logging.getLogger("kafka_sticky_plugin.aiokafka")


class AioToldCheck:
    """One consumer's told-check (see the module docstring). ``describes`` counts the
    DescribeGroups sent (read by tests); ``leader_id`` is the leader the last JoinGroup
    named."""

    def __init__(self, group_id: str) -> None:
        self._group_id = group_id
        self.told = ToldTopics()
        self.describes = 0
        self.leader_id: str | None = None
        self._task: asyncio.Task[None] | None = None

    def joined(
        self, coordinator: Any, generation: int, subscribed: Iterable[str], held: Iterable[str]
    ) -> None:
        """A join completed: plan this generation's check (or none)."""
        self.cancel()
        cluster = coordinator._cluster
        refused = set(getattr(cluster, "unauthorized_topics", ()) or ())
        wanted = set(subscribed)
        describable = {t for t in wanted - refused if cluster.partitions_for_topic(t)}
        topics = topics_to_check(wanted, describable, held)
        if not topics:
            self.told.update(())
            return
        self._task = asyncio.get_running_loop().create_task(
            self._check_later(coordinator, generation, topics)
        )

    def cancel(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
        self._task = None

    async def _check_later(self, coordinator: Any, generation: int, topics: frozenset[str]) -> None:
        delay_s = max(1.0, 2 * coordinator._heartbeat_interval_ms / 1000)
        closing = coordinator._closing
        await asyncio.wait([closing], timeout=delay_s)
        if closing.done() or coordinator.generation != generation:
            return
        if coordinator._rejoin_needed_fut.done():
            return
        self.describes += 1
        members = await self._describe(coordinator)
        if members is None or coordinator.generation != generation:
            return
        unheld = unheld_topics(topics, [m.assignment for m in members])
        if self.told.update(unheld):
            leader = leader_of(members, self.leader_id)
            log.warning("%s", unassigned_topics_line(self._group_id, unheld, leader))

    async def _describe(self, coordinator: Any) -> list[DescribedMember] | None:
        """The members of a Stable group, as DescribeGroups shows them; else None."""
        try:
            from aiokafka.client import ConnectionGroup
            from aiokafka.protocol.admin import DescribeGroupsRequest

            response = await coordinator._client.send(
                coordinator.coordinator_id,
                DescribeGroupsRequest([self._group_id]),
                group=ConnectionGroup.COORDINATION,
            )
            # aiokafka decodes nested arrays as tuples: (error_code, group, state,
            # protocol_type, protocol, members[, authorized_operations]) and members as
            # (member_id, client_id, client_host, metadata, assignment)
            error_code, _, state, _, _, members = response.groups[0][:6]
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.debug("group %s: DescribeGroups failed: %r", self._group_id, exc)
            return None
        if error_code != 0 or state != "Stable":
            log.debug("group %s: DescribeGroups: error %s, %s", self._group_id, error_code, state)
            return None
        with contextlib.suppress(TypeError, ValueError):
            return [
                DescribedMember(str(m[0]), str(m[1]), str(m[2]), bytes(m[4]) if m[4] else None)
                for m in members
            ]
        return None
