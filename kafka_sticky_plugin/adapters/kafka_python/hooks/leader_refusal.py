"""kafka-python 3.0 and 2.x: a leader refused another member's topic steps aside, and a member
whose topic nobody holds is told (the decisions and the reasons are in
:mod:`kafka_sticky_plugin.assignor.leader_refusal`).

:class:`LeaderRefusal` is fed by the hooks: the metadata listener
(:class:`.authorization.TopicAuthorization`) hands it every Metadata response's refused
topics, the join completion (:meth:`joined`) the new generation, and every ``poll()`` runs
:meth:`describe_if_due` (3.0) or :meth:`describe_if_due_sync` (2.x) once the coordinator is
known. It decides; the hooks act:

- STEP_ASIDE sets :attr:`LeaderRefusal.pending` and requests a rejoin; the next join (3.0:
  ``join_group_async``, 2.x: ``_on_join_prepare``; the hooks' ``_step_aside``) commits,
  revokes every owned partition through the listener, sends LeaveGroup, and rejoins as a new
  member;
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

__all__ = ["LeaderRefusal", "describe_groups_version"]

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

    def _take_due(self, stable: bool) -> tuple[int, frozenset[str]] | None:
        """The planned check's generation and topics when it is due now (then it is taken:
        one per generation); ``stable``: the member is in a settled generation (no
        JoinGroup/SyncGroup in flight, no rejoin requested). A newer generation drops it."""
        check = self._check
        if check is None:
            return None
        generation, due, topics = check
        if self._coordinator._generation.generation_id != generation:
            self._check = None
            return None
        if time.monotonic() < due or not stable:
            return None
        self._check = None
        self.describes += 1
        return generation, topics

    def _tell(
        self, members: list[DescribedMember] | None, generation: int, topics: frozenset[str]
    ) -> None:
        """The told line, when the described group (None: not Stable, or failed) is still
        this generation and no member holds one of ``topics``."""
        if members is None or self._coordinator._generation.generation_id != generation:
            return
        if not all(isinstance(m.assignment, bytes) for m in members):
            return
        unheld = unheld_topics(topics, [m.assignment for m in members])
        if self.told.update(unheld):
            leader = leader_of(members, self.leader_id)
            log.warning("%s", unassigned_topics_line(self._group_id, unheld, leader))

    def _timeout_ms(self) -> int:
        return int(self._consumer.config.get("request_timeout_ms", 30000))

    async def describe_if_due(self) -> None:
        """kafka-python 3.0: send the generation's DescribeGroups when it is due and the
        member is stable."""
        from kafka.coordinator.base import MemberState

        coordinator = self._coordinator
        stable = (
            coordinator.state is MemberState.STABLE
            and not coordinator.rejoining
            and coordinator._join_task is None
        )
        due = self._take_due(stable) if self._check is not None else None
        if due is not None:
            self._tell(await self._describe_group(), *due)

    def describe_if_due_sync(self) -> None:
        """kafka-python 2.x: the same, blocking the calling ``poll()`` for at most
        ``request_timeout_ms`` (the client's own requests from ``poll()`` block likewise).
        The heartbeat thread may answer it meanwhile: the client's send/poll take their locks,
        and none is held here."""
        from kafka.coordinator.base import MemberState

        coordinator = self._coordinator
        stable = (
            coordinator.state is MemberState.STABLE
            and not coordinator.rejoining
            and not coordinator.rejoin_needed
            and getattr(coordinator, "join_future", None) is None
        )
        due = self._take_due(stable) if self._check is not None else None
        if due is not None:
            self._tell(self._describe_group_sync(), *due)

    def _described(self, groups: list[tuple[int, str]]) -> bool:
        """Whether DescribeGroups answered (error code, state) no error and Stable for the
        group (else a DEBUG line)."""
        first = groups[0] if groups else None
        if first is None or first != (0, "Stable"):
            log.debug("group %s: DescribeGroups answered %r", self._group_id, groups[:1])
            return False
        return True

    async def _describe_group(self) -> list[DescribedMember] | None:
        """The group's members as DescribeGroups shows them, when Stable; else None (DEBUG
        line). Any failure, a client without the request class included, is that DEBUG
        line."""
        coordinator = self._coordinator
        manager = coordinator._manager
        try:
            from kafka.protocol.admin import DescribeGroupsRequest

            request = DescribeGroupsRequest(
                groups=[self._group_id], include_authorized_operations=False
            )
            future = manager.send(request, node_id=coordinator.coordinator_id)
            response = await manager.wait_for(future, self._timeout_ms())
        except Exception as exc:
            log.debug("group %s: DescribeGroups failed: %r", self._group_id, exc)
            return None
        groups = list(getattr(response, "groups", ()) or ())
        summary = [(g.error_code, g.group_state) for g in groups]
        if not self._described(summary):
            return None
        return [
            DescribedMember(m.member_id, m.client_id, m.client_host, m.member_assignment)
            for m in groups[0].members
        ]

    def _describe_group_sync(self) -> list[DescribedMember] | None:
        """2.x's DescribeGroups (v0-v3, whose groups and members are tuples in the same
        order: :func:`describe_groups_version`), as :meth:`_describe_group`."""
        coordinator = self._coordinator
        client = coordinator._client
        try:
            from kafka.protocol.admin import DescribeGroupsRequest

            versions = client.get_api_versions() or {}
            version = describe_groups_version(len(DescribeGroupsRequest), versions.get(15))
            fields: dict[str, Any] = {"groups": [self._group_id]}
            if version >= 3:
                fields["include_authorized_operations"] = False
            future = client.send(
                coordinator.coordinator_id, DescribeGroupsRequest[version](**fields)
            )
            client.poll(future=future, timeout_ms=self._timeout_ms())
            if not future.is_done or future.failed():
                raise RuntimeError(future.exception if future.is_done else "no answer in time")
            groups = list(future.value.groups or ())
        except Exception as exc:
            log.debug("group %s: DescribeGroups failed: %r", self._group_id, exc)
            return None
        if not self._described([(g[0], g[2]) for g in groups]):
            return None
        return [DescribedMember(m[0], m[1], m[2], m[4]) for m in groups[0][5]]


def describe_groups_version(client_versions: int, broker: tuple[int, int] | None) -> int:
    """The DescribeGroups version a 2.x client sends: the highest of v0-v3 (their response
    layouts are the same tuples) that the client has (``client_versions`` classes) and the
    broker accepts (its (min, max) from ApiVersions; None: unknown, v0)."""
    highest = min(3, client_versions - 1)
    if broker is None:
        return 0
    low, high = broker
    return max(min(highest, high), min(low, highest))
