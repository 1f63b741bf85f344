"""Coordinator hooks for kafka-python 3.0.x.

3.0 has KIP-429 (protocol selection, COOPERATIVE, ``on_partitions_lost``) but breaks it in
three places, which these hooks fix on *one coordinator instance* (never the class):

1. **Revoke ordering.** Its cooperative ``_on_join_complete_async`` removes the revoked
   partitions from the assignment *before* calling ``on_partitions_revoked``, so the
   listener cannot commit their offsets (``consumer.position`` / ``commit`` on them fail).
   Here the callback runs while they are still assigned, then they leave.
2. **Lost-state claims.** After ``on_partitions_lost`` the assignor's memory still holds
   the lost partitions and generation, so the next JoinGroup claims them again. Here the
   hooks own the member's join state (the assignors hold none) and forget it whenever
   membership is lost.
3. **Discarded join results.** ``join_group_async`` keeps the in-flight JoinGroup/SyncGroup
   task across ``poll`` calls, but if that task *finishes* between two polls the next poll
   sees ``is_done`` and starts a new JoinGroup, throwing the finished assignment away; a
   consumer that works about a second between polls never completes a join. Here a task
   that finished successfully is completed instead of replaced.

Also: ``on_partitions_assigned`` is called with the added partitions even when none were
added (Java does; 3.0 skips it), the generation reaches the member's join state, and the leader
decodes every member's raw metadata with our codec (v0-v3), and after a cooperative SyncGroup
the member heartbeats promptly for a short window (:mod:`.prompt`), and a stale preferred read
replica (KIP-392) asks for fresh metadata instead of looping (:mod:`.read_replica`).
"""

from __future__ import annotations

import logging
import time
from typing import Any

from ....assignor.decisions import lost_method_name, membership_lost
from ....assignor.prompt_heartbeats import DEFAULT_PROMPT_HEARTBEATS, PromptHeartbeats
from ....assignor.rebalance import RebalanceProtocol
from .authorization import GroupAuthorization, TopicAuthorization, is_group_refusal
from .common import (
    HooksBase,
    instantiate_assignor,
    log_commit_failure,
    log_partitions,
    pre_rebalance_commit_timeout_ms,
)
from .coordinator_lookup import CoordinatorLookup
from .keep_fetching import KeepFetching
from .leader_refusal import LeaderRefusal
from .listener import rebalance_listener
from .prompt import PromptSchedule
from .read_replica import ReadReplicaRefresh, needs_refresh_patch

__all__ = ["V3Hooks"]

log = logging.getLogger("kafka_sticky_plugin.hooks")


class V3Hooks(HooksBase):
    """The hooks installed on one kafka-python 3.0.x consumer (see the module docstring).

    Listener exceptions follow 3.0's contract: bookkeeping completes, then the last
    exception is re-raised as ``kafka.errors.KafkaError`` from ``poll``.
    """

    family = "v3"

    def __init__(
        self, consumer: Any, prompt: PromptHeartbeats | None = DEFAULT_PROMPT_HEARTBEATS
    ) -> None:
        configured = consumer._coordinator._assignors.values()
        super().__init__(consumer, [instantiate_assignor(a) for a in configured])
        self.prompt = PromptSchedule(self._coordinator, prompt)
        #: the closest-replica fetch fix on this consumer's fetcher (:mod:`.read_replica`)
        self.read_replica: ReadReplicaRefresh | None = None

    def install(self) -> None:
        """Patch the coordinator *instance* (idempotent)."""
        if self.installed:
            return
        from kafka.coordinator.assignors.abstract import RebalanceProtocol as KafkaProtocol

        coordinator = self._coordinator
        coordinator._rebalance_protocol = KafkaProtocol(int(self.protocol))
        coordinator._assignors = {assignor.name: assignor for assignor in self.assignors}
        self._patch(coordinator, "group_protocols", self.group_protocols)
        self._patch(coordinator, "reset_generation", self.reset_generation)
        self._patch(coordinator, "need_rejoin", self.need_rejoin)
        self._patch(coordinator, "_perform_assignment", self.perform_assignment)
        self._patch(coordinator, "_on_join_prepare_async", self.on_join_prepare_async)
        self._patch(coordinator, "_on_join_complete_async", self.on_join_complete_async)
        self._patch(coordinator, "join_group_async", self.join_group_async)
        # A broker outage must not raise out of poll(), nor storm FindCoordinator.
        lookup = CoordinatorLookup(coordinator, coordinator.lookup_coordinator)
        self.coordinator_lookup = lookup
        self._patch(coordinator, "lookup_coordinator", lookup.lookup_coordinator)
        ensure = self.ensure_coordinator_ready_async
        self._patch(coordinator, "ensure_coordinator_ready_async", ensure)
        # Authorization refusals: one line each, spaced attempts (see .authorization).
        self.group_authorization = GroupAuthorization(
            self._consumer, self.group_id, self._drop_membership
        )
        self._patch(coordinator, "_send_heartbeat_request", self.send_heartbeat_request)
        # A leader refused another member's topic steps aside; the member is told.
        self.leader_refusal = LeaderRefusal(self._consumer, self.group_id)
        self.topic_authorization = TopicAuthorization(
            self._consumer, self.group_id, self.leader_refusal.on_refused
        )
        if hasattr(coordinator, "_process_join_group_response"):  # the leader's member id
            self._patch(coordinator, "_process_join_group_response", self.process_join_response)
        self.topic_authorization.install()
        self.watch_racks()  # KIP-881: a leader rebalances once when replica racks change
        self._patch(coordinator, "_do_join_and_sync_async", self.do_join_and_sync_async)
        self._patch(coordinator, "_on_close_prepare_async", self.on_close_prepare_async)
        self.prompt.install(self._patch)  # the window only opens in cooperative groups
        fetcher = getattr(self._consumer, "_fetcher", None)
        if fetcher is not None and needs_refresh_patch(fetcher):
            self.read_replica = ReadReplicaRefresh(fetcher)
            self.read_replica.install()
        # Cooperative: the owned partitions are fetched while a join is in flight.
        self.keep_fetching = KeepFetching(self._consumer, self.protocol)
        self.keep_fetching.install(self._patch)

    def uninstall(self) -> None:
        """Every instance patch removed, the fetcher's too."""
        if self.read_replica is not None:
            self.read_replica.uninstall()
            self.read_replica = None
        super().uninstall()

    # -- helpers --------------------------------------------------------------------------
    def _drop_membership(self) -> None:
        """The group refused this member: give the membership up, so the next ``poll()``
        hands its partitions to ``on_partitions_lost`` before anything else is tried."""
        coordinator = self._coordinator
        if not membership_lost(
            coordinator._generation.generation_id, coordinator._generation.member_id
        ):
            coordinator.reset_generation()
        coordinator.request_rejoin()

    async def _wait_if_refused(self, timeout_ms: int | None) -> bool:
        """While the group refuses this member (and it holds nothing): sleep through this
        ``poll()``'s share of the wait and report "not ready" (no request is sent)."""
        wait_s = self.group_authorization.wait_s()
        if wait_s <= 0 or self._subscription.assigned_partitions():
            return False
        if timeout_ms is not None:
            wait_s = min(wait_s, timeout_ms / 1000)
        await self._coordinator._manager._net.sleep(wait_s)
        return True

    async def _call(self, name: str, partitions: Any) -> BaseException | None:
        """Invoke listener method ``name`` (sync or async); return what it raised. Timed for
        the metrics (as Java times its listener, a missing one included)."""
        with self.metrics.timed_callback(name.removeprefix("on_partitions_"), len(partitions)):
            return await self._call_listener(name, partitions)

    async def _call_listener(self, name: str, partitions: Any) -> BaseException | None:
        if rebalance_listener(self._subscription) is None:
            return None
        try:
            await self._coordinator._invoke_rebalance_listener_async(name, set(partitions))
        except Exception as exc:
            # One line, no traceback: the exception comes out of poll() (chained to the
            # KafkaError), which prints its traceback once.
            log.error(
                "rebalance listener failed in %s for group %s: %r (raised again from poll())",
                name,
                self.group_id,
                exc,
            )
            return exc
        return None

    @staticmethod
    def _raise_listener_error(exc: BaseException | None) -> None:
        if exc is not None:
            import kafka.errors as kafka_errors

            raise kafka_errors.KafkaError("User rebalance callback throws an error") from exc

    # -- patched methods ------------------------------------------------------------------
    def perform_assignment(self, leader_id: str, protocol_name: str, members: Any) -> Any:
        """Leader: our codec on every member's raw metadata, then our assignor."""
        bound = self.bound(protocol_name)
        if bound is None:
            original = self.original(self._coordinator, "_perform_assignment")
            return original(leader_id, protocol_name, members)
        return self.leader_assign(bound, members)

    async def on_join_prepare_async(
        self, generation: int, member_id: str, timeout_ms: int | None = None
    ) -> None:
        """Before JoinGroup: lost (no commit, join state forgotten), or commit then revoke."""
        coordinator = self._coordinator
        sub = self._subscription
        self.prompt.rejoining()
        reset = membership_lost(generation, member_id)
        decision = self.prepare_decision(reset)
        error: BaseException | None = None
        if decision.forget_join:
            self.forget_join()
        if decision.lost:
            log_partitions(self.group_id, "membership lost; lost", decision.lost)
            sub.mark_pending_revocation(decision.lost)
            listener = rebalance_listener(sub)
            if listener is not None:
                error = await self._call(lost_method_name(listener), decision.lost)
            sub.assign_from_subscribed([])
        if decision.commit and coordinator.config["enable_auto_commit"]:
            await self._commit_before_rejoin(timeout_ms)
        if self.protocol is RebalanceProtocol.EAGER and not reset:
            sub.mark_pending_revocation(decision.revoked)
            error = await self._call("on_partitions_revoked", decision.revoked) or error
            sub.assign_from_subscribed([])
        elif decision.revoked:
            sub.mark_pending_revocation(decision.revoked)
            error = await self._call("on_partitions_revoked", decision.revoked) or error
            sub.assign_from_subscribed(sorted(decision.kept))
        coordinator._is_leader = False
        sub.reset_group_subscription()
        self._raise_listener_error(error)

    async def _commit_before_rejoin(self, poll_timeout_ms: int | None) -> None:
        """Auto-commit the consumed positions before the JoinGroup, bounded by
        :func:`.common.pre_rebalance_commit_timeout_ms` (not by the ``poll()`` that started
        the rebalance); a failure is one WARNING line (:func:`.common.log_commit_failure`)."""
        offsets = self._subscription.all_consumed_offsets()
        timeout_ms = pre_rebalance_commit_timeout_ms(self._consumer.config, poll_timeout_ms)
        try:
            await self._coordinator._commit_offsets_sync_async(offsets, timeout_ms=timeout_ms)
        except Exception as exc:
            log_commit_failure(self.group_id, len(offsets), exc, timeout_ms)

    async def _commit_revoked(self, revoked: Any) -> None:
        """Auto-commit the consumed positions of the partitions this round revokes, while
        they are still assigned: a cooperative member returned records of them while its join
        was in flight (:mod:`.keep_fetching`), after the pre-join commit. Bounded and logged
        as that commit is; nothing without auto-commit (the listener commits then)."""
        offsets = self.keep_fetching.revoked_offsets(revoked)
        if not offsets:
            return
        timeout_ms = pre_rebalance_commit_timeout_ms(self._consumer.config, None)
        try:
            await self._coordinator._commit_offsets_sync_async(offsets, timeout_ms=timeout_ms)
        except Exception as exc:
            log_commit_failure(self.group_id, len(offsets), exc, timeout_ms)

    async def on_join_complete_async(
        self, generation: int, member_id: str, protocol: str, assignment_bytes: bytes
    ) -> None:
        """After SyncGroup: revoke (still assigned), apply, record, then report added."""
        bound = self.bound(protocol)
        coordinator = self._coordinator
        if bound is None:
            original = self.original(coordinator, "_on_join_complete_async")
            await original(generation, member_id, protocol, assignment_bytes)
            return
        sub = self._subscription
        assignment, assigned, decision = self.received_assignment(assignment_bytes)
        self.metrics.join_succeeded(
            generation, added=len(decision.added), revoked=len(decision.revoked)
        )
        error: BaseException | None = None
        if decision.revoked:
            await self._commit_revoked(decision.revoked)
            sub.mark_pending_revocation(decision.revoked)
            error = await self._call("on_partitions_revoked", decision.revoked)
        sub.assign_from_subscribed(sorted(assigned))
        self.record_join(assignment, generation)
        coordinator.next_auto_commit_deadline = time.monotonic() + coordinator.auto_commit_interval
        self.log_assigned(generation, assigned, decision)
        error = await self._call("on_partitions_assigned", decision.assigned_callback) or error
        if decision.rejoin:
            coordinator.request_rejoin()
        elif self.protocol is RebalanceProtocol.COOPERATIVE:
            self.prompt.joined()
        self.leader_refusal.joined(generation)
        self._raise_listener_error(error)

    async def do_join_and_sync_async(self) -> Any:
        """One JoinGroup/SyncGroup attempt (the client's); a failed one is counted as a failed
        rebalance, as Java counts it."""
        try:
            return await self.original(self._coordinator, "_do_join_and_sync_async")()
        except Exception:
            self.metrics.join_failed()
            raise

    async def on_close_prepare_async(self, *args: Any, **kwargs: Any) -> None:
        """The client's revoke-on-close (lost when the membership is gone), timed for the
        metrics as Java times its ``onLeavePrepare`` callback."""
        original = self.original(self._coordinator, "_on_close_prepare_async")
        sub = self._subscription
        owned = sub.assigned_partitions() if sub.partitions_auto_assigned() else ()
        if not owned:
            await original(*args, **kwargs)
            return
        kind = "lost" if self._coordinator._generation.is_lost() else "revoked"
        with self.metrics.timed_callback(kind, len(owned)):
            await original(*args, **kwargs)

    async def ensure_coordinator_ready_async(self, timeout_ms: int | None = None) -> bool:
        """The gated lookup (:class:`.coordinator_lookup.CoordinatorLookup`); a refused
        FindCoordinator is reported (:class:`.authorization.GroupAuthorization`). The first
        call also checks, off this thread, that a bootstrap address answers."""
        self.bootstrap_check.start()
        if await self._wait_if_refused(timeout_ms):
            return False
        try:
            ready = await self.coordinator_lookup.ensure_coordinator_ready_async(timeout_ms)
        except Exception as exc:
            if is_group_refusal(exc):
                self.group_authorization.refused("FindCoordinator")
            raise
        if ready:
            await self.leader_refusal.describe_if_due()
        return ready

    def process_join_response(self, response: Any, send_time: float) -> Any:
        """The client's JoinGroup response handling; the leader's member id is kept."""
        processed = self.original(self._coordinator, "_process_join_group_response")(
            response, send_time
        )
        self.leader_refusal.on_join_response(str(response.leader))
        return processed

    async def _step_aside(self, timeout_ms: int | None) -> None:
        """The leader refused another member's topic leaves the group once
        (:mod:`.leader_refusal`): the consumed positions are committed, every owned partition
        goes to ``on_partitions_revoked`` (the member still owns them), the join state is
        forgotten, then LeaveGroup; the client's join loop then rejoins as a new member,
        and the coordinator makes another member the leader."""
        coordinator = self._coordinator
        sub = self._subscription
        owned = set(sub.assigned_partitions())
        if coordinator.config["enable_auto_commit"]:
            await self._commit_before_rejoin(timeout_ms)
        error: BaseException | None = None
        if owned:
            log_partitions(self.group_id, "stepping aside as leader; revoked", owned)
            sub.mark_pending_revocation(owned)
            error = await self._call("on_partitions_revoked", owned)
            sub.assign_from_subscribed([])
        self.forget_join()
        coordinator._is_leader = False
        sub.reset_group_subscription()
        await coordinator.maybe_leave_group_async(
            reason="the leader may not describe topics other members subscribe to"
        )
        self.leader_refusal.stepped_aside()
        self._raise_listener_error(error)

    async def send_heartbeat_request(self, *args: Any, **kwargs: Any) -> Any:
        """The client's heartbeat; a refused one (the group's ACL was revoked while this
        member ran) drops the membership at once, which also stops the heartbeat loop (the
        client would retry every ``retry_backoff_ms``, keep its partitions, and fetch on
        while the broker hands them to others)."""
        try:
            return await self.original(self._coordinator, "_send_heartbeat_request")(
                *args, **kwargs
            )
        except Exception as exc:
            if is_group_refusal(exc):
                self.group_authorization.refused("Heartbeat")
            raise

    async def join_group_async(self, timeout_ms: int | None = None) -> bool:
        """Complete a JoinGroup/SyncGroup task that finished between polls, else delegate.
        A refused JoinGroup/SyncGroup is reported and the next one waits."""
        try:
            joined = await self._join_group_async(timeout_ms)
        except Exception as exc:
            if is_group_refusal(exc):
                self.group_authorization.refused("JoinGroup/SyncGroup")
            raise
        if joined:
            self.group_authorization.accepted()
        return joined

    async def _join_group_async(self, timeout_ms: int | None) -> bool:
        if await self._wait_if_refused(timeout_ms):
            return False
        coordinator = self._coordinator
        task = coordinator._join_task
        if self.leader_refusal.pending and task is None and not coordinator.rejoining:
            await self._step_aside(timeout_ms)
        if task is not None and task.is_done and task.succeeded() and coordinator.rejoining:
            from kafka.coordinator.base import MemberState

            coordinator._join_task = None
            with coordinator._lock:
                coordinator.rejoining = False
                coordinator.rejoin_needed = False
                coordinator.state = MemberState.STABLE
                coordinator._enable_heartbeat()
            generation = coordinator._generation
            log.info(
                "group %s: completing the join that finished between polls (generation %s)",
                self.group_id,
                generation.generation_id,
            )
            await coordinator._on_join_complete_async(
                generation.generation_id, generation.member_id, generation.protocol, task.value
            )
            return True
        original = self.original(coordinator, "join_group_async")
        import kafka.errors as kafka_errors

        try:
            return bool(await original(timeout_ms=timeout_ms))
        except kafka_errors.InconsistentGroupProtocolError as exc:
            self.say_refusal(exc)
            raise
