"""One demo run: a group rolls through a restart of every member while a producer writes.

:func:`run_rolling_restart` creates a fresh topic and a fresh group id (the embedded broker
fixes a group's protocol forever), starts a steady keyed producer, starts the members, waits
for a stable group, then restarts each member in turn (stop: commit on revoke and LeaveGroup;
start: a new consumer with the same name), waiting for a stable group after each. It then
drains the topic, closes the group and measures everything from the event log.

With ``kill_one``, the last member runs alone in a child process of its own (a member pack
of one: a Python process, or its own JVM for Java members; :func:`process_plan`), and after
the restarts that process is killed with SIGKILL (no LeaveGroup, no commit: exactly one
member gone), and the run waits until the group is stable without it (:class:`KillRecord`;
:mod:`.kill_metrics` measures that step).

A *strategy* is a list of bounces: ``sticky`` and ``cooperative-sticky`` are one bounce with
the same assignor throughout; ``upgrade-from-range`` starts on ``range`` and performs KIP-429's
two bounces (``[cooperative-sticky, range]`` then ``[cooperative-sticky]``), which only means
something on a broker that votes on the protocol (Apache Kafka).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..assignor.strategies import COOPERATIVE_STICKY
from ..assignor.strategies import STRATEGIES as ASSIGNOR_STRATEGIES
from ..groups.admin import create_topic, unique_name
from ..groups.analysis import (
    DeliveryReport,
    Interval,
    PauseReport,
    analyse_deliveries,
    find_overlaps,
    ownership_intervals,
    pause_report,
    rebalance_rounds,
    revoked_partitions,
)
from ..groups.events import Delivery, EventLog, Partition, member_key
from ..groups.member_pack import PackedMember
from ..groups.member_process import PYTHON_CLIENTS
from ..groups.metrics_events import MetricsSample, metrics_samples
from ..groups.producer import KeyedProducer
from ..groups.runner import ConsumerGroupRunner, StableGroup

__all__ = [
    "STRATEGIES",
    "KillRecord",
    "RestartRecord",
    "Strategy",
    "StrategyResult",
    "process_plan",
    "run_rolling_restart",
]


@dataclass(frozen=True)
class Strategy:
    """Assignors the group starts with, and the assignor list of each rolling bounce."""

    name: str
    initial: tuple[str, ...]
    bounces: tuple[tuple[str, ...], ...]
    needs_protocol_vote: bool = False


#: Each of the package's strategies (its one registry) alone, then the KIP-429 upgrade.
STRATEGIES: dict[str, Strategy] = {
    **{name: Strategy(name, (name,), ((name,),)) for name in ASSIGNOR_STRATEGIES},
    "upgrade-from-range": Strategy(
        "upgrade-from-range",
        ("range",),
        ((COOPERATIVE_STICKY, "range"), (COOPERATIVE_STICKY,)),
        needs_protocol_vote=True,
    ),
}


@dataclass(frozen=True)
class RestartRecord:
    """One member restart: when it began, when the group was stable again, what moved."""

    member: str
    old_key: str
    t_start: float
    t_stable: float
    before: StableGroup
    after: StableGroup
    revoked: int
    rounds: int
    #: With ``settle_between``: when the group was stable without the member, and when its
    #: successor was subscribed (after its process started); ``None`` otherwise.
    t_down_stable: float | None = None
    t_rejoin: float | None = None

    @property
    def moved(self) -> int:
        """Partitions whose owner (by logical member name) changed across the restart."""
        old, new = self.before.owner_of(), self.after.owner_of()
        return sum(1 for p in new if old.get(p) != new[p])


@dataclass(frozen=True)
class KillRecord:
    """The kill step: one member's process SIGKILLed at ``t_kill`` (its incarnation
    ``killed_key``), the group stable again without it at ``t_stable``."""

    member: str
    killed_key: str
    t_kill: float
    t_stable: float
    before: StableGroup
    after: StableGroup


@dataclass(frozen=True)
class StrategyResult:
    """Everything measured for one strategy."""

    strategy: str
    group_id: str
    topic: str
    partitions: tuple[Partition, ...]
    t_origin: float
    t_end: float
    restarts: tuple[RestartRecord, ...]
    pause: PauseReport
    deliveries: DeliveryReport
    intervals: tuple[Interval, ...]
    overlaps: int
    rounds: int
    produced: int
    errors: tuple[str, ...] = field(default=())
    #: ``[t_rolling, t_rolled]``: from the first restart to the last stable group.
    window: tuple[float, float] = (0.0, 0.0)
    #: Every record the members delivered (for measures beyond the table's).
    delivery_log: tuple[Delivery, ...] = field(default=(), repr=False)
    #: The hooked members' rebalance metrics snapshots (:mod:`.metrics_table` sums them).
    metrics: tuple[MetricsSample, ...] = field(default=(), repr=False)
    #: From the first member's start to the first stable group (every member joined).
    time_to_stable_s: float | None = None
    #: Resident memory of the members' child processes per member they hold, once stable
    #: (None when every member is a thread of this process, or without /proc).
    rss_per_member_mb: float | None = None
    #: The kill step after the restarts (``kill_one``), or None.
    kill: KillRecord | None = None

    @property
    def revoked_per_restart(self) -> float:
        """Mean partitions revoked from members that were *not* restarting."""
        return sum(r.revoked for r in self.restarts) / max(1, len(self.restarts))

    @property
    def moved_per_restart(self) -> float:
        """Mean partitions that changed owner per restart."""
        return sum(r.moved for r in self.restarts) / max(1, len(self.restarts))


Reporter = Callable[[str], None]


def _rss_per_member_mb(runner: ConsumerGroupRunner, alone: str | None) -> float | None:
    """VmRSS of the members' child processes (Linux /proc) divided by the members they hold,
    leaving out the process of member ``alone`` (the one to be killed: a process of one
    member would weigh on the per-member figure as no packed member does)."""
    pids, held = runner.child_processes()
    if alone is not None:
        handle = runner.member(alone)
        if isinstance(handle, PackedMember) and handle.pack.pid in pids:
            pids.discard(handle.pack.pid)
            held -= 1
    total_kb = 0
    for pid in pids:
        try:
            status = Path(f"/proc/{pid}/status").read_text(encoding="utf-8")
        except OSError:
            return None
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                total_kb += int(line.split()[1])
    return total_kb / 1024 / held if held else None


def _member_names(count: int) -> list[str]:
    return [f"m{i}" for i in range(count)]


def process_plan(names: Sequence[str], per_process: int, kill_one: bool) -> list[list[str]]:
    """How members are started: each inner list is one child process (a member pack), in
    start order; a member in no list runs on its own (a thread of this process, or a JVM of
    its own for Java). ``per_process`` members per process (0: none packed); with
    ``kill_one`` the last member always has a process to itself, whatever ``per_process``,
    so that killing that process kills exactly one member."""
    victim = [list(names[-1:])] if kill_one and names else []
    packed = list(names[:-1]) if victim else list(names)
    if per_process <= 0:
        return victim
    return [packed[i : i + per_process] for i in range(0, len(packed), per_process)] + victim


def run_rolling_restart(
    bootstrap: str,
    strategy: Strategy,
    members: int,
    partitions: int,
    rate_per_s: float = 200.0,
    say: Reporter = print,
    watch: Callable[[ConsumerGroupRunner, str], object] | None = None,
    stable_timeout_s: float = 90.0,
    client: str = "kafka-python",
    member_settings: Mapping[str, object] | None = None,
    settle_between: bool = False,
    idle_before_stop_s: float = 0.0,
    idle_topics: int = 0,
    per_process: int = 0,
    restart_count: int | None = None,
    kill_one: bool = False,
) -> StrategyResult:
    """Run the scenario of the module docstring and measure it.

    ``watch(runner, label)`` is called once the group exists and may return a context
    manager (the live view) that is exited when the run ends. ``client`` is the members'
    client: ``kafka-python`` or ``aiokafka`` (hooked ``AIOKafkaConsumer`` members), or any
    other :attr:`~..groups.member_config.MemberConfig.client`; ``member_settings`` are further
    :class:`~..groups.member_config.MemberConfig` fields for every member (for example
    ``group_protocol``). ``settle_between`` waits, in every restart, until the group is
    stable without the stopped member before its successor starts: every client then gets the
    same two rebalances per restart (a leave, then a join), whatever its process start costs
    (a thread member is back in milliseconds, a JVM in seconds). ``idle_before_stop_s``: how
    long the group runs stable before each stop (0: the stop follows the stability check at
    once), as a real rolling restart's next stop follows the previous start by some seconds.
    ``idle_topics``: more topics of ``partitions`` partitions each, subscribed but never
    produced to (a group over many topics); ``per_process``: Python members run that many per
    child process (:mod:`..groups.member_pack`), Java members that many per JVM (0: threads
    of this process, a JVM per Java member; the default);
    ``restart_count``: restart only the first that many members (default: every one);
    ``kill_one``: after the restarts, SIGKILL the last member, which runs alone in its own
    child process (module docstring), and wait until the group is stable without it.
    """
    if kill_one and members < 2:
        raise ValueError("kill_one needs at least 2 members (one must survive)")
    topic = create_topic(bootstrap, unique_name(f"demo-{strategy.name}"), partitions)
    idle = [
        create_topic(bootstrap, unique_name(f"demo-{strategy.name}-idle"), partitions)
        for _ in range(idle_topics)
    ]
    group_id = unique_name(f"demo-{strategy.name}")
    log = EventLog()
    producer = KeyedProducer(bootstrap, topic, keys=max(64, partitions * 4))
    producer.send_burst(partitions * 10)
    producer.start(rate_per_s)
    names = _member_names(members)
    restarts: list[RestartRecord] = []
    kill: KillRecord | None = None
    errors: list[str] = []
    t_origin = time.monotonic()
    runner = ConsumerGroupRunner(
        bootstrap,
        group_id,
        {name: partitions for name in (topic, *idle)},
        strategy.initial,
        log=log,
        client=client,
        **(member_settings or {}),
    )

    def wait_stable() -> StableGroup:
        return runner.wait_stable(timeout_s=stable_timeout_s, quiet_s=1.0)

    view = watch(runner, strategy.name) if watch is not None else None
    stack = contextlib.ExitStack()
    if isinstance(view, contextlib.AbstractContextManager):
        stack.enter_context(view)
    try:
        say(f"[{strategy.name}] starting {members} members on {topic} ({partitions} partitions)")
        packable = client in PYTHON_CLIENTS or client.startswith("java-")
        plan = process_plan(names, per_process if packable else 0, kill_one)
        in_packs = {name for pack in plan for name in pack}
        for name in names:  # alone: threads (a JVM each for Java), before the packs
            if name not in in_packs:
                runner.start_member(name)
        for pack in plan:
            runner.start_pack(pack)
        stable = wait_stable()
        t_first_stable = stable.t
        victim = names[-1] if kill_one else None
        rss_per_member_mb = _rss_per_member_mb(runner, victim)
        say(f"[{strategy.name}] stable at generation {stable.generation}")
        t_rolling = time.monotonic()
        for bounce, assignors in enumerate(strategy.bounces, start=1):
            for name in names[:restart_count]:
                old_key = member_key(name, runner.member(name).config.incarnation)
                say(f"[{strategy.name}] bounce {bounce}: restarting {name} with {list(assignors)}")
                time.sleep(idle_before_stop_s)
                t_start = time.monotonic()
                t_down_stable = t_rejoin = None
                if settle_between:
                    runner.stop_member(name)
                    t_down_stable = wait_stable().t
                runner.restart_member(name, assignors=assignors)
                if settle_between:
                    t_rejoin = time.monotonic()
                after = wait_stable()
                events = log.events()
                restarts.append(
                    RestartRecord(
                        member=name,
                        old_key=old_key,
                        t_start=t_start,
                        t_stable=after.t,
                        t_down_stable=t_down_stable,
                        t_rejoin=t_rejoin,
                        before=stable,
                        after=after,
                        revoked=revoked_partitions(
                            events, t_start, after.t, exclude_keys=[old_key]
                        ),
                        rounds=len(rebalance_rounds(events, t_start, after.t)),
                    )
                )
                say(
                    f"[{strategy.name}] {name} back: stable at generation {after.generation}"
                    f" after {after.t - t_start:.1f}s, {restarts[-1].moved} partitions moved,"
                    f" {restarts[-1].revoked} revoked from the others"
                )
                stable = after
        t_rolled = time.monotonic()
        if victim is not None:
            say(f"[{strategy.name}] killing {victim}'s process with SIGKILL")
            kill = _kill_step(runner, victim, stable, idle_before_stop_s, wait_stable)
            gone = {e.key for e in log.events() if e.kind == "killed" and e.t >= kill.t_kill}
            if gone != {kill.killed_key}:
                errors.append(f"the kill step killed {sorted(gone)}, not {kill.killed_key} alone")
            say(
                f"[{strategy.name}] {victim} killed: stable without it at generation"
                f" {kill.after.generation} after {kill.t_stable - kill.t_kill:.1f}s"
            )
        producer.stop()
        if not runner.wait_delivered(producer.acknowledged(), timeout_s=30.0):
            errors.append("not every acknowledged record was delivered within 30 s")
    finally:
        stack.close()
        producer.close()
        runner.close()
    t_end = time.monotonic()
    events = log.events()
    intervals = ownership_intervals(events, t_end)
    all_partitions = tuple((t, p) for t in (topic, *idle) for p in range(partitions))
    errors.extend(e.detail for e in events if e.kind == "error")
    return StrategyResult(
        strategy=strategy.name,
        group_id=group_id,
        topic=topic,
        partitions=all_partitions,
        t_origin=t_origin,
        t_end=t_end,
        restarts=tuple(restarts),
        pause=pause_report(intervals, all_partitions, t_rolling, t_rolled),
        deliveries=analyse_deliveries(producer.acknowledged(), log.deliveries(), events),
        intervals=tuple(intervals),
        overlaps=len(find_overlaps(intervals)),
        rounds=len(rebalance_rounds(events, t_rolling, t_rolled)),
        produced=producer.sent,
        errors=tuple(errors),
        window=(t_rolling, t_rolled),
        delivery_log=tuple(log.deliveries()),
        metrics=tuple(metrics_samples(events)),
        time_to_stable_s=t_first_stable - t_origin,
        rss_per_member_mb=rss_per_member_mb,
        kill=kill,
    )


def _kill_step(
    runner: ConsumerGroupRunner,
    victim: str,
    stable: StableGroup,
    idle_before_s: float,
    wait_stable: Callable[[], StableGroup],
) -> KillRecord:
    """SIGKILL ``victim``'s process (it holds no other member: :func:`process_plan`) and
    wait until the group is stable without it."""
    handle = runner.member(victim)
    if not isinstance(handle, PackedMember):
        raise RuntimeError(f"member {victim} does not run in a process of its own")
    killed_key = member_key(victim, handle.config.incarnation)
    time.sleep(idle_before_s)
    t_kill = time.monotonic()
    handle.kill()
    after = wait_stable()
    return KillRecord(victim, killed_key, t_kill, after.t, stable, after)
