"""What the hooks of every client family share: assignor binding, protocol selection, the
JoinGroup metadata, the leader path and fetch-state-preserving assignment updates.

A :class:`HooksBase` belongs to exactly one consumer; all its state is per instance. The
client-family subclasses (:mod:`.v2`, :mod:`.v3`) add the methods whose shape differs
(sync vs async coordinator) and decide what to patch.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ....assignor.contract import BoundAssignor, bind_assignors, instantiate_assignor
from ....assignor.decisions import (
    CompleteDecision,
    PrepareDecision,
    decide_complete,
    decide_prepare,
    drop_unsubscribed,
    log_assigned,
)
from ....assignor.leader import MemberMetadata
from ....assignor.member import NO_JOIN, JoinState
from ....assignor.rack_changes import RackTracker
from ....assignor.racks import racks_changed
from ....assignor.rebalance import RebalanceProtocol
from ....bootstrap_check import BootstrapCheck
from ....codec.consumer_protocol import Assignment, decode_assignment
from ....core.gc_pause import cyclic_gc_paused
from ....errors import ConfigurationError
from ....metrics.observe import assign_from_cluster
from ....metrics.recorder import RebalanceMetrics
from ....migration_advice import refusal_line
from .authorization import TopicAuthorization
from .members import normalise_members

__all__ = [
    "HooksBase",
    "instantiate_assignor",
    "log_commit_failure",
    "log_partitions",
    "pre_rebalance_commit_timeout_ms",
]

log = logging.getLogger("kafka_sticky_plugin.hooks")


def log_partitions(group_id: str, what: str, partitions: Iterable[Any]) -> None:
    """One INFO line with the count (cheap at any scale), the partition list at DEBUG."""
    chosen = sorted(partitions)
    log.info("group %s: %s %d partitions", group_id, what, len(chosen))
    log.debug("group %s: %s %s", group_id, what, chosen)


def pre_rebalance_commit_timeout_ms(config: Any, poll_timeout_ms: int | None) -> int:
    """How long the auto-commit before a rejoin may take: ``request_timeout_ms``, at most half
    of ``max_poll_interval_ms`` (the rebalance timeout: the other half is left for the
    JoinGroup, so a slow commit cannot get the member evicted), and never less than what is
    left of the ``poll()`` that started the rebalance. ``config`` is the consumer's (the
    coordinator's lacks ``request_timeout_ms`` on 2.x).

    kafka-python 2.2, 2.3 and 3.0 hand the commit only what is left of that ``poll()`` (none
    for ``poll(timeout_ms=0)``), so it timed out whenever the coordinator answered later than
    the poll would wait, and it is never retried: the member rejoined with positions
    uncommitted and their records went to the next owner again. Java bounds this commit by
    the rebalance timeout, not by the poll (``onJoinPrepare``)."""
    own = min(int(config["request_timeout_ms"]), int(config["max_poll_interval_ms"]) // 2)
    return own if poll_timeout_ms is None else max(own, int(poll_timeout_ms))


def log_commit_failure(
    group_id: str, partitions: int, error: BaseException, timeout_ms: int | None = None
) -> None:
    """One WARNING line for a failed pre-rebalance commit (group, partition count, reason);
    the traceback only at DEBUG. Nothing is lost by it: the next owner starts from the last
    committed offsets, so records consumed since then are delivered again."""
    import kafka.errors as kafka_errors

    if isinstance(error, kafka_errors.KafkaTimeoutError) and timeout_ms is not None:
        reason = f"no answer from the group coordinator within {timeout_ms} ms"
    elif isinstance(
        error,
        (
            kafka_errors.UnknownMemberIdError,
            kafka_errors.IllegalGenerationError,
            kafka_errors.RebalanceInProgressError,
        ),
    ):
        reason = f"membership out of date ({type(error).__name__})"
    else:
        reason = f"{type(error).__name__}: {error}"
    log.warning(
        "group %s: pre-rebalance commit of %d partitions failed: %s; records consumed since"
        " their last commit will be delivered again",
        group_id,
        partitions,
        reason,
    )
    log.debug("group %s: pre-rebalance commit failure", group_id, exc_info=error)


class HooksBase:
    """Per-consumer hook state common to every client family.

    Invariants: ``assignors`` lists the instances the coordinator uses, in the configured
    (preference) order; at least one of them is ours; ``protocol`` is selected once, at
    install, by KIP-429's rule; ``joined`` is this member's last completed join
    (:data:`~kafka_sticky_plugin.assignor.member.NO_JOIN` before one and after membership was
    lost), the one join state every JoinGroup metadata is written from (the assignors hold
    none); ``_patched`` names exactly the attributes set on the coordinator instance, so
    ``uninstall`` restores the class behaviour.
    """

    family = "base"

    def __init__(self, consumer: Any, assignors: Sequence[Any]) -> None:
        self._consumer = consumer
        self._coordinator = consumer._coordinator
        self._subscription = consumer._subscription
        self.assignors: list[Any] = list(assignors)
        self._bound, self.protocol = bind_assignors(
            self.assignors, "StickyAssignor, CooperativeStickyAssignor"
        )
        self.joined: JoinState = NO_JOIN
        config = getattr(consumer, "config", None)
        rack = config.get("client_rack") if isinstance(config, dict) else None
        #: KIP-881: the consumer's ``client_rack`` (3.x; 2.x has none), reported by our
        #: assignors that were given no ``rack_id``
        self.client_rack: str | None = rack if isinstance(rack, str) and rack else None
        self.metrics = RebalanceMetrics(
            str(self._coordinator.group_id),
            str(consumer.config.get("client_id") or ""),
            assigned=lambda: len(self._subscription.assigned_partitions()),
        )
        self._patched: dict[str, Callable[..., Any]] = {}
        self._originals: dict[str, Callable[..., Any]] = {}
        #: The metadata listener that reports refused topics (set by a family's ``install``).
        self.topic_authorization: TopicAuthorization | None = None
        #: KIP-881: the placement this member assigned with as leader (:meth:`watch_racks`)
        self.racks = RackTracker()
        self._racks_listener: Callable[[Any], None] | None = None
        #: no bootstrap address answering, said once when the consumer first looks for its
        #: coordinator (:mod:`kafka_sticky_plugin.bootstrap_check`)
        self.bootstrap_check = BootstrapCheck(
            f"group {self._coordinator.group_id} client {consumer.config.get('client_id')}",
            consumer.config.get("bootstrap_servers"),
            reached=lambda: self._coordinator.coordinator_id is not None,
        )

    def say_refusal(self, error: BaseException) -> None:
        """One WARNING line, once per consumer, when the broker refuses this classic member
        for a KIP-848 reason (see :func:`~kafka_sticky_plugin.migration_advice.refusal_line`);
        the error itself still comes out of ``poll()``."""
        name = str(getattr(error, "message", type(error).__name__))
        line = refusal_line(
            self.group_id, name, classic=True, offered=tuple(a.name for a in self.assignors)
        )
        if line is not None and not getattr(self, "_refusal_said", False):
            self._refusal_said = True
            log.warning("%s", line)

    # -- installation -------------------------------------------------------------------
    def _patch(self, target: Any, name: str, replacement: Callable[..., Any]) -> None:
        self._originals[f"{id(target)}:{name}"] = getattr(target, name)
        vars(target)[name] = replacement
        self._patched[f"{id(target)}:{name}"] = replacement

    def original(self, target: Any, name: str) -> Callable[..., Any]:
        """The method ``name`` of ``target`` as it was before the hooks were installed."""
        return self._originals[f"{id(target)}:{name}"]

    def install(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def watch_racks(self) -> None:
        """Listen to the cluster metadata for rack changes (KIP-881, :meth:`on_metadata_racks`);
        a family's ``install`` calls it once."""
        if self._racks_listener is None:
            self._racks_listener = self.on_metadata_racks
            self._coordinator._cluster.add_listener(self._racks_listener)

    def on_metadata_racks(self, cluster: Any) -> None:
        """Every metadata update: while this member tracks the placement it assigned with as
        leader, a change in the racks of a subscribed partition's replicas requests one
        rejoin (:mod:`~kafka_sticky_plugin.assignor.rack_changes`: a broker that is only
        absent is no change). Never raises (a metadata listener's error would stop the
        client's other listeners)."""
        if not getattr(self._coordinator, "_is_leader", False):
            return
        if racks_changed(self.racks, cluster, self.group_id, log):
            self._coordinator.request_rejoin()

    def uninstall(self) -> None:
        """Remove every instance patch; the client's class methods apply again."""
        if self._racks_listener is not None:
            with contextlib.suppress(KeyError):
                self._coordinator._cluster.remove_listener(self._racks_listener)
            self._racks_listener = None
        if self.topic_authorization is not None:
            self.topic_authorization.uninstall()
            self.topic_authorization = None
        heartbeat = getattr(self._coordinator, "heartbeat", None)  # prompt heartbeats (3.0)
        for target in (self._coordinator, self._subscription, heartbeat):
            for key in list(self._patched):
                prefix, name = key.split(":", 1)
                if prefix == str(id(target)):
                    vars(target).pop(name, None)
                    del self._patched[key]

    @property
    def installed(self) -> bool:
        return bool(self._patched)

    def reset_generation(self, *args: Any, **kwargs: Any) -> None:
        """The client's reset, then: if this happened during a rebalance whose pre-join step
        already ran while partitions are still held, run that step again, so that the lost
        partitions reach ``on_partitions_lost`` and the join state forgets them (the client
        would otherwise rejoin without telling anyone, still claiming them)."""
        coordinator = self._coordinator
        self.original(coordinator, "reset_generation")(*args, **kwargs)
        if coordinator.rejoining and self._subscription.assigned_partitions():
            coordinator.rejoining = False

    def need_rejoin(self) -> bool:
        """Java's ``rejoinNeededOrPending``: the client's answer, or a join still in flight.

        kafka-python (2.2+, 3.0) drives an in-flight JoinGroup/SyncGroup only while
        ``need_rejoin()`` is true, but a rebalance started by a subscription change stops
        being "needed" as soon as the JoinGroup is sent (the joined subscription now equals
        the subscription). A ``poll`` that timed out during that join then never completes
        it: the member keeps its old assignment, its heartbeat stays disabled, the broker
        evicts it, and it goes on fetching partitions that now belong to another member.
        """
        coordinator = self._coordinator
        if self.original(coordinator, "need_rejoin")():
            return True
        if not self._subscription.partitions_auto_assigned():
            return False
        pending = getattr(coordinator, "_join_task", None)
        if pending is None:
            pending = getattr(coordinator, "join_future", None)
        return pending is not None

    # -- shared helpers -----------------------------------------------------------------
    @property
    def group_id(self) -> str:
        return str(self._coordinator.group_id)

    def bound(self, protocol_name: str | None) -> BoundAssignor | None:
        return self._bound.get(str(protocol_name))

    def forget_join(self) -> None:
        """Lost membership: the member forgets its last join (next claim: nothing, -1)."""
        self.joined = NO_JOIN

    def record_join(self, assignment: Assignment, generation: int) -> None:
        """A completed join: its whole assignment and generation become :attr:`joined`."""
        self.joined = JoinState.after(assignment.partitions, generation)

    def _owned_pairs(self) -> list[tuple[str, int]]:
        return [(tp.topic, tp.partition) for tp in self._subscription.assigned_partitions()]

    def prepare_decision(self, reset: bool) -> PrepareDecision[Any]:
        """What to do before JoinGroup: ``decide_prepare`` on the consumer's owned partitions
        and subscription; ``reset``: the membership was reset (``membership_lost``). Java's
        rule: with the membership reset (the first join included) only owned partitions go to
        on_partitions_lost, and nothing fires when none are owned; an EAGER revoke (even of
        nothing) happens only for a member still in a generation."""
        sub = self._subscription
        owned = set(sub.assigned_partitions())
        topics = set(sub.subscription or ())
        return decide_prepare(
            owned,
            {tp: tp.topic in topics for tp in owned},
            self.protocol,
            reset,
        )

    def group_protocols(self) -> list[tuple[str, Any]]:
        """The patched ``group_protocols`` of every family: JoinGroup protocols in configured
        order (the client's preference order), ours as bytes (owned = the consumer's current
        assignment under COOPERATIVE), foreign ones as the client makes them."""
        import kafka.errors as kafka_errors

        topics = self._subscription.subscription
        if topics is None:
            raise kafka_errors.IllegalStateError("Consumer has not subscribed to topics")
        self._coordinator._joined_subscription = set(topics)
        self.metrics.join_attempt()  # called once per JoinGroup sent
        self.racks.forget()  # whoever leads this round remembers its own placement
        refusals = self.topic_authorization
        return self.build_group_protocols(topics if refusals is None else refusals.joinable(topics))

    def build_group_protocols(self, topics: Iterable[str]) -> list[tuple[str, Any]]:
        """JoinGroup protocols in preference order; ours as bytes, foreign as the client's."""
        topic_set = set(topics)
        owned = self._owned_pairs()
        protocols: list[tuple[str, Any]] = []
        for assignor in self.assignors:
            bound = self._bound.get(str(assignor.name))
            if bound is None:
                protocols.append((assignor.name, assignor.metadata(topic_set)))
                continue
            # Java fills owned partitions from the consumer's *current* assignment (after
            # pre-join revocations), not from the assignor's memory: COOPERATIVE only.
            cooperative = self.protocol is RebalanceProtocol.COOPERATIVE
            metadata = bound.assignor.join_metadata(
                topic_set,
                self.joined,
                protocol=self.protocol,
                owned=owned if cooperative else None,
                default_rack=self.client_rack,
            )
            protocols.append((bound.name, metadata))
        return protocols

    def leader_assign(self, bound: BoundAssignor, members: Any) -> dict[str, bytes]:
        """The leader path: raw metadata of every member -> our assignor -> bytes per member.

        Every member is decoded once, which also yields the group's topics; a member whose
        metadata cannot be read gets an empty assignment and one error log line, and the
        rest of the group is assigned normally (nothing raises out of ``poll()``).
        Replica racks (KIP-881) come from the cluster metadata when brokers report racks and
        some member has a rack (:func:`~....assignor.racks.leader_racks`), timed as part of
        the assignment (``LeaderRound.racks_s``), as Java reads them inside ``assign()``.
        Mirrors the client's bookkeeping: the group subscription widens to every member's
        topics, metadata is refreshed, and the snapshot used to detect partition changes is
        recorded.
        """
        metas = normalise_members(members)
        with cyclic_gc_paused():
            # One pause from the decode to the plan, the decoded group freed inside it (a
            # helper's local): otherwise the collector's first pass after the decode scans
            # every claim list it made (about 10 ms for a million claims; gc_pause's docstring).
            plan = self._plan_round(bound, metas)
        for member in metas:
            if member.member_id not in plan:
                raise ConfigurationError(
                    f"assignor {bound.name!r} returned no assignment for member "
                    f"{member.member_id!r}"
                )
        return plan

    def _plan_round(
        self, bound: BoundAssignor, metas: Sequence[MemberMetadata]
    ) -> dict[str, bytes]:
        """:meth:`leader_assign`'s round: decode, the client's bookkeeping, the plan."""
        coordinator = self._coordinator
        started = time.perf_counter()
        group = bound.read(metas)  # each member decoded once; unreadable ones never raise
        decode_s = time.perf_counter() - started
        topics = group.topics
        self._subscription.group_subscribe(topics)
        cluster = coordinator._cluster
        set_topics = getattr(cluster, "set_topics", None)
        if not callable(set_topics):
            set_topics = coordinator._client.set_topics
        set_topics(self._subscription.group_subscription())
        cluster.request_update()
        coordinator._is_leader = True
        coordinator._assignment_snapshot = coordinator._metadata_snapshot
        partitions_per_topic = {
            topic: len(cluster.partitions_for_topic(topic) or ()) for topic in sorted(topics)
        }
        plan = assign_from_cluster(
            self.metrics, self.racks, cluster, group, partitions_per_topic, decode_s=decode_s
        )
        log.debug("group %s: leader plan over %s", self.group_id, partitions_per_topic)
        return plan

    def received_assignment(
        self, assignment_bytes: bytes
    ) -> tuple[Assignment, set[Any], CompleteDecision[Any]]:
        """After SyncGroup, before anything is applied: the decoded assignment, the
        ``TopicPartition`` set to apply, and what changes against the partitions owned now.

        Partitions of topics this consumer does not subscribe to are dropped from the set
        (with one warning line) and a rejoin is requested, as the client does; a follower
        forgets the leader's metadata snapshot. Nothing else is changed."""
        from kafka.structs import TopicPartition

        coordinator = self._coordinator
        sub = self._subscription
        if not coordinator._is_leader:
            coordinator._assignment_snapshot = None
        assignment = decode_assignment(assignment_bytes)
        assigned = {TopicPartition(topic, partition) for topic, partition in assignment.partitions}
        if drop_unsubscribed(assigned, sub.subscription or (), self.group_id, log):
            coordinator.request_rejoin()
        owned = set(sub.assigned_partitions())
        return assignment, assigned, decide_complete(owned, assigned, self.protocol)

    def log_assigned(
        self, generation: int, assigned: set[Any], decision: CompleteDecision[Any]
    ) -> None:
        """:func:`~kafka_sticky_plugin.assignor.decisions.log_assigned` on this family's log."""
        log_assigned(log, self.group_id, generation, assigned, decision)
