"""kafka-python 3.0: a leader refused another member's topic steps aside, and a member whose
topic nobody holds is told (the decisions and the reasons are in
:mod:`kafka_sticky_plugin.assignor.leader_refusal`).

:class:`LeaderRefusal` is fed by the hooks: the metadata listener
(:class:`.authorization.TopicAuthorization`) hands it every Metadata response's refused
topics, the join completion (:meth:`joined`) the new generation, and every ``poll()`` runs
:meth:`describe_if_due` once the coordinator is known. It decides; the hooks act:

- STEP_ASIDE sets :attr:`LeaderRefusal.pending` and requests a rejoin; the next
  ``join_group_async`` (the hooks' ``_step_aside``) commits, revokes every owned partition
  through the listener, sends LeaveGroup, and rejoins as a new member;
- after a generation in which this member subscribes to a topic it can describe but holds
  none of its partitions, it waits two heartbeat intervals (a cooperative follow-up round
  or a step-aside ends the generation in that time, and a leaving member's partitions are in
  flight), then sends one DescribeGroups; a Stable group in the same generation where no
  member's assignment names the topic gets one WARNING line naming the topic and the leader
  (client id and host from DescribeGroups, the leader's member id from JoinGroup).

Invariants: at most one DescribeGroups per generation, and none unless this member holds no
partition of a subscribed topic it can describe; no step-aside while a JoinGroup/SyncGroup is
in flight; nothing here raises out of ``poll()`` (a failed DescribeGroups is a DEBUG line).
"""

from __future__ import annotations

import logging
import time
from typing import Any

from ....assignor.leader_refusal import (
    DescribedMember,
    LeaderAction,
    StepAside,
    ToldTopics,
    leader_of,
    topics_to_check,
    unheld_topics,
)
from ....authorization_advice import (
    leader_stays_reason,
    leader_step_aside_line,
    leader_topics_refused_line,
    principal_text,
    unassigned_topics_line,
)

__all__ = ["LeaderRefusal"]

log = logging.getLogger("kafka_sticky_plugin.hooks")


class LeaderRefusal:
    """One consumer's leader-refusal state (see the module docstring).

    Invariants: ``pending`` is true only between a STEP_ASIDE decision and the step-aside
    (or a join in which this member does not lead); ``step_asides`` and ``describes`` count
    what was done (read by tests); ``leader_id`` is the leader named by the last JoinGroup.
    """

    def __init__(self, consumer: Any, group_id: str) -> None:
        self._consumer = consumer
        self._coordinator = consumer._coordinator
        self._subscription = consumer._subscription
        self._group_id = group_id
        config = getattr(consumer, "config", None)
        self._principal = principal_text(config if isinstance(config, dict) else None)
        self.step_aside = StepAside()
        self.told = ToldTopics()
        self.pending = False
        self.step_asides = 0
        self.describes = 0
        self.leader_id: str | None = None
        #: (generation, due at ``time.monotonic()``, topics) of the DescribeGroups to send.
        self._check: tuple[int, float, frozenset[str]] | None = None

    # -- facts from the client ------------------------------------------------------------
    @property
    def static(self) -> bool:
        return getattr(self._coordinator, "group_instance_id", None) is not None

    def _describable(self) -> set[str]:
        """Subscribed or group topics whose partitions this member's metadata lists."""
        cluster = self._coordinator._cluster
        refused = set(getattr(cluster, "unauthorized_topics", ()) or ())
        topics = set(self._subscription.group_subscription() or ()) | set(
            self._subscription.subscription or ()
        )
        return {t for t in topics - refused if cluster.partitions_for_topic(t)}

    def _refused_others(self, refused: frozenset[str]) -> frozenset[str]:
        own = frozenset(self._subscription.subscription or ())
        group = frozenset(self._subscription.group_subscription() or ())
        return (refused & group) - own

    # -- the leader -----------------------------------------------------------------------
    def on_refused(self, refused: frozenset[str]) -> None:
        """Every Metadata response's refused topics (from the metadata listener)."""
        if self.pending or not getattr(self._coordinator, "_is_leader", False):
            return
        others = self._refused_others(refused)
        action, report = self.step_aside.decide(
            others, static=self.static, granted=self._describable()
        )
        if action is LeaderAction.STEP_ASIDE:
            log.warning("%s", leader_step_aside_line(self._group_id, others, self._principal))
            self.pending = True
            self._coordinator.request_rejoin()
        elif action is LeaderAction.STAY and report:
            line = leader_topics_refused_line(
                self._group_id, others, self._principal, why_stays=leader_stays_reason(self.static)
            )
            log.warning("%s", line)

    def stepped_aside(self) -> None:
        """The hooks gave the partitions up and left the group."""
        self.pending = False
        self.step_asides += 1

    # -- every member ---------------------------------------------------------------------
    def on_join_response(self, leader_id: str) -> None:
        self.leader_id = leader_id

    def joined(self, generation: int) -> None:
        """A join completed (assignment applied): re-decide as leader, plan the check."""
        coordinator = self._coordinator
        if not getattr(coordinator, "_is_leader", False):
            self.pending = False
        else:
            refused = frozenset(getattr(coordinator._cluster, "unauthorized_topics", ()) or ())
            self.on_refused(refused)
            if self.pending:
                coordinator.request_rejoin()  # the join just cleared the earlier request
        held = {tp.topic for tp in self._subscription.assigned_partitions()}
        own = self._subscription.subscription or ()
        topics = topics_to_check(own, self._describable(), held)
        if not topics:
            self._check = None
            self.told.update(())
            return
        interval_s = float(coordinator.config.get("heartbeat_interval_ms", 3000)) / 1000
        self._check = (generation, time.monotonic() + max(1.0, 2 * interval_s), topics)

    async def describe_if_due(self) -> None:
        """Send the generation's DescribeGroups when it is due and the member is stable."""
        check = self._check
        if check is None:
            return
        from kafka.coordinator.base import MemberState

        coordinator = self._coordinator
        generation, due, topics = check
        if coordinator._generation.generation_id != generation:
            self._check = None
            return
        stable = coordinator.state is MemberState.STABLE and not coordinator.rejoining
        if time.monotonic() < due or not stable or coordinator._join_task is not None:
            return
        self._check = None
        self.describes += 1
        group = await self._describe_group()
        if group is None or coordinator._generation.generation_id != generation:
            return
        if not all(isinstance(m.member_assignment, bytes) for m in group.members):
            return
        members = [
            DescribedMember(m.member_id, m.client_id, m.client_host, m.member_assignment)
            for m in group.members
        ]
        unheld = unheld_topics(topics, [m.assignment for m in members])
        if self.told.update(unheld):
            leader = leader_of(members, self.leader_id)
            log.warning("%s", unassigned_topics_line(self._group_id, unheld, leader))

    async def _describe_group(self) -> Any:
        """The group as DescribeGroups shows it, when Stable; else None (DEBUG line). Any
        failure, a client without the request class included, is that DEBUG line."""
        coordinator = self._coordinator
        manager = coordinator._manager
        timeout_ms = int(self._consumer.config.get("request_timeout_ms", 30000))
        try:
            from kafka.protocol.admin import DescribeGroupsRequest

            request = DescribeGroupsRequest(
                groups=[self._group_id], include_authorized_operations=False
            )
            future = manager.send(request, node_id=coordinator.coordinator_id)
            response = await manager.wait_for(future, timeout_ms)
        except Exception as exc:
            log.debug("group %s: DescribeGroups failed: %r", self._group_id, exc)
            return None
        groups = list(getattr(response, "groups", ()) or ())
        if not groups or groups[0].error_code != 0 or groups[0].group_state != "Stable":
            log.debug("group %s: DescribeGroups answered %r", self._group_id, groups[:1])
            return None
        return groups[0]
