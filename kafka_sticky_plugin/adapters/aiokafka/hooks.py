"""Coordinator hooks for one ``AIOKafkaConsumer``: generations, ``on_partitions_lost``, the
v0-v3 leader and KIP-429's cooperative protocol on aiokafka 0.13/0.14.

aiokafka's ``GroupCoordinator`` runs one coordination task per consumer; a rebalance goes
``ensure_active_group`` -> ``_on_join_prepare`` (once per rebalance) -> ``_do_rejoin_group``
(JoinGroup, leader ``_perform_assignment``, SyncGroup) -> ``_on_join_complete``. The hooks
replace four of those methods on *one coordinator instance* (never the class):

- ``_on_join_prepare``: membership lost (generation -1 or no member id: session expiry, a
  fenced or unknown member, poll-interval expiry, which makes aiokafka leave the group) ->
  ``on_partitions_lost`` with no commit, the assignment cleared and every assignor reset;
  EAGER -> commit (auto-commit), ``on_partitions_revoked`` with everything; COOPERATIVE ->
  commit, then only the partitions of topics no longer subscribed (KIP-70) are revoked, the
  rest stay assigned and keep being consumed during the rebalance;
- ``_do_rejoin_group``: a loss that happened after the prepare step (a failed SyncGroup, an
  unknown member id at JoinGroup) is handled the same way first; then *one* JoinGroup with
  every configured protocol (aiokafka sends one JoinGroup per configured assignor, each with
  a longer protocol list), our subscription v3 bytes (owned partitions = the current
  assignment under COOPERATIVE, generation, rack);
- ``_perform_assignment`` (leader): every member's raw metadata read once by our codec
  (v0-v3: owned partitions, generation, rack) instead of aiokafka's v0-only schema;
- ``_on_join_complete``: the assignment decoded by our codec; COOPERATIVE: partitions that
  leave are revoked while still assigned (their positions can be committed), kept partitions
  keep their fetch positions, ``on_partitions_assigned`` gets the added ones and a follow-up
  rebalance is requested when something was revoked; the assignment and generation become
  the member's join state (:attr:`AioHooks.joined`, which our assignors are passed: they
  hold none).

Also patched: ``_maybe_leave_group`` (``stop()``) leaves in generation 0 too, which aiokafka
skips (see :meth:`AioHooks._maybe_leave_group`); the heartbeat and ``commit_offsets`` (see
their methods). Refusals: a refused group (:mod:`.authorization`), and subscribed topics
this member may not describe, left out of its JoinGroup until granted
(:mod:`.topic_authorization`). A leader that may not describe a topic another member
subscribes to steps aside once after its SyncGroup (:meth:`AioHooks.step_aside`, issue 27).

A protocol that is not ours (``range`` during the two-bounce upgrade) runs aiokafka's own
code for the assignment; the hooks only keep track of what the member owns.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable
from typing import Any, NoReturn, cast

from ...assignor.contract import (
    bind_assignors,
    instantiate_assignor,
)
from ...assignor.decisions import (
    decide_complete,
    decide_prepare,
    drop_unsubscribed,
    log_assigned,
    lost_method_name,
    membership_lost,
)
from ...assignor.leader import MemberMetadata
from ...assignor.member import NO_JOIN, JoinState
from ...assignor.prompt_heartbeats import DEFAULT_PROMPT_HEARTBEATS, PromptHeartbeats
from ...assignor.rack_changes import RackTracker
from ...assignor.racks import partition_counts, racks_changed
from ...assignor.rebalance import RebalanceProtocol
from ...codec import decode_assignment
from ...listener.contract import CallbackKind, RebalanceListener
from ...metrics.observe import assign_from_cluster
from ...metrics.recorder import RebalanceMetrics
from ...migration_advice import refusal_line
from .authorization import AioGroupAuthorization, AioLeaderRefusal, is_group_refusal
from .listener import call_listener
from .positions import assign_keeping_positions
from .prompt import PromptTask
from .read_replica import AioReadReplicaRefresh, needs_refresh_patch
from .rebalance_consumer import call_rebalance_listener
from .told import AioToldCheck
from .topic_authorization import AioTopicAuthorization

__all__ = ["AioHooks"]

log = logging.getLogger("kafka_sticky_plugin.aiokafka")

#: Kafka's FENCED_INSTANCE_ID error code (aiokafka 0.14 has no class for it).
FENCED_INSTANCE_ID = 82


def _fenced_error_class() -> type[Exception]:
    """aiokafka's own ``FencedInstanceIdError`` (0.15+, raised by its Heartbeat, JoinGroup
    and SyncGroup), or one of ours shaped like it (0.13, 0.14)."""
    import aiokafka.errors as errors

    native: type[Exception] | None = getattr(errors, "FencedInstanceIdError", None)
    if native is not None:
        return native

    class FencedInstanceIdError(errors.KafkaError):  # type: ignore[misc]
        """Another consumer joined under this consumer's group.instance.id (KIP-345)."""

    return FencedInstanceIdError


def fenced_instance_id_error(group_id: str, instance_id: str) -> Exception:
    """The error a replaced static member gets from ``getmany``/``getone`` (an aiokafka
    ``KafkaError``, so aiokafka's coordinator hands it to the user instead of crashing), as
    Java's consumer throws ``FencedInstanceIdException`` from ``poll``: aiokafka's own class
    where it has one, so ``except aiokafka.errors.FencedInstanceIdError`` catches it."""
    return _fenced_error_class()(
        f"group {group_id}: another consumer joined with group_instance_id {instance_id!r};"
        " this one is fenced (FENCED_INSTANCE_ID) and should be closed"
    )


class AioHooks:
    """The hooks of one consumer (see the module docstring).

    Invariants: ``assignors`` are the instances the coordinator uses, in preference order, at
    least one of them ours; ``protocol`` is chosen once by KIP-429's rule; ``owned`` is what
    this member owns in the group's eyes (empty after a loss or an EAGER revocation);
    ``joined`` is its last completed join (``NO_JOIN`` before one and after a loss), the one
    join state its JoinGroup metadata is written from (the assignors hold none); ``_held`` is
    the aiokafka ``Assignment`` whose per-partition state holds the owned positions.
    """

    def __init__(
        self, consumer: Any, prompt: PromptHeartbeats | None = DEFAULT_PROMPT_HEARTBEATS
    ) -> None:
        self._consumer = consumer
        self._subscription = consumer._subscription
        configured = list(consumer._partition_assignment_strategy)
        self.assignors: list[Any] = [instantiate_assignor(a) for a in configured]
        self._bound, self.protocol = bind_assignors(
            self.assignors,
            "StickyAssignor, CooperativeStickyAssignor from kafka_sticky_plugin.aiokafka",
        )
        rack = getattr(consumer, "_client_rack", None)
        #: KIP-881: the consumer's ``client_rack``, reported by our assignors given no rack
        self.client_rack: str | None = rack if isinstance(rack, str) and rack else None
        self.joined: JoinState = NO_JOIN
        consumer._partition_assignment_strategy = tuple(self.assignors)
        self.owned: frozenset[Any] = frozenset()
        self._held: Any = None
        #: the aiokafka ``Subscription`` whose assignment ``_held`` is (``subscribe`` replaces
        #: the consumer's subscription object at once; KIP-70's revocation shows this one)
        self._held_by: Any = None
        self._coordinator: Any = None
        self._heartbeat_ok_at = time.monotonic()
        #: when the member last found itself without a reachable group coordinator
        self._coordinator_missing_at = 0.0
        self._joining = False
        self._in_rebalance = False
        self._originals: dict[str, Any] = {}
        #: Java 4.5's listener (KIP-1306), if one was registered (:mod:`.rebalance_consumer`)
        self.rebalance_listener: RebalanceListener | None = None
        #: quicker heartbeats for a short window after a cooperative SyncGroup (.prompt)
        self.prompt = PromptTask(lambda: self._coordinator, self._heartbeat, prompt)
        #: GROUP_AUTHORIZATION_FAILED: one line, spaced attempts (:mod:`.authorization`)
        self.group_authorization = AioGroupAuthorization(consumer, str(consumer._group_id))
        #: a leader refused another member's topic steps aside once (:meth:`step_aside`)
        self.leader_refusal = AioLeaderRefusal(consumer, str(consumer._group_id))
        #: a subscribed topic nobody holds is said once (:mod:`.told`)
        self.told = AioToldCheck(str(consumer._group_id))
        #: TOPIC_AUTHORIZATION_FAILED on its own topics: left out of JoinGroup
        #: (:mod:`.topic_authorization`)
        self.topic_authorization = AioTopicAuthorization(consumer, str(consumer._group_id))
        self.metrics = RebalanceMetrics(
            str(consumer._group_id),
            str(getattr(consumer._client, "_client_id", "") or ""),
            assigned=lambda: len(self.owned),
        )
        #: KIP-881: the placement this member assigned with as leader (:meth:`on_metadata_racks`)
        self.racks = RackTracker()
        #: the closest-replica fetch fix on this consumer's fetcher (:mod:`.read_replica`)
        self.read_replica: AioReadReplicaRefresh | None = None

    # -- installation -------------------------------------------------------------------
    def attach(self, coordinator: Any) -> None:
        """Patch ``coordinator`` (the consumer's new ``GroupCoordinator``) before its
        coordination task first runs."""
        if self._coordinator is coordinator:
            return
        self._coordinator = coordinator
        coordinator._assignors = tuple(self.assignors)
        for name, replacement in (
            ("_on_join_prepare", self.on_join_prepare),
            ("_do_rejoin_group", self.do_rejoin_group),
            ("_perform_assignment", self.perform_assignment),
            ("_on_join_complete", self.on_join_complete),
            ("_do_heartbeat", self._heartbeat),
            ("commit_offsets", self._commit_offsets),
            ("_maybe_leave_group", self._maybe_leave_group),
            ("_push_error_to_user", self.push_error),
        ):
            self._originals[name] = getattr(coordinator, name)
            vars(coordinator)[name] = replacement
        self.topic_authorization.attach(coordinator)
        # KIP-881: a leader rebalances once when replica racks change (one listener per
        # consumer: the cluster object is the client's, shared by every coordinator)
        fetcher = getattr(self._consumer, "_fetcher", None)
        patched = None if self.read_replica is None else self.read_replica.fetcher
        if fetcher is not None and fetcher is not patched and needs_refresh_patch(fetcher):
            self.read_replica = AioReadReplicaRefresh(fetcher)  # KIP-392 after a restart
            self.read_replica.install()
        listeners: Any = getattr(coordinator._cluster, "_listeners", ())
        if self.on_metadata_racks not in listeners:
            coordinator._cluster.add_listener(self.on_metadata_racks)

    @property
    def group_id(self) -> str:
        return str(self._coordinator.group_id)

    def on_metadata_racks(self, cluster: Any) -> None:
        """aiokafka's metadata listener: while this member tracks the placement it assigned
        with as leader, a change in the racks of a subscribed partition's replicas requests
        one rejoin (:mod:`~kafka_sticky_plugin.assignor.rack_changes`: a broker that is only
        absent is no change). Never raises."""
        if self._coordinator is None:
            return
        if racks_changed(self.racks, cluster, self.group_id, log):
            self._coordinator.request_rejoin()

    @property
    def cooperative(self) -> bool:
        return self.protocol is RebalanceProtocol.COOPERATIVE

    def forget_join(self) -> None:
        """Membership lost: the member forgets its last join (next claim: nothing, -1)."""
        self.joined = NO_JOIN

    # -- steps shared by the patched methods ----------------------------------------------
    async def _commit_held(self) -> None:
        """Auto-commit the consumed positions of what the member holds (never after a loss:
        ``_held`` is cleared then)."""
        coordinator = self._coordinator
        held = self._held
        if not coordinator._enable_auto_commit or held is None:
            return
        import aiokafka.errors as errors

        offsets = held.all_consumed_offsets()
        if not offsets:
            return  # nothing consumed (aiokafka would return before sending anything too)
        try:
            await coordinator.commit_offsets(held, offsets)
        except errors.KafkaError as err:
            # One line (the member goes on; the next owner starts from the last commit).
            log.warning(
                "group %s: commit of %d partitions before the rebalance failed: %s: %s;"
                " records consumed since their last commit will be delivered again",
                self.group_id,
                len(offsets),
                type(err).__name__,
                err,
            )
            log.debug("group %s: commit failure", self.group_id, exc_info=err)

    async def _listen(self, listener: Any, name: str, partitions: Any, kind: str) -> None:
        """:func:`.listener.call_listener`, timed for the metrics as ``on_partitions_<kind>``;
        a registered RebalanceListener (KIP-1306) instead, with its view
        (:mod:`.rebalance_consumer`)."""
        with self.metrics.timed_callback(kind, len(partitions)):
            ours = self.rebalance_listener
            if ours is not None:
                await call_rebalance_listener(
                    self._consumer, ours, cast(CallbackKind, kind), partitions, self.group_id
                )
            else:
                await call_listener(listener, name, partitions, self.group_id)

    async def _lose(self, partitions: Iterable[Any]) -> None:
        """Membership is gone: tell the listener, give the partitions up without a commit.
        The member's own record is cleared first, so a loss is reported once."""
        lost = set(partitions)
        self.owned = frozenset()
        self._held = self._held_by = None
        self.forget_join()
        log.info("group %s: membership lost; partitions lost: %s", self.group_id, sorted(lost))
        listener = self._subscription.listener
        await self._listen(listener, lost_method_name(listener), lost, "lost")
        current = self._subscription.subscription
        if current is not None and current.assignment is not None and current.assignment.tps:
            self._subscription.assign_from_subscribed(set())
        self._subscription.begin_reassignment()

    async def check_session(self) -> None:
        """Before records are handed out: when no heartbeat succeeded for a whole session
        timeout (the event loop was blocked, the process frozen), the broker has already
        given the partitions to someone else, so they are lost *now*, before aiokafka's
        heartbeat task finds out and before a prefetched record of theirs is delivered.

        Time spent without a group coordinator does not count: when the coordinator's broker
        dies, the broker that takes the group over starts every member's session afresh once
        it has loaded the group, so only its answer to the next heartbeat can say whether the
        membership survived (Java likewise only looks for the coordinator again when its
        session passes without a heartbeat). Counting that time made every member of the
        faults tier drop its partitions and rejoin at each coordinator move (issue 29)."""
        coordinator = self._coordinator
        if coordinator is None or not self.owned or self._joining:
            return  # a JoinGroup/SyncGroup in flight keeps the member alive without heartbeats
        now = time.monotonic()
        if coordinator.coordinator_id is None:
            self._coordinator_missing_at = now  # still looking for it
            return
        silent = now - max(self._heartbeat_ok_at, self._coordinator_missing_at)
        if silent <= coordinator._session_timeout_ms / 1000:
            return
        log.warning(
            "group %s: no successful heartbeat for %.1f s (session %d ms): membership lost",
            self.group_id,
            silent,
            coordinator._session_timeout_ms,
        )
        member_id = coordinator.member_id
        coordinator.reset_generation()
        self._keep_static_member_id(member_id)
        await self._lose(self.owned)

    async def _commit_offsets(self, assignment: Any, offsets: Any) -> None:
        """aiokafka's commit, refused while a JoinGroup/SyncGroup is in flight (KIP-429: a
        cooperative member keeps consuming then, and a commit with the old generation would
        make aiokafka reset the member's generation, losing every partition it keeps)."""
        if self._in_rebalance:
            import aiokafka.errors as errors

            raise errors.RebalanceInProgressError(
                "a rebalance is in progress; commit again once it completes"
            )
        member_id = self._coordinator.member_id
        try:
            await self._originals["commit_offsets"](assignment, offsets)
        finally:
            self._keep_static_member_id(member_id)

    async def _heartbeat(self) -> bool:
        """aiokafka's heartbeat, remembering when one last succeeded or found no reachable
        coordinator (and, for a static member, keeping its member id when the heartbeat
        reset its generation)."""
        member_id = self._coordinator.member_id
        self.prompt.window.sent(time.monotonic())
        try:
            ok = bool(await self._originals["_do_heartbeat"]())
        except _fenced_error_class():  # aiokafka 0.15+ raises it from its heartbeat
            await self._fenced()
        if ok:
            self._heartbeat_ok_at = time.monotonic()
        else:
            if self._coordinator.coordinator_id is None:  # unreachable: see check_session
                self._coordinator_missing_at = time.monotonic()
            self._keep_static_member_id(member_id)
        return ok

    async def push_error(self, exc: Exception) -> None:
        """aiokafka's hand-over of a coordination error to ``getmany``/``getone``; a group
        refusal (:mod:`.authorization`) is said once, drops what the member holds, and the
        next request to the broker waits (``getmany`` keeps raising it meanwhile)."""
        coordinator = self._coordinator
        if not is_group_refusal(exc):
            await self._originals["_push_error_to_user"](exc)
            return
        wait_s = self.group_authorization.refused()
        if self.owned or not membership_lost(coordinator.generation, coordinator.member_id):
            member_id = coordinator.member_id
            coordinator.reset_generation()
            self._keep_static_member_id(member_id)
            if self.owned:
                await self._lose(self.owned)
        await self.group_authorization.hold(
            lambda: self._originals["_push_error_to_user"](exc),
            coordinator._closing,
            wait_s,
            coordinator._retry_backoff_ms / 1000,
        )

    async def _maybe_leave_group(self) -> None:
        """LeaveGroup on ``stop()`` (and poll-interval expiry) in *every* generation of a
        dynamic member, as Java does (``generation.hasMemberId()``).

        aiokafka leaves only when ``generation > 0``, but generation 0 is a real generation
        on brokers that count from 0 (Tansu): a member stopped there left no LeaveGroup, so
        its seat (and, when it led, the group's leadership) stayed until its session
        expired. The next rebalance then waited for a SyncGroup from that departed leader
        (a whole session timeout with the restarted member's partitions unowned) and ran
        once more without it: the first rolling restart of an aiokafka group was slow and
        not sticky where every later one, and kafka-python's, was both."""
        coordinator = self._coordinator
        if (
            coordinator.generation == 0
            and coordinator.member_id
            and coordinator._group_instance_id is None
        ):
            await self._leave_group("generation 0")
            return
        await self._originals["_maybe_leave_group"]()

    async def _leave_group(self, why: str) -> None:
        """LeaveGroup for this dynamic member (a failure is one WARNING line), then a fresh
        generation: the next JoinGroup joins as a new member."""
        import aiokafka.errors as errors
        from aiokafka.protocol.group import LeaveGroupRequest

        coordinator = self._coordinator
        try:
            await coordinator._send_req(
                LeaveGroupRequest(coordinator.group_id, coordinator.member_id)
            )
        except errors.KafkaError as err:
            log.warning("group %s: LeaveGroup failed: %s", self.group_id, err)
        else:
            log.info("group %s: left the group (%s)", self.group_id, why)
        coordinator.reset_generation()

    async def step_aside(self) -> None:
        """The leader refused another member's topic leaves the group once
        (:class:`.authorization.AioLeaderRefusal`): commit, ``on_partitions_revoked`` with
        everything it owns (still assigned), the assignment cleared, LeaveGroup; the
        coordination task then rejoins as a new member and the coordinator makes another
        member the leader."""
        owned = set(self.owned)
        if owned:
            await self._commit_held()
            log.info("group %s: stepping aside as leader; revoking %s", self.group_id, owned)
            await self._revoke(owned)
            self._subscription.assign_from_subscribed(set())
            self._subscription.begin_reassignment()
        self.owned = frozenset()
        self._held = self._held_by = None
        self.forget_join()
        self.leader_refusal.pending = frozenset()
        await self._leave_group("stepping aside as leader")
        self.leader_refusal.step_asides += 1

    def _keep_static_member_id(self, member_id: Any) -> None:
        """A static member (``group_instance_id``) whose generation was just reset keeps its
        member id for the next JoinGroup. With it the broker tells a member that another
        consumer replaced under the same instance id (FENCED_INSTANCE_ID: fatal, as in Java)
        from one whose session expired (UNKNOWN_MEMBER_ID: then a fresh join). aiokafka
        clears it, and its fresh JoinGroup would take the seat back from the newer consumer,
        so two consumers with one instance id would take turns forever. Its Heartbeat (v0/v1)
        and OffsetCommit carry no instance id, so they only ever hear UNKNOWN_MEMBER_ID."""
        coordinator = self._coordinator
        if (
            coordinator._group_instance_id
            and member_id
            and not coordinator.member_id
            and coordinator.generation < 0
        ):
            coordinator.member_id = member_id

    async def _follow_subscription(self) -> None:
        """COOPERATIVE, KIP-70: revoke owned partitions of topics no longer subscribed and
        keep the rest assigned (in the current subscription, positions kept)."""
        if not self.owned:
            return
        topics = set(self._subscription.topics)
        dropped = {tp for tp in self.owned if tp.topic not in topics}
        kept = self.owned - dropped
        if dropped:
            await self._revoke(dropped)
        current = self._subscription.subscription
        if current is not None and (
            dropped or (kept and (current.assignment is None or current.assignment.tps != kept))
        ):
            assign_keeping_positions(self._subscription, kept, self._held)
            self._held, self._held_by = current.assignment, current
        self.owned = frozenset(kept)

    def _stop_returning(self, revoked: Iterable[Any]) -> None:
        """Partitions a cooperative round revokes return nothing more from here on: they are
        paused before the commit and ``on_partitions_revoked`` (aiokafka's fetcher returns
        no record of a paused partition and drops what it holds of one).

        The callback runs in the coordination task while the application's ``getmany`` runs
        in its own; a callback that awaits (a commit does) let ``getmany`` return records of
        the partitions being revoked, past the positions the callback had read, and the next
        owner read them again. Java's callback runs inside ``poll()``, where this cannot
        happen. The partitions leave the assignment right after the callback, so nothing
        resumes them."""
        for tp in revoked:
            if self._subscription.is_assigned(tp):
                self._subscription.pause(tp)

    async def _revoke(self, revoked: set[Any]) -> None:
        """``on_partitions_revoked`` before the JoinGroup, while the partitions are still
        assigned (KIP-429's promise: the callback can read their positions and commit them).

        After a subscription change (KIP-70) aiokafka's ``subscribe`` has already replaced the
        consumer's ``Subscription`` and ended the previous assignment. For the callback the
        previous subscription is shown again with its assignment active once more (a fresh
        ``unassign_future``: aiokafka's fetcher asserts that the assignment it sees is active),
        then the new subscription comes back (unless the callback itself subscribed anew) and
        the previous assignment ends again, waking whatever waited on it."""
        state = self._subscription
        current = state.subscription
        previous = self._held_by
        held = self._held
        show_previous = (
            previous is not None
            and previous is not current
            and held is not None
            and previous.assignment is held
            and not held.active
        )
        if not show_previous:
            await self._listen(state.listener, "on_partitions_revoked", revoked, "revoked")
            return
        ended = asyncio.get_running_loop().create_future()
        held.unassign_future = ended
        state._subscription = previous
        try:
            await self._listen(state.listener, "on_partitions_revoked", revoked, "revoked")
        finally:
            if state._subscription is previous:
                state._subscription = current
            if not ended.done():
                ended.set_result(None)

    # -- patched coordinator methods ------------------------------------------------------
    async def on_join_prepare(self, previous_assignment: Any) -> None:
        """Before JoinGroup (once per rebalance): lost, or commit then revoke."""
        coordinator = self._coordinator
        coordinator._group_subscription = None
        lost = membership_lost(coordinator.generation, coordinator.member_id)
        owned = self.owned
        topics = set(self._subscription.topics)
        decision = decide_prepare(
            owned, {tp: tp.topic in topics for tp in owned}, self.protocol, lost
        )
        if decision.forget_join:
            self.forget_join()
        if lost:
            if decision.lost:
                await self._lose(decision.lost)
            else:
                self._subscription.begin_reassignment()
            return
        await self._commit_held()
        if self.cooperative:
            await self._follow_subscription()
            return
        self._subscription.begin_reassignment()
        revoked = set(decision.revoked)
        log.info("group %s: revoking %s", self.group_id, sorted(revoked))
        await self._revoke(revoked)
        self.owned = frozenset()

    async def do_rejoin_group(self, subscription: Any) -> bool:
        """One JoinGroup/SyncGroup round; ``True`` when an assignment was applied."""
        await self.prompt.stop()
        self._joining = True
        try:
            return await self._rejoin(subscription)
        finally:
            self._joining = False
            self._heartbeat_ok_at = time.monotonic()  # the broker answered (or we start over)

    async def _rejoin(self, subscription: Any) -> bool:
        coordinator = self._coordinator
        if membership_lost(coordinator.generation, coordinator.member_id):
            if self.owned:
                await self._lose(self.owned)
            else:
                self.forget_join()
        if self.cooperative:
            await self._follow_subscription()
        self.leader_refusal.pending = frozenset()  # decided again if this member leads
        # A metadata update in flight (the subscribe's) first: it says which topics are refused.
        await coordinator._client._maybe_wait_metadata()
        result = await self._join_and_sync(subscription)
        if not subscription.active:
            log.debug("group %s: subscription changed during the rebalance", self.group_id)
            return False
        if result is None:
            await asyncio.sleep(coordinator._retry_backoff_ms / 1000)
            return False
        protocol, assignment_bytes = result
        await coordinator._on_join_complete(
            coordinator.generation, coordinator.member_id, protocol, assignment_bytes
        )
        return True

    def group_protocols(self, topics: Iterable[str]) -> list[tuple[str, bytes]]:
        """JoinGroup protocols in preference order: ours as v3 bytes (owned partitions from
        the current assignment under COOPERATIVE), foreign ones as their ``metadata``; the
        topics are ``topics`` without those refused to this member (:mod:`.topic_authorization`)."""
        self.metrics.join_attempt()  # called once per JoinGroup round
        self.racks.forget()  # whoever leads this round remembers its own placement
        topic_set = self.topic_authorization.joinable(topics)
        owned = sorted((tp.topic, tp.partition) for tp in self.owned)
        protocols: list[tuple[str, bytes]] = []
        for assignor in self.assignors:
            bound = self._bound.get(str(assignor.name))
            if bound is not None:
                metadata = bound.assignor.join_metadata(
                    topic_set,
                    self.joined,
                    protocol=self.protocol,
                    owned=owned if self.cooperative else None,
                    default_rack=self.client_rack,
                )
                protocols.append((bound.name, metadata))
                continue
            metadata = assignor.metadata(topic_set)
            protocols.append(
                (str(assignor.name), metadata if isinstance(metadata, bytes) else metadata.encode())
            )
        return protocols

    async def _join_and_sync(self, subscription: Any) -> tuple[str, bytes] | None:
        """JoinGroup with every protocol at once (again once if the broker asks for a member
        id), then aiokafka's own leader/follower SyncGroup. ``None``: try again later.
        Commits are refused meanwhile (see :meth:`_commit_offsets`)."""
        self._in_rebalance = True
        result: tuple[str, bytes] | None = None
        try:
            result = await self._join_and_sync_once(subscription)
            return result
        finally:
            self._in_rebalance = False
            if result is None:  # failed (raised, or to be tried again): Java counts it
                self.metrics.join_failed()

    async def _join_and_sync_once(self, subscription: Any) -> tuple[str, bytes] | None:
        import aiokafka.errors as errors
        from aiokafka.consumer.group_coordinator import CoordinatorGroupRebalance
        from aiokafka.coordinator.protocol import ConsumerProtocol
        from aiokafka.protocol.group import JoinGroupRequest

        coordinator = self._coordinator
        rebalance = CoordinatorGroupRebalance(
            coordinator,
            coordinator.group_id,
            coordinator.coordinator_id,
            subscription,
            coordinator._assignors,
            coordinator._session_timeout_ms,
            coordinator._retry_backoff_ms,
        )
        protocols = self.group_protocols(subscription.topics)
        log.info("(Re-)joining group %s with %s", self.group_id, [p for p, _ in protocols])
        for attempt in (1, 2):
            request = JoinGroupRequest(
                coordinator.group_id,
                coordinator._session_timeout_ms,
                coordinator._rebalance_timeout_ms,
                coordinator.member_id,
                coordinator._group_instance_id,
                ConsumerProtocol.PROTOCOL_TYPE,
                protocols,
            )
            try:
                response = await coordinator._send_req(request)
            except errors.KafkaError:
                return None  # connection error: the coordinator lookup backs off
            if not subscription.active:
                return None
            if response.error_code == FENCED_INSTANCE_ID:
                return await self._fenced()
            error_type = errors.for_code(response.error_code)
            if error_type is errors.MemberIdRequired and attempt == 1:
                self.metrics.join_failed()  # Java's join future fails here too (KIP-394)
                coordinator.member_id = response.member_id
                continue
            break
        if error_type is errors.NoError:
            coordinator.member_id = response.member_id
            coordinator.generation = response.generation_id
            log.info(
                "Joined group %s (generation %s) with member_id %s, protocol %s, leader %s",
                self.group_id,
                response.generation_id,
                response.member_id,
                response.group_protocol,
                response.leader_id,
            )
            self.told.leader_id = str(response.leader_id)
            try:
                if response.leader_id == response.member_id:
                    data = await rebalance._on_join_leader(response)
                else:
                    data = await rebalance._on_join_follower()
            except _fenced_error_class():  # aiokafka 0.15+ raises it from its SyncGroup
                await self._fenced()
            return None if data is None else (str(response.group_protocol), bytes(data))
        if error_type is errors.GroupLoadInProgressError:
            await asyncio.sleep(coordinator._retry_backoff_ms / 1000)
        elif error_type in (errors.UnknownMemberIdError, errors.IllegalGenerationError):
            coordinator.reset_generation()
        elif error_type is errors.RebalanceInProgressError:
            pass
        elif error_type in (
            errors.GroupCoordinatorNotAvailableError,
            errors.NotCoordinatorForGroupError,
        ):
            coordinator.coordinator_dead()
        elif error_type in (
            errors.InconsistentGroupProtocolError,
            errors.InvalidSessionTimeoutError,
            errors.InvalidGroupIdError,
        ):
            offered = tuple(str(a.name) for a in self.assignors)
            line = refusal_line(
                self.group_id, str(error_type.message), classic=True, offered=offered
            )
            if line is not None:
                log.warning("%s", line)
            else:
                log.error("group %s: JoinGroup failed: %s", self.group_id, error_type())
            raise error_type()
        elif error_type is errors.GroupAuthorizationFailedError:
            raise error_type(self.group_id)
        else:
            raise errors.KafkaError(repr(error_type()))
        return None

    async def _fenced(self) -> NoReturn:
        """JoinGroup (or, from aiokafka 0.15, Heartbeat or SyncGroup) answered
        FENCED_INSTANCE_ID: another consumer holds this static member's seat. Whatever is
        still owned is lost (no commit); the member id is kept, so every retry is fenced again
        (after the retry backoff) instead of taking the seat back; the error reaches the user
        from ``getmany``/``getone``."""
        coordinator = self._coordinator
        if self.owned:
            await self._lose(self.owned)
        log.error(
            "group %s: fenced: another consumer joined with group_instance_id %s",
            self.group_id,
            coordinator._group_instance_id,
        )
        await asyncio.sleep(coordinator._retry_backoff_ms / 1000)
        raise fenced_instance_id_error(self.group_id, str(coordinator._group_instance_id))

    async def perform_assignment(self, response: Any) -> dict[str, bytes]:
        """Leader: every member's raw metadata read once by our codec, then our assignor."""
        bound = self._bound.get(str(response.group_protocol))
        if bound is None:
            result: dict[str, bytes] = await self._originals["_perform_assignment"](response)
            return result
        coordinator = self._coordinator
        members = []
        for member in response.members:
            if len(member) == 3:
                member_id, instance_id, metadata = member
            else:
                (member_id, metadata), instance_id = member, None
            members.append(MemberMetadata(str(member_id), metadata, instance_id or None))
        started = time.perf_counter()
        group = bound.read(members)
        decode_s = time.perf_counter() - started
        coordinator._group_subscription = set(group.topics)
        if not self._subscription.subscribed_pattern:
            coordinator._client.set_topics(coordinator._group_subscription)
        await coordinator._client._maybe_wait_metadata()
        cluster = coordinator._cluster
        counts = partition_counts(cluster, group.topics)
        plan = assign_from_cluster(
            self.metrics, self.racks, cluster, group, counts, decode_s=decode_s
        )
        coordinator._metadata_snapshot = coordinator._get_metadata_snapshot()
        log.debug("group %s: leader plan over %s", self.group_id, counts)
        own = (
            set(self._subscription.subscription.topics)
            if self._subscription.subscription
            else set()
        )
        refused = set(getattr(cluster, "unauthorized_topics", ()) or ()) & set(group.topics)
        self.leader_refusal.assigned(
            refused - own, counts, static=coordinator._group_instance_id is not None
        )
        return plan

    async def on_join_complete(
        self, generation: int, member_id: str, protocol: str, assignment_bytes: bytes
    ) -> None:
        """After SyncGroup: revoke what leaves (still assigned), apply, record, report."""
        coordinator = self._coordinator
        self.group_authorization.accepted()
        state = self._subscription
        bound = self._bound.get(str(protocol))
        if bound is None:
            await self._originals["_on_join_complete"](
                generation, member_id, protocol, assignment_bytes
            )
            self.owned = frozenset(state.assigned_partitions())
            self._held, self._held_by = state.subscription.assignment, state.subscription
            return
        from aiokafka.structs import TopicPartition

        assignment = decode_assignment(bytes(assignment_bytes))
        assigned = {TopicPartition(topic, partition) for topic, partition in assignment.partitions}
        if drop_unsubscribed(assigned, state.topics, self.group_id, log):
            coordinator.request_rejoin()
        decision = decide_complete(self.owned, assigned, self.protocol)
        self.metrics.join_succeeded(
            generation, added=len(decision.added), revoked=len(decision.revoked)
        )
        listener = state.listener
        if decision.revoked:
            self._stop_returning(decision.revoked)
            await self._commit_held()
            await self._listen(listener, "on_partitions_revoked", decision.revoked, "revoked")
        assign_keeping_positions(state, assigned, self._held if self.cooperative else None)
        self.owned = frozenset(assigned)
        self._held, self._held_by = state.subscription.assignment, state.subscription
        self._heartbeat_ok_at = time.monotonic()  # a completed SyncGroup proves the session
        self.joined = JoinState.after(assignment.partitions, generation)
        await coordinator._stop_commit_offsets_refresh_task()
        coordinator.start_commit_offsets_refresh_task(self._held)
        log_assigned(log, self.group_id, generation, assigned, decision)
        await self._listen(
            listener, "on_partitions_assigned", decision.assigned_callback, "assigned"
        )
        if self.leader_refusal.pending:
            self.told.cancel()
            await self.step_aside()
            return
        self.told.joined(coordinator, generation, state.topics, {tp.topic for tp in self.owned})
        if decision.rejoin or self.topic_authorization.stale():
            coordinator.request_rejoin()
        elif self.cooperative:
            self.prompt.joined()
