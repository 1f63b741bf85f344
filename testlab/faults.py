"""Fault scenarios for a consumer group on a :mod:`.kafka_cluster`: the coordinator's broker
killed, every broker bounced, consumers bounced (clean and SIGKILL, one by one and all at
once), a static member bounced
within its session, a member paused past its session, and a seeded churn playbook; all under
steady keyed production with ``acks=all``
(:class:`~kafka_sticky_plugin.groups.producer.KeyedProducer`).

A :class:`FaultRun` owns one topic, one producer and one
:class:`~kafka_sticky_plugin.groups.runner.ConsumerGroupRunner`; each scenario function drives one
fault and records a :class:`FaultMark` (when it happened). :meth:`FaultRun.finish` stops the
producer, waits until every acknowledged record was delivered, waits for a stable group, closes the
group and returns a :class:`FaultFigures`, which :func:`check_figures` turns into assertions:

- 0 acknowledged records lost, every duplicate a re-delivery of an uncommitted offset;
- never two live owners of one partition (from the members' own callbacks);
- committed offsets == log end once the group closed;
- no member stuck (the group is stable at the end with every live member), nothing raised
  out of ``poll()`` (no ``error`` event);
- per fault: the time until every partition was consumed again (``recovery_s``, printed,
  never asserted: the machine may be loaded).

Invariant: everything started here (members, producer) is stopped by :meth:`FaultRun.close`,
including after a failure; the cluster is the caller's.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kafka_sticky_plugin.errors import InvariantViolation
from kafka_sticky_plugin.groups.admin import create_topic, unique_name
from kafka_sticky_plugin.groups.analysis import DeliveryReport, Overlap, analyse_deliveries
from kafka_sticky_plugin.groups.events import Delivery, Partition, member_key
from kafka_sticky_plugin.groups.member_process import ProcessMember
from kafka_sticky_plugin.groups.producer import KeyedProducer
from kafka_sticky_plugin.groups.runner import ConsumerGroupRunner
from testlab.checks import check_deliveries, check_exclusive_ownership
from testlab.kafka_cluster import KafkaCluster

__all__ = [
    "FaultFigures",
    "FaultMark",
    "FaultRun",
    "FindCoordinatorCounter",
    "bounce_all",
    "bounce_members",
    "broker_failover",
    "check_figures",
    "churn",
    "consumer_bounces",
    "coordinator_failover",
    "kill_coordinator",
    "pause_member",
    "rolling_bounce",
    "static_bounce",
]


@dataclass(frozen=True)
class FaultMark:
    """One fault: what, and when (monotonic)."""

    name: str
    t: float


@dataclass
class FaultFigures:
    """What one run measured (see the module docstring)."""

    label: str
    delivery: DeliveryReport
    recovery_s: dict[str, float]
    errors: list[str]
    overlaps: int
    uncommitted: dict[Partition, tuple[int, int]]
    revocations_of_others: int = 0
    find_coordinator_peak_per_s: float = 0.0
    commit_failures: int = 0
    notes: list[str] = field(default_factory=list)

    def row(self) -> str:
        """One line for the tier's table."""
        worst = max(self.recovery_s.values(), default=0.0)
        return (
            f"{self.label:<44} lost={len(self.delivery.lost):<3} "
            f"dups={self.delivery.duplicates:<5} overlaps={self.overlaps:<2} "
            f"poll_errors={len(self.errors):<2} commit_failures={self.commit_failures:<3} "
            f"worst_recovery={worst:5.1f}s findcoord_peak={self.find_coordinator_peak_per_s:.0f}/s"
        )


class FindCoordinatorCounter(logging.Handler):
    """Counts kafka-python's "Sending group coordinator request for group G" DEBUG lines per
    second (thread members run in this process; process members are not counted). While
    attached, ``kafka.coordinator`` logs at DEBUG into this handler only: its INFO and higher
    records are passed on to the parent loggers' handlers as before, the DEBUG flood is not.
    """

    def __init__(self, group_id: str) -> None:
        super().__init__(logging.DEBUG)
        self._needle = f"group coordinator request for group {group_id}"
        self.per_second: Counter[int] = Counter()
        self._logger = logging.getLogger("kafka.coordinator")
        self._saved = (self._logger.level, self._logger.propagate)
        self._attached = False

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.INFO:
            parent = self._logger.parent
            if parent is not None and self._saved[1]:
                parent.handle(record)
        elif self._needle in record.getMessage():
            self.per_second[int(record.created)] += 1

    def attach(self) -> None:
        if not self._attached:
            self._saved = (self._logger.level, self._logger.propagate)
            self._logger.addHandler(self)
            self._logger.setLevel(logging.DEBUG)
            self._logger.propagate = False
            self._attached = True

    def detach(self) -> None:
        if self._attached:
            self._logger.removeHandler(self)
            self._logger.setLevel(self._saved[0])
            self._logger.propagate = self._saved[1]
            self._attached = False

    def peak(self) -> int:
        """The most lookups counted in one second."""
        return max(self.per_second.values(), default=0)


class FaultRun:
    """One topic, one steadily fed producer, one group on ``cluster`` (module docstring)."""

    def __init__(
        self,
        cluster: KafkaCluster,
        assignors: Sequence[str],
        members: int = 4,
        partitions: int = 12,
        rate_per_s: float = 200.0,
        label: str = "",
        process_members: bool = False,
        static: bool = False,
        group_id: str | None = None,
        static_member_settings: dict[str, Any] | None = None,
        **member_settings: Any,
    ) -> None:
        """``group_id``: the group's id (default: a fresh unique one);
        ``static_member_settings``: more member settings for the static members
        (:attr:`~kafka_sticky_plugin.groups.runner.ConsumerGroupRunner.static_member_settings`)."""
        self.cluster = cluster
        self.label = label or f"{'+'.join(assignors)}"
        self.topic = create_topic(
            cluster.bootstrap, unique_name("faults"), partitions, replication=3
        )
        self.group = ConsumerGroupRunner(
            cluster.bootstrap,
            group_id or unique_name("faults-group"),
            {self.topic: partitions},
            assignors,
            **member_settings,
        )
        self.group.static_member_settings = dict(static_member_settings or {})
        self.names = [f"m{i}" for i in range(members)]
        self.process_members = process_members
        self.static = static
        self.marks: list[FaultMark] = []
        #: (incarnation key, pause time) of members frozen past their session: until they
        #: learn they were expelled, their stale view may overlap the new owners.
        self.frozen: list[tuple[str, float]] = []
        self.producer = KeyedProducer(cluster.bootstrap, self.topic)
        self.find_coordinator = FindCoordinatorCounter(self.group.group_id)
        self.rate_per_s = rate_per_s
        self._closed = False

    # -- lifecycle -------------------------------------------------------------------------
    def start(self, stable_timeout_s: float = 90.0) -> None:
        """Start production and every member; wait for a stable group."""
        self.find_coordinator.attach()
        self.producer.start(self.rate_per_s)
        for name in self.names:
            instance_id = f"{name}-static" if self.static else None
            self.group.start_member(name, process=self.process_members, instance_id=instance_id)
        self.group.wait_stable(timeout_s=stable_timeout_s)

    def mark(self, name: str) -> FaultMark:
        mark = FaultMark(name, time.monotonic())
        self.marks.append(mark)
        return mark

    def recovery_after(self, t: float) -> float:
        """Seconds from ``t`` until every partition that receives records had a delivery
        after ``t`` (inf when one never did; keyed production may leave a partition empty)."""
        first: dict[Partition, float] = {}
        wanted: set[Partition] = set()
        for d in self.group.log.deliveries():
            p = (d.topic, d.partition)
            wanted.add(p)
            if d.t > t:
                first[p] = min(first.get(p, d.t), d.t)
        if set(first) < wanted or not wanted:
            return float("inf")
        return max(first[p] for p in wanted) - t

    def finish(self, settle_timeout_s: float = 120.0) -> FaultFigures:
        """Stop production, wait for every record and a stable group, close, measure."""
        self.producer.stop()
        acknowledged = self.producer.acknowledged()
        self.group.wait_delivered(acknowledged, timeout_s=settle_timeout_s)
        notes: list[str] = []
        try:
            self.group.wait_stable(timeout_s=settle_timeout_s)
        except AssertionError as exc:
            notes.append(f"stuck: {exc}")
        time.sleep(2.5)  # one periodic commit (commit_interval_s) after the last delivery
        self.group.close()
        self.find_coordinator.detach()
        end = time.monotonic()
        events = self.group.log.events()
        woke = {
            key: min(
                (e.t for e in events if e.key == key and e.t > t and e.kind in ("lost", "revoked")),
                default=end,
            )
            for key, t in self.frozen
        }
        paused_at = dict(self.frozen)

        def stale_view(overlap: Overlap) -> bool:
            return woke.get(overlap.first.key) == overlap.first.end

        def stale(d: Delivery) -> bool:
            key = member_key(d.member, d.incarnation)
            return key in woke and paused_at[key] <= d.t <= woke[key]

        overlaps = 0
        try:
            check_exclusive_ownership(events, end, exempt=stale_view)
        except InvariantViolation as exc:  # counted here, reported by check_figures
            overlaps = str(exc).count(";") + 1
            notes.append(str(exc))
        report = analyse_deliveries(acknowledged, self.group.log.deliveries(), events, stale=stale)
        self._closed = True
        self.producer.close()
        return FaultFigures(
            label=self.label,
            delivery=report,
            recovery_s={m.name: self.recovery_after(m.t) for m in self.marks},
            errors=[f"{e.key}: {e.detail}" for e in events if e.kind == "error"],
            overlaps=overlaps,
            uncommitted=self.uncommitted(),
            find_coordinator_peak_per_s=self.find_coordinator.peak() / max(len(self.names), 1),
            commit_failures=sum(1 for e in events if e.kind == "commit_failed"),
            notes=notes + self.producer.failures[:3],
        )

    def uncommitted(self) -> dict[Partition, tuple[int, int]]:
        """Partitions whose committed offset is not the log end: (committed, end)."""
        from kafka import KafkaConsumer
        from kafka.structs import TopicPartition

        consumer = KafkaConsumer(
            bootstrap_servers=self.cluster.bootstrap,
            group_id=self.group.group_id,
            enable_auto_commit=False,
        )
        try:
            tps = [TopicPartition(t, p) for t, p in sorted(self.group.all_partitions())]
            ends = consumer.end_offsets(tps)
            committed = {tp: consumer.committed(tp) for tp in tps}
        finally:
            consumer.close()
        gaps: dict[Partition, tuple[int, int]] = {}
        for tp in tps:
            got = committed.get(tp)
            # Nothing committed counts as 0: right for a partition no record was written to.
            offset = int(got) if got is not None else 0
            if offset != ends[tp]:
                gaps[(tp.topic, tp.partition)] = (offset, ends[tp])
        return gaps

    def close(self) -> None:
        """Stop whatever still runs (after a failure too)."""
        if not self._closed:
            self._closed = True
            try:
                self.group.close()
            finally:
                self.find_coordinator.detach()
                self.producer.close()

    def __enter__(self) -> FaultRun:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def check_figures(figures: FaultFigures, *, max_find_coordinator_per_s: float = 50.0) -> None:
    """Raise AssertionError naming the first broken promise (module docstring)."""
    problems: list[str] = []
    if figures.errors:
        problems.append(f"raised out of poll(): {figures.errors[:3]}")
    if figures.overlaps:
        problems.append(f"{figures.overlaps} ownership overlaps: {figures.notes[:1]}")
    try:
        check_deliveries(figures.delivery)
    except InvariantViolation as exc:
        problems.append(str(exc))
    if figures.uncommitted:
        problems.append(f"committed != log end: {dict(list(figures.uncommitted.items())[:4])}")
    stuck = [n for n in figures.notes if n.startswith("stuck")]
    if stuck:
        problems.append(stuck[0])
    if figures.find_coordinator_peak_per_s > max_find_coordinator_per_s:
        problems.append(
            f"FindCoordinator storm: {figures.find_coordinator_peak_per_s:.0f}/s per member"
        )
    if figures.revocations_of_others:
        problems.append(f"{figures.revocations_of_others} revocations of the other members")
    if problems:
        raise AssertionError(f"{figures.label}: " + "; ".join(problems))


# -- scenarios --------------------------------------------------------------------------------
def _settle(run: FaultRun, seconds: float) -> None:
    time.sleep(seconds)


def kill_coordinator(run: FaultRun, down_s: float = 5.0) -> int:
    """SIGKILL the broker coordinating the group, keep it down ``down_s``, restart it."""
    node = run.cluster.coordinator_of(run.group.group_id)
    run.mark(f"kill coordinator (broker {node})")
    run.cluster.kill(node)
    _settle(run, down_s)
    run.cluster.restart(node)
    return node


def broker_failover(run: FaultRun) -> FaultFigures:
    """The tier's main scenario on a fresh run: start, SIGKILL the coordinator's broker and
    restart it, wait for a stable group, bounce every broker (rolling), finish."""
    run.start()
    kill_coordinator(run)
    run.group.wait_stable(timeout_s=90)
    rolling_bounce(run)
    return run.finish()


def coordinator_failover(run: FaultRun) -> FaultFigures:
    """The short form of :func:`broker_failover` (``make test`` runs it for every client):
    start, SIGKILL the coordinator's broker and restart it, wait for a stable group, finish."""
    run.start()
    kill_coordinator(run)
    run.group.wait_stable(timeout_s=90)
    return run.finish()


def rolling_bounce(run: FaultRun, hard: bool = False, between_s: float = 2.0) -> None:
    """Stop (SIGTERM; SIGKILL when ``hard``) and restart every broker, one at a time."""
    for node in run.cluster.broker_ids:
        run.mark(f"bounce broker {node}")
        if hard:
            run.cluster.kill(node)
        else:
            run.cluster.stop(node)
        run.cluster.restart(node)
        _settle(run, between_s)


def bounce_members(run: FaultRun, hard: bool, names: Iterable[str] | None = None) -> None:
    """Restart members one by one: clean close (``hard=False``) or SIGKILL of a process
    member (``hard=True``, the member must run as a process)."""
    for name in names if names is not None else run.names:
        run.mark(f"{'kill' if hard else 'restart'} {name}")
        handle = run.group.member(name)
        if hard:
            if not isinstance(handle, ProcessMember):
                raise TypeError("a hard bounce needs process members")
            handle.kill()
            run.group.start_member(name, process=True)
        else:
            run.group.restart_member(name)
        run.group.wait_stable(timeout_s=90)


def bounce_all(run: FaultRun, hard: bool) -> None:
    """Every member stopped at once (clean closes in parallel, or SIGKILL of every process
    member when ``hard``), then each started again; wait for a stable group."""
    run.mark(f"{'kill' if hard else 'restart'} every member")
    handles = {name: run.group.member(name) for name in run.names}
    if hard:
        for handle in handles.values():
            if not isinstance(handle, ProcessMember):
                raise TypeError("a hard bounce needs process members")
            handle.kill()
    else:
        stoppers = [threading.Thread(target=h.stop, daemon=True) for h in handles.values()]
        for stopper in stoppers:
            stopper.start()
        for stopper in stoppers:
            stopper.join(40)
    for name, handle in handles.items():
        run.group.start_member(
            name,
            process=isinstance(handle, ProcessMember),
            instance_id=handle.config.group_instance_id,
        )
    run.group.wait_stable(timeout_s=90)


def consumer_bounces(run: FaultRun) -> FaultFigures:
    """The consumer-bounce set on a fresh run of process members (at least four): two
    restarted cleanly one by one, one SIGKILLed, one paused past its session and resumed,
    then all restarted cleanly at once and all SIGKILLed at once; finish."""
    run.start()
    bounce_members(run, hard=False, names=run.names[:2])
    bounce_members(run, hard=True, names=run.names[2:3])
    pause_member(run, run.names[3], pause_s=10.0)
    bounce_all(run, hard=False)
    bounce_all(run, hard=True)
    return run.finish()


def static_bounce(run: FaultRun, name: str) -> int:
    """Bounce static member ``name`` within its session (SIGKILL of a process member, as a
    crashed pod, else a clean restart) and start it again with the same
    ``group.instance.id``; return how many revocations the other members saw meanwhile
    (KIP-345 promises 0)."""
    start = run.mark(f"static bounce {name}").t
    handle = run.group.member(name)
    if isinstance(handle, ProcessMember):
        instance_id = handle.config.group_instance_id
        handle.kill()
        run.group.start_member(name, process=True, instance_id=instance_id)
    else:
        run.group.restart_member(name)
    run.group.wait_stable(timeout_s=90)
    return sum(
        1
        for e in run.group.log.events()
        if e.t > start and e.member != name and e.kind in ("revoked", "lost") and e.partitions
    )


def pause_member(run: FaultRun, name: str, pause_s: float) -> None:
    """SIGSTOP process member ``name`` for ``pause_s`` (past its session), then SIGCONT."""
    handle = run.group.member(name)
    if not isinstance(handle, ProcessMember):
        raise TypeError("pausing needs a process member")
    run.frozen.append((member_key(name, handle.config.incarnation), run.mark(f"pause {name}").t))
    handle.pause()
    time.sleep(pause_s)
    handle.resume()
    run.group.wait_stable(timeout_s=90)


def churn(
    run: FaultRun,
    steps: int,
    seed: int,
    on_step: Callable[[str], None] | None = None,
    process: bool = False,
    hold_s: tuple[float, float] = (0.2, 1.5),
) -> None:
    """A seeded playbook of ``steps`` steps: start a new member, stop one cleanly, restart
    one, or let the group settle; at least two members always run. New members are child
    processes when ``process``; each step is held a random ``hold_s`` (low, high) seconds.
    Prints nothing itself: ``on_step`` gets each step's description."""
    rng = random.Random(seed)
    spare = 0
    for step in range(steps):
        live = sorted(run.group.live_keys())
        action = rng.choice(("join", "leave", "restart", "settle"))
        if action == "leave" and len(live) <= 2:
            action = "join"
        if action == "join" and len(live) >= len(run.names) + 3:
            action = "leave"
        if action == "join":
            name = f"c{spare}"
            spare += 1
            run.group.start_member(name, process=process)
        elif action == "leave":
            name = rng.choice(live)
            run.group.stop_member(name)
        elif action == "restart":
            name = rng.choice(live)
            run.group.restart_member(name)
        else:
            name = "-"
            time.sleep(1.0)
        if on_step is not None:
            on_step(f"step {step}: {action} {name}")
        time.sleep(rng.uniform(*hold_s))
