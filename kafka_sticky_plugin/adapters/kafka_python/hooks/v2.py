"""Coordinator hooks for the kafka-python 2.x family (2.0.2, 2.2.x, 2.3.x, kafka-python-ng 2.2.x).

These coordinators know only the EAGER protocol and subscription v0. The hooks replace, on
*one coordinator instance* (never its class: two consumers in a process do not affect each
other), the methods where a rebalance is decided:

- ``group_protocols``: our assignors' JoinGroup metadata (any consumer-protocol version,
  owned partitions = the current assignment under COOPERATIVE);
- ``_on_join_prepare``: lost membership (no generation or member id) calls
  ``on_partitions_lost`` (``on_partitions_revoked`` if the listener lacks it), skips the
  auto-commit and forgets the member's join state; otherwise commit, then revoke
  everything (EAGER) or only the partitions of dropped topics (COOPERATIVE, KIP-70);
- ``_perform_assignment``: the leader decodes every member's raw metadata with our codec;
- ``_on_join_complete``: the assignment and generation become the member's join state; under
  COOPERATIVE revoke-before-remove, keep fetch state of retained partitions, always call
  ``on_partitions_assigned`` with the added ones, rejoin when anything was revoked;

- ``close``: after the client's auto-commit and before its LeaveGroup, the listener gets
  ``on_partitions_revoked`` for everything assigned (``on_partitions_lost`` when the
  membership is already gone), as Java's ``onLeavePrepare`` and kafka-python 3.0 do; 2.x
  left without a callback, so a commit-on-revoke listener never committed what it had
  consumed since its last commit, and the next owner read it again;
- ``_send_heartbeat_request`` (called from the client's heartbeat thread): a refused
  heartbeat (GROUP_AUTHORIZATION_FAILED: the group's ACL was revoked while the member ran)
  drops the membership, so the next ``poll()`` gives the partitions to
  ``on_partitions_lost`` before the broker can hand them to anyone else, as on 3.0
  (:mod:`.authorization`, 3); so does a refused JoinGroup/SyncGroup;

and, on the subscription state instance, ``change_subscription`` so that a subscription
change no longer drops assigned partitions at once (2.0.2 and kafka-python-ng did; KIP-70
revokes them at the next rebalance, with the callback).

Foreign assignors (the client's own range/roundrobin) keep the client's code paths.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from typing import Any

from ....assignor.decisions import lost_method_name, membership_lost
from ....assignor.rebalance import RebalanceProtocol
from .authorization import GroupAuthorization, TopicAuthorization, is_group_refusal
from .common import (
    HooksBase,
    instantiate_assignor,
    log_commit_failure,
    log_partitions,
    pre_rebalance_commit_timeout_ms,
)
from .keep_fetching import KeepFetching
from .leader_refusal import LeaderRefusal
from .listener import call_sync, rebalance_listener

__all__ = ["V2Hooks"]

log = logging.getLogger("kafka_sticky_plugin.hooks")

_MEMBER_ID_REQUIRED = 79  # Kafka's MEMBER_ID_REQUIRED error code (KIP-394)
_INCONSISTENT_GROUP_PROTOCOL = 23  # Kafka's INCONSISTENT_GROUP_PROTOCOL error code


class V2Hooks(HooksBase):
    """The hooks installed on one kafka-python 2.x consumer (see the module docstring).

    Invariant: the coordinator's ``config['assignors']`` is this object's ``assignors``
    list (our classes instantiated once per consumer).
    """

    family = "v2"

    def __init__(self, consumer: Any) -> None:
        configured = consumer._coordinator.config["assignors"]
        super().__init__(consumer, [instantiate_assignor(a) for a in configured])

    def install(self) -> None:
        """Patch the coordinator and subscription *instances* (idempotent)."""
        if self.installed:
            return
        self._coordinator.config["assignors"] = list(self.assignors)
        self._patch(self._coordinator, "group_protocols", self.group_protocols)
        self._patch(self._coordinator, "reset_generation", self.reset_generation)
        self._patch(self._coordinator, "need_rejoin", self.need_rejoin)
        self._patch(self._coordinator, "_on_join_prepare", self.on_join_prepare)
        self._patch(self._coordinator, "_on_join_complete", self.on_join_complete)
        self._patch(self._coordinator, "_perform_assignment", self.perform_assignment)
        self._patch(self._coordinator, "close", self.close)
        self._patch(self._subscription, "change_subscription", self.change_subscription)
        self._patch(self._coordinator, "_send_join_group_request", self.send_join_group_request)
        self._patch(
            self._coordinator, "_handle_join_group_response", self.handle_join_group_response
        )
        # Refused topics: reported once, never raised out of poll() (see .authorization); a
        # leader refused another member's topic steps aside, the member is told.
        self.leader_refusal = LeaderRefusal(self._consumer, self.group_id)
        self.topic_authorization = TopicAuthorization(
            self._consumer, self.group_id, self.leader_refusal.on_refused
        )
        self.topic_authorization.install()
        self.watch_racks()  # KIP-881: a leader rebalances once when replica racks change
        # A refused group: one line, spaced attempts, membership dropped (see .authorization).
        self.group_authorization = GroupAuthorization(
            self._consumer, self.group_id, self._drop_membership
        )
        self._patch(self._coordinator, "ensure_coordinator_ready", self.ensure_coordinator_ready)
        self._patch(self._coordinator, "_send_heartbeat_request", self.send_heartbeat_request)
        # Cooperative on 2.2/2.3: the owned partitions are fetched while a join is in flight.
        self.keep_fetching = KeepFetching(self._consumer, self.protocol)
        self.keep_fetching.install(self._patch)

    # -- helpers --------------------------------------------------------------------------
    def _drop_membership(self) -> None:
        """The group refused this member: give the membership up, so the next ``poll()``
        hands its partitions to ``on_partitions_lost`` (in ``_on_join_prepare``) before it
        fetches again. Under the coordinator's lock: on 2.x a refused heartbeat arrives in
        the heartbeat thread (or in whichever thread's network poll reads the answer); the
        reset also makes that thread stop heartbeating (the member is no longer STABLE)."""
        coordinator = self._coordinator
        with coordinator._lock:
            generation = coordinator._generation
            if not membership_lost(generation.generation_id, generation.member_id):
                coordinator.reset_generation()
            coordinator.request_rejoin()

    def _listener(self) -> Any | None:
        return rebalance_listener(self._subscription)

    def _call(self, listener: Any | None, name: str, partitions: Any, kind: str) -> None:
        """Call ``listener.name(partitions)`` if there is a listener; timed for the metrics as
        ``on_partitions_<kind>`` (Java times its no-op listener too)."""
        with self.metrics.timed_callback(kind, len(partitions)):
            if listener is not None:
                call_sync(listener, name, partitions, self.group_id)

    def _set_assignment_keeping_state(self, partitions: Iterable[Any]) -> None:
        """Make ``partitions`` the assignment; kept partitions keep their fetch state."""
        from kafka.consumer.subscription_state import TopicPartitionState

        wanted = set(partitions)
        assignment = self._subscription.assignment
        for tp in list(assignment):
            if tp not in wanted:
                del assignment[tp]
        for tp in sorted(wanted - set(assignment)):
            assignment[tp] = TopicPartitionState()
        if hasattr(self._subscription, "needs_fetch_committed_offsets"):
            self._subscription.needs_fetch_committed_offsets = True

    def _auto_commit_sync(self, poll_timeout_ms: int | None) -> None:
        """Auto-commit the consumed positions before the JoinGroup. On 2.2/2.3, whose commit
        takes a deadline, it is :func:`.common.pre_rebalance_commit_timeout_ms` (the client
        passes only what is left of the ``poll()``); 2.0.2 and kafka-python-ng commit without
        one, as before. A failure is one WARNING line (:func:`.common.log_commit_failure`)
        instead of the client's ``log.exception`` traceback."""
        import inspect

        coordinator = self._coordinator
        if not coordinator.config["enable_auto_commit"]:
            return
        offsets = self._subscription.all_consumed_offsets()
        timeout_ms: int | None = None
        try:
            if "timeout_ms" in inspect.signature(coordinator.commit_offsets_sync).parameters:
                timeout_ms = pre_rebalance_commit_timeout_ms(self._consumer.config, poll_timeout_ms)
                coordinator.commit_offsets_sync(offsets, timeout_ms=timeout_ms)
            else:
                coordinator.commit_offsets_sync(offsets)
        except Exception as exc:
            log_commit_failure(self.group_id, len(offsets), exc, timeout_ms)

    def _commit_revoked(self, revoked: Any) -> None:
        """Auto-commit the consumed positions of the partitions this round revokes, while
        they are still assigned (records of them were returned during the join:
        :mod:`.keep_fetching`); bounded and logged as the pre-join commit is."""
        offsets = self.keep_fetching.revoked_offsets(revoked)
        if not offsets:
            return
        timeout_ms = pre_rebalance_commit_timeout_ms(self._consumer.config, None)
        try:
            self._coordinator.commit_offsets_sync(offsets, timeout_ms=timeout_ms)
        except Exception as exc:
            log_commit_failure(self.group_id, len(offsets), exc, timeout_ms)

    def _step_aside(self, timeout_ms: int | None) -> None:
        """The leader refused another member's topic leaves the group once
        (:mod:`.leader_refusal`), in place of the pre-join step: commit, every owned partition
        to ``on_partitions_revoked`` (still assigned), join state forgotten, LeaveGroup (which
        resets the generation); the client's join loop then joins as a new member."""
        owned = set(self._subscription.assigned_partitions())
        self._auto_commit_sync(timeout_ms)
        if owned:
            log_partitions(self.group_id, "stepping aside as leader; revoked", owned)
            self._call(self._listener(), "on_partitions_revoked", owned, "revoked")
            self._set_assignment_keeping_state(())
        self.forget_join()
        self._coordinator._is_leader = False
        self._subscription.reset_group_subscription()
        self._coordinator.maybe_leave_group()  # 2.0.2's takes no timeout
        self.leader_refusal.stepped_aside()

    # -- patched methods ------------------------------------------------------------------
    def on_join_prepare(
        self, generation: int, member_id: str, timeout_ms: int | None = None
    ) -> None:
        """Before JoinGroup: lost, or commit then revoke (all, or dropped topics only)."""
        sub = self._subscription
        reset = membership_lost(generation, member_id)
        if self.leader_refusal.pending and not reset:
            self._step_aside(timeout_ms)
            return
        decision = self.prepare_decision(reset)
        listener = self._listener()
        if decision.lost:
            log_partitions(self.group_id, "membership lost; lost", decision.lost)
            self._call(listener, lost_method_name(listener), decision.lost, "lost")
        if decision.forget_join:
            self.forget_join()
            self._set_assignment_keeping_state(())
        if decision.commit:
            self._auto_commit_sync(timeout_ms)
        if self.protocol is RebalanceProtocol.EAGER and not reset:
            log_partitions(self.group_id, "revoking", decision.revoked)
            self._call(listener, "on_partitions_revoked", decision.revoked, "revoked")
            self._set_assignment_keeping_state(())
        elif decision.revoked:
            log_partitions(self.group_id, "revoking unsubscribed", decision.revoked)
            self._call(listener, "on_partitions_revoked", decision.revoked, "revoked")
            self._set_assignment_keeping_state(decision.kept)
        self._coordinator._is_leader = False
        sub.reset_group_subscription()

    def close(self, autocommit: bool = True, **kwargs: Any) -> None:
        """The client's close with Java's ``onLeavePrepare`` between its auto-commit and its
        LeaveGroup (see the module docstring). Called by ``KafkaConsumer.close`` in the thread
        that closes, with the partitions still assigned during the callback; a listener that
        raises is one ERROR line and the close goes on. ``kwargs``: 2.2+'s ``timeout_ms``."""
        coordinator = self._coordinator
        original = self.original(coordinator, "close")
        try:
            if autocommit and coordinator.config["enable_auto_commit"]:
                coordinator._maybe_auto_commit_offsets_sync(**kwargs)
            self._revoke_on_close()
        finally:
            original(autocommit=False, **kwargs)

    def _revoke_on_close(self) -> None:
        sub = self._subscription
        if not sub.partitions_auto_assigned():
            return
        held = set(sub.assigned_partitions())
        if not held:
            return
        generation = self._coordinator._generation
        listener = self._listener()
        if membership_lost(generation.generation_id, generation.member_id):
            log_partitions(self.group_id, "closing, membership lost; lost", held)
            self._call(listener, lost_method_name(listener), held, "lost")
        else:
            log_partitions(self.group_id, "closing; revoking", held)
            self._call(listener, "on_partitions_revoked", held, "revoked")
        self._set_assignment_keeping_state(())

    def perform_assignment(self, leader_id: str, protocol: str, members: Any) -> dict[str, Any]:
        """Leader: decode every member with our codec and run our assignor's leader path."""
        bound = self.bound(protocol)
        if bound is None:
            original = self.original(self._coordinator, "_perform_assignment")
            return dict(original(leader_id, protocol, members))
        return dict(self.leader_assign(bound, members))

    def on_join_complete(
        self, generation: int, member_id: str, protocol: str, assignment_bytes: bytes
    ) -> None:
        """After SyncGroup: apply the assignment (see the module docstring)."""
        bound = self.bound(protocol)
        if bound is None:
            original = self.original(self._coordinator, "_on_join_complete")
            original(generation, member_id, protocol, assignment_bytes)
            return
        coordinator = self._coordinator
        sub = self._subscription
        assignment, assigned, decision = self.received_assignment(assignment_bytes)
        self.metrics.join_succeeded(
            generation, added=len(decision.added), revoked=len(decision.revoked)
        )
        listener = self._listener()
        if self.protocol is RebalanceProtocol.COOPERATIVE:
            if decision.revoked:
                self._commit_revoked(decision.revoked)
                self._call(listener, "on_partitions_revoked", decision.revoked, "revoked")
            self._set_assignment_keeping_state(assigned)
        else:
            sub.assign_from_subscribed(sorted(assigned))
        self.record_join(assignment, generation)
        coordinator.next_auto_commit_deadline = time.time() + coordinator.auto_commit_interval
        self.log_assigned(generation, assigned, decision)
        self._call(listener, "on_partitions_assigned", decision.assigned_callback, "assigned")
        self.group_authorization.accepted()
        if decision.rejoin:
            coordinator.request_rejoin()
        self.leader_refusal.joined(generation)

    def send_join_group_request(self) -> Any:
        """The client's JoinGroup+SyncGroup future; its failure counts one failed rebalance,
        as Java counts a failed join future; a refused one is reported
        (:class:`.authorization.GroupAuthorization`)."""
        future = self.original(self._coordinator, "_send_join_group_request")()
        future.add_errback(self._join_failed)
        return future

    def _join_failed(self, error: Any) -> None:
        self.metrics.join_failed()
        if isinstance(error, BaseException) and is_group_refusal(error):
            self.group_authorization.refused("JoinGroup/SyncGroup")

    def send_heartbeat_request(self) -> Any:
        """The client's heartbeat future; a refused one (the group's ACL was revoked while
        this member ran) drops the membership at once, as on 3.0. The client alone only logs
        it and retries every ``retry_backoff_ms``: the member kept its partitions and fetched
        on while the broker, after the session timeout, gave them to others (two owners)."""
        future = self.original(self._coordinator, "_send_heartbeat_request")()
        future.add_errback(self._heartbeat_failed)
        return future

    def _heartbeat_failed(self, error: Any) -> None:
        if isinstance(error, BaseException) and is_group_refusal(error):
            with self._coordinator._lock:
                self.group_authorization.refused("Heartbeat")

    def ensure_coordinator_ready(self, *args: Any, **kwargs: Any) -> Any:
        """The client's lookup, but while the group refuses this member (and it holds
        nothing) no request is sent: this ``poll()``'s share of the wait is slept and "not
        ready" returned (2.0.2 and kafka-python-ng, whose lookup takes no timeout and whose
        answer is not read: at most 1 s is slept, then the lookup runs). A refused lookup is
        reported. The client alone sent one per ``poll()`` (556 in 10 s, 2.3 measured). The
        first call also checks, off this thread, that a bootstrap address answers."""
        self.bootstrap_check.start()
        original = self.original(self._coordinator, "ensure_coordinator_ready")
        timeout_ms = kwargs.get("timeout_ms", args[0] if args else None)
        timed = "timeout_ms" in kwargs or bool(args)
        wait_s = self.group_authorization.wait_s()
        if wait_s > 0 and not self._subscription.assigned_partitions():
            limit = timeout_ms / 1000 if timeout_ms is not None else (None if timed else 1.0)
            time.sleep(wait_s if limit is None else min(wait_s, limit))
            if timed and self.group_authorization.wait_s() > 0:
                return False
        try:
            ready = original(*args, **kwargs)
        except Exception as exc:
            if is_group_refusal(exc):
                self.group_authorization.refused("FindCoordinator")
            raise
        if not self._coordinator.coordinator_unknown():  # 2.0.2 answers None
            self.leader_refusal.describe_if_due_sync()
        return ready

    def handle_join_group_response(self, future: Any, send_time: float, response: Any) -> None:
        """Accept MEMBER_ID_REQUIRED (KIP-394) on any JoinGroup version, then delegate.

        Apache Kafka sends error 79 only to JoinGroup v4+, but some brokers (the embedded
        Tansu among them) send it to v0-v3 too; 2.0.2 and kafka-python-ng know no code 79 and
        give up with ``UnknownError``. Here the member id from the response is kept and the
        join retried at once, exactly what 2.2+ do. A broker that never sends it is unaffected.

        INCONSISTENT_GROUP_PROTOCOL (a KIP-848 consumer group whose migration policy refuses
        classic members, or classic members sharing no assignor name with this one) gets the
        same one WARNING line saying what to change as on 3.0 (:meth:`HooksBase.say_refusal`);
        the client then fails the join as before.
        """
        if getattr(response, "error_code", 0) == _INCONSISTENT_GROUP_PROTOCOL:
            import kafka.errors as kafka_errors

            self.say_refusal(kafka_errors.InconsistentGroupProtocolError())
        if getattr(response, "error_code", 0) == 0:
            self.leader_refusal.on_join_response(str(response.leader_id))
        if getattr(response, "error_code", 0) == _MEMBER_ID_REQUIRED:
            import kafka.errors as kafka_errors
            from kafka.coordinator.base import Generation

            coordinator = self._coordinator
            with coordinator._lock:
                coordinator._generation = Generation(-1, str(response.member_id), None)
                coordinator.rejoin_needed = True
            log.debug(
                "group %s: member id %s required; rejoining", self.group_id, response.member_id
            )
            future.failure(kafka_errors.UnknownMemberIdError(str(response.member_id)))
            return
        self.original(self._coordinator, "_handle_join_group_response")(future, send_time, response)

    def change_subscription(self, topics: Any) -> None:
        """KIP-70: change the subscription but keep the assignment until the next rebalance."""
        sub = self._subscription
        before = dict(sub.assignment)
        self.original(sub, "change_subscription")(topics)
        for tp, state in before.items():
            if tp not in sub.assignment:
                sub.assignment[tp] = state
