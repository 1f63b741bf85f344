"""The faults gauntlet: ONE continuous run of a consumer group on a 3-broker cluster
(:mod:`.kafka_cluster`) through every fault of :mod:`.faults` in sequence, with the checks after
each step, instead of one fresh run (and one group settle) per scenario.

The steps (:data:`STEPS`), on four child-process members (``m0`` static, KIP-345, when the
run is ``static``; the others dynamic) under steady keyed production with ``acks=all``:

1. the group coordinator's broker SIGKILLed, restarted;
2. a rolling bounce of every broker (SIGTERM, restart on the same ports);
3. members restarted cleanly one by one, 4. one member SIGKILLed (restarted);
5. every member restarted cleanly at once, 6. every member SIGKILLed at once;
7. the static member SIGKILLed and back within its session (0 revocations of the others;
   left out for a client without static membership: kafka-python 2.x);
8. a member paused (SIGSTOP) past its session, then resumed;
9. a compact seeded churn playbook (members joining, leaving, restarting; short holds).

Checks after each step (:class:`StepFigures`): every record acknowledged by the step's end is
delivered (0 lost; the wait's length is the step's ``caught_up_s``), re-deliveries counted,
no two live owners of one partition during the step (the paused member's stale view until it
learns it was expelled is exempt), nothing raised out of ``poll()``, and ``recovery_s``: the
time from the fault until every partition was consumed again. At the end the run's own
:meth:`~.faults.FaultRun.finish` checks apply (:func:`~.faults.check_figures`: committed ==
log end, re-deliveries bounded by what was uncommitted, no member stuck).

Invariant: the gauntlet only drives the :class:`~.faults.FaultRun` it is given; everything it
starts is that run's and is stopped by the run's ``close``.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from kafka_sticky_plugin.groups.analysis import find_overlaps, ownership_intervals
from kafka_sticky_plugin.groups.events import member_key
from testlab.faults import (
    FaultFigures,
    FaultRun,
    bounce_all,
    bounce_members,
    churn,
    pause_member,
    static_bounce,
)

__all__ = [
    "BROKER_STEPS",
    "STEPS",
    "GauntletResult",
    "StepFigures",
    "gauntlet",
    "gauntlets",
    "step_table",
]

#: The gauntlet's steps, in order (module docstring).
STEPS = (
    "coordinator SIGKILL",
    "rolling broker bounce",
    "members restarted one by one",
    "member SIGKILL",
    "all members restarted",
    "all members SIGKILL",
    "static bounce",
    "pause past session",
    "churn",
)
#: The steps that hit the brokers, done once for every group of a :func:`gauntlets` call.
BROKER_STEPS = STEPS[:2]


@dataclass
class StepFigures:
    """What one step measured (module docstring)."""

    step: str
    lost: int
    redelivered: int
    overlaps: int
    errors: int
    recovery_s: float
    caught_up_s: float
    revocations_of_others: int = 0

    def problems(self) -> list[str]:
        """The step's broken promises (empty when it kept them all)."""
        found = []
        if self.lost:
            found.append(f"{self.lost} acknowledged records not delivered")
        if self.overlaps:
            found.append(f"{self.overlaps} two-owner intervals")
        if self.errors:
            found.append(f"{self.errors} errors raised out of poll()")
        if self.revocations_of_others:
            found.append(f"{self.revocations_of_others} revocations of the other members")
        return found


@dataclass
class GauntletResult:
    """The steps' figures and the whole run's (:class:`~.faults.FaultFigures`)."""

    label: str
    steps: list[StepFigures]
    figures: FaultFigures

    def problems(self) -> list[str]:
        return [f"{s.step}: {p}" for s in self.steps for p in s.problems()]


def step_table(result: GauntletResult) -> str:
    """The per-step table (client/strategy label, step, lost, re-delivered, two owners,
    recovery seconds), one line per step, and a summary line."""
    lines = [f"{result.label}"]
    for s in result.steps:
        lines.append(
            f"  {s.step:<30} lost={s.lost:<3} redelivered={s.redelivered:<5} "
            f"two_owners={s.overlaps:<2} poll_errors={s.errors:<2} "
            f"recovery={s.recovery_s:6.1f}s caught_up={s.caught_up_s:6.1f}s"
            + (f" others_revoked={s.revocations_of_others}" if s.step == "static bounce" else "")
        )
    worst = max((s.recovery_s for s in result.steps), default=0.0)
    lines.append(
        f"  TOTAL lost={len(result.figures.delivery.lost)} "
        f"redelivered={result.figures.delivery.duplicates} "
        f"two_owners={result.figures.overlaps + sum(s.overlaps for s in result.steps)} "
        f"worst_recovery={worst:.1f}s"
    )
    return "\n".join(lines)


def gauntlet(
    run: FaultRun,
    *,
    seed: int,
    churn_steps: int = 25,
    catch_up_s: float = 90.0,
    on_step: Callable[[str], None] | None = None,
) -> GauntletResult:
    """One run through :data:`STEPS` (:func:`gauntlets` with one run)."""
    return gauntlets(
        [run], seed=seed, churn_steps=churn_steps, catch_up_s=catch_up_s, on_step=on_step
    )[0]


def gauntlets(
    runs: Sequence[FaultRun],
    *,
    seed: int,
    churn_steps: int = 25,
    catch_up_s: float = 90.0,
    parallel: int = 3,
    on_step: Callable[[str], None] | None = None,
) -> list[GauntletResult]:
    """Drive ``runs`` (each four or more process members, not yet started, on one cluster)
    through :data:`STEPS` (module docstring) and return each run's figures. The broker steps
    happen once for every group (the SIGKILL hits each distinct coordinator of the groups in
    turn); the member steps run for up to ``parallel`` groups at once, each in its own thread
    (the others keep consuming). Checks nothing itself: the caller asserts
    (:meth:`GauntletResult.problems`, :func:`~.faults.check_figures`)."""
    say = on_step if on_step is not None else (lambda _: None)
    trackers = [_Tracker(run, seed + i, catch_up_s) for i, run in enumerate(runs)]
    with ThreadPoolExecutor(max_workers=max(1, parallel)) as pool:
        list(pool.map(_Tracker.start, trackers))
        for step in BROKER_STEPS:
            say(f"every group: {step}")
            started = {id(t): t.run.mark(step).t for t in trackers}
            if step == "coordinator SIGKILL":
                coordinators = {
                    t.run.cluster.coordinator_of(t.run.group.group_id) for t in trackers
                }
                for node in sorted(coordinators):
                    for tracker in trackers:
                        tracker.run.mark(f"kill broker {node}")
                    runs[0].cluster.kill(node)
                    time.sleep(3.0)
                    runs[0].cluster.restart(node)
            else:
                for node in runs[0].cluster.broker_ids:
                    for tracker in trackers:
                        tracker.run.mark(f"bounce broker {node}")
                    runs[0].cluster.stop(node)
                    runs[0].cluster.restart(node)
                    time.sleep(1.0)
            for tracker in trackers:
                tracker.run.group.wait_stable(timeout_s=120)
            starts = [started[id(t)] for t in trackers]
            list(pool.map(_Tracker.check, trackers, [step] * len(trackers), starts))
        list(pool.map(lambda t: t.member_steps(churn_steps, say), trackers))
        return list(pool.map(_Tracker.result, trackers))


class _Tracker:
    """One run's progress through the gauntlet: its step windows and findings."""

    def __init__(self, run: FaultRun, seed: int, catch_up_s: float) -> None:
        self.run = run
        self.seed = seed
        self.rng = random.Random(seed)
        self.catch_up_s = catch_up_s
        self.windows: list[tuple[str, float, float, float]] = []  # step, start, end, caught up
        self.lost_at: dict[str, int] = {}
        self.others_revoked = 0
        # FaultRun(static=False): a client without static membership (kafka-python 2.x)
        # has no static member and skips the static bounce.
        self.static_name = run.names[0] if run.static else None
        self.dynamic = run.names[1:] if run.static else list(run.names)

    def start(self) -> None:
        """Production and the members (the first one static); wait for a stable group."""
        run = self.run
        run.producer.start(run.rate_per_s)
        for name in run.names:
            instance_id = f"{name}-static" if name == self.static_name else None
            run.group.start_member(name, process=True, instance_id=instance_id)
        run.group.wait_stable(timeout_s=120)

    def check(self, step: str, start: float) -> None:
        """After a step: wait until every record acknowledged so far was delivered."""
        acknowledged = self.run.producer.acknowledged()
        caught = self.run.group.wait_delivered(acknowledged, timeout_s=self.catch_up_s)
        end = time.monotonic()
        if not caught:
            seen = {(d.topic, d.partition, d.offset) for d in self.run.group.log.deliveries()}
            self.lost_at[step] = sum(
                1 for (t, p), offs in acknowledged.items() for o in offs if (t, p, o) not in seen
            )
        self.windows.append((step, start, end, end - start))

    def member_steps(self, churn_steps: int, say: Callable[[str], None]) -> None:
        """Every step of :data:`STEPS` after the broker steps, each followed by its check."""
        run, rng = self.run, self.rng
        for step in STEPS[len(BROKER_STEPS) :]:
            if step == "static bounce" and self.static_name is None:
                say(f"{run.label}: {step} left out (no static membership)")
                continue
            start = run.mark(step).t
            say(f"{run.label}: {step}")
            if step == "members restarted one by one":
                bounce_members(run, hard=False, names=self.dynamic)
            elif step == "member SIGKILL":
                bounce_members(run, hard=True, names=[rng.choice(self.dynamic)])
            elif step == "all members restarted":
                bounce_all(run, hard=False)
            elif step == "all members SIGKILL":
                bounce_all(run, hard=True)
            elif step == "static bounce" and self.static_name is not None:
                self.others_revoked = static_bounce(run, self.static_name)
            elif step == "pause past session":
                pause_member(run, rng.choice(self.dynamic), pause_s=9.0)
            else:
                churn(
                    run,
                    steps=churn_steps,
                    seed=self.seed,
                    on_step=lambda line: say(f"{run.label}: {line}"),
                    process=True,
                    hold_s=(0.1, 0.6),
                )
                run.group.wait_stable(timeout_s=120)
            self.check(step, start)

    def result(self) -> GauntletResult:
        figures = self.run.finish()
        steps = _step_figures(self.run, self.windows, self.lost_at, self.others_revoked, figures)
        return GauntletResult(self.run.label, steps, figures)


def _step_figures(
    run: FaultRun,
    windows: list[tuple[str, float, float, float]],
    lost_at: dict[str, int],
    others_revoked: int,
    figures: FaultFigures,
) -> list[StepFigures]:
    """Attribute re-deliveries, errors and two-owner intervals to the step whose window they
    fall in (before the first step: the first step's); a step's recovery is the worst after
    any of its faults (each broker killed or bounced, each member bounced)."""
    deliveries = sorted(run.group.log.deliveries(), key=lambda d: d.t)
    events = run.group.log.events()
    frozen = {key for key, _ in run.frozen}

    def step_of(t: float) -> int:
        for i, (_, _, end, _) in enumerate(windows):
            if t <= end:
                return i
        return len(windows) - 1

    redelivered = [0] * len(windows)
    seen: set[tuple[str, int, int]] = set()
    for d in deliveries:
        offset = (d.topic, d.partition, d.offset)
        if offset in seen and member_key(d.member, d.incarnation) not in frozen:
            redelivered[step_of(d.t)] += 1
        seen.add(offset)
    errors = [0] * len(windows)
    for e in events:
        if e.kind == "error":
            errors[step_of(e.t)] += 1
    overlaps = [0] * len(windows)
    # The paused member's stale view is exempt here; finish() judges it precisely.
    for overlap in find_overlaps(ownership_intervals(events, windows[-1][2])):
        if overlap.first.key not in frozen and overlap.second.key not in frozen:
            overlaps[step_of(overlap.second.start)] += 1
    result = []
    for i, (step, start, _, caught_up) in enumerate(windows):
        result.append(
            StepFigures(
                step=step,
                lost=lost_at.get(step, 0),
                redelivered=redelivered[i],
                overlaps=overlaps[i],
                errors=errors[i],
                recovery_s=max(
                    run.recovery_after(m.t) for m in run.marks if start <= m.t <= windows[i][2]
                ),
                caught_up_s=caught_up,
                revocations_of_others=others_revoked if step == "static bounce" else 0,
            )
        )
    return result
