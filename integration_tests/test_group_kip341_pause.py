"""KIP-341's scenario on a real broker: a member freezes past its session timeout (as under a
debugger: SIGSTOP, so no poll and no heartbeat), the group moves on without it, then it thaws
still believing it owns its old partitions.

What must hold: the frozen member is told with ``on_partitions_lost`` (not a revoke: it can no
longer commit, and its commit after thawing is refused); the group never has two *live*
owners of a partition (the only overlap allowed is the frozen member's stale view, from before
it froze until its ``lost`` callback); its stale claim does not win its old partitions back
from the members that took them over at a newer generation (KIP-341's generation marker); no
acknowledged record is lost and re-deliveries by live owners are only of uncommitted offsets.

Records the frozen member hands out after thawing but before it learns it was expelled (the
client drains what it fetched before the freeze) are counted as *stale* deliveries and printed;
they are the application-visible cost of a debugger pause, not a group guarantee.

The main test runs every member with this package's coordinator hooks
(:func:`kafka_sticky_plugin.hooks.install_hooks`, issue 4);
``test_paused_member_on_plain_kafka_python`` runs the same scenario without them, recording
what kafka-python 3.0.12 does alone.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import pytest
from group_flow import FlowingGroup, FlowingGroupFactory

from kafka_sticky_plugin.brokers.embedded import RunningBroker
from kafka_sticky_plugin.groups.analysis import Overlap, analyse_deliveries
from kafka_sticky_plugin.groups.events import Delivery, OwnershipEvent, Partition
from kafka_sticky_plugin.groups.member_process import ProcessMember
from kafka_sticky_plugin.groups.runner import ConsumerGroupRunner, StableGroup
from testlab.checks import (
    check_deliveries,
    check_exclusive_ownership,
    check_stable_assignment,
)

PARTITIONS = 6
FROZEN = "frozen"


@dataclass(frozen=True)
class PauseRun:
    """What one pause scenario produced."""

    before: StableGroup
    during: StableGroup
    after: StableGroup
    t_pause: float
    t_resume: float
    drained: bool
    events: list[OwnershipEvent]
    deliveries: list[Delivery]
    acknowledged: dict[Partition, set[int]]


def run_pause(flow: FlowingGroup) -> PauseRun:
    """Form a 3-member group, freeze one member past its session, thaw it, drain, close."""
    group = flow.group
    group.start_member("m0")
    group.start_member("m1")
    group.start_member(FROZEN, process=True)
    before = group.wait_stable(timeout_s=45)
    frozen = group.member(FROZEN)
    assert isinstance(frozen, ProcessMember)
    frozen.pause()
    t_pause = time.monotonic()
    during = group.wait_stable(members=["m0", "m1"], timeout_s=60)
    frozen.resume()
    t_resume = time.monotonic()
    after = group.wait_stable(timeout_s=60)
    flow.stop()
    return PauseRun(
        before=before,
        during=during,
        after=after,
        t_pause=t_pause,
        t_resume=t_resume,
        drained=flow.drained,
        events=group.log.events(),
        deliveries=group.log.deliveries(),
        acknowledged=flow.producer.acknowledged(),
    )


def _print_timeline(run: PauseRun) -> None:
    for e in run.events:
        if e.kind in ("assigned", "revoked", "lost", "paused", "resumed") or (
            e.kind == "commit_failed" and e.member == FROZEN
        ):
            parts = [p for _, p in e.partitions]
            print(f"{e.t - run.t_pause:+7.2f}s {e.key:<10} {e.kind:<13} gen {e.generation} {parts}")


def check_pause_run(run: PauseRun, group: ConsumerGroupRunner) -> None:
    """The assertions of the module docstring."""
    _print_timeline(run)
    everything = group.all_partitions()
    for stable in (run.before, run.during, run.after):
        check_stable_assignment(stable, everything)
    frozen_parts = set(run.before.assignment[FROZEN])
    lost = [e for e in run.events if e.key == f"{FROZEN}#0" and e.kind == "lost"]
    revoked = [
        e
        for e in run.events
        if e.key == f"{FROZEN}#0" and e.kind == "revoked" and e.t > run.t_resume and e.partitions
    ]
    assert lost, f"the frozen member got no on_partitions_lost; revoked instead: {revoked}"
    assert set(lost[0].partitions) == frozen_parts
    assert not any(p in frozen_parts for e in revoked if e.t < lost[0].t for p in e.partitions), (
        "the frozen member was told 'revoked' (may commit) before 'lost'"
    )
    t_lost = lost[0].t
    commits_while_stale = [
        e
        for e in run.events
        if e.key == f"{FROZEN}#0"
        and e.kind == "committed"
        and run.t_resume <= e.t <= t_lost
        and frozen_parts & set(e.partitions)
    ]
    assert not commits_while_stale, f"a stale commit was accepted: {commits_while_stale}"
    # Stickiness after the thaw: only as many partitions move as balance needs (the stale
    # claim, at an older generation, must not add moves of its own).
    before_thaw, after_thaw = run.during.owner_of(), run.after.owner_of()
    moved = sorted(p for p in everything if before_thaw[p] != after_thaw[p])
    target = len(everything) // len(run.after.assignment)
    needed = sum(max(0, len(parts) - target) for parts in run.during.assignment.values())
    print(f"frozen had {sorted(frozen_parts)}; moved after the thaw: {moved} (needed {needed})")
    assert len(moved) == needed, f"moved {moved}, balance needed only {needed} moves"

    def frozen_stale_view(overlap: Overlap) -> bool:
        return overlap.first.key == f"{FROZEN}#0" and overlap.first.end == t_lost

    allowed = check_exclusive_ownership(run.events, time.monotonic(), exempt=frozen_stale_view)
    # The frozen member's stale view did overlap the new owners' intervals: seeing it proves
    # the overlap detector works on this run's real events (so "no other overlap" means it).
    assert allowed, "the stale view of the frozen member was not detected as an overlap"

    def stale(delivery: Delivery) -> bool:
        return (
            delivery.member == FROZEN
            and run.t_pause <= delivery.t <= t_lost
            and (delivery.topic, delivery.partition) in frozen_parts
        )

    report = analyse_deliveries(run.acknowledged, run.deliveries, run.events, stale=stale)
    print(
        f"acknowledged {report.acknowledged}, consumed {report.consumed},"
        f" duplicates {report.duplicates}, stale deliveries {report.stale}"
    )
    check_deliveries(report)
    assert run.drained, "not every acknowledged record was delivered in time"


@pytest.mark.timeout(150)
@pytest.mark.parametrize("strategy", ["sticky", "cooperative-sticky"])
def test_paused_member_gets_partitions_lost_and_never_double_owns(
    strategy: str, flowing_group: FlowingGroupFactory
) -> None:
    """With the hooks: a frozen member gets on_partitions_lost; never two live owners."""
    flow = flowing_group([strategy], PARTITIONS, rate_per_s=50, install_hooks=True)
    check_pause_run(run_pause(flow), flow.group)


@pytest.mark.timeout(150)
def test_paused_member_on_plain_kafka_python(
    flowing_group: FlowingGroupFactory, broker: RunningBroker, request: pytest.FixtureRequest
) -> None:
    """Without the hooks, kafka-python 3.0.12 alone already calls on_partitions_lost.

    Where joins are answered at once (Apache Kafka), a plain 3.0.12 member that must rejoin
    right after its cooperative revoke sometimes sends a JoinGroup that a timed-out
    ``poll()`` never completes, stops heartbeating and is evicted (seen in 1 of 3 loaded
    runs; the hooks fix it: README note 6), so there the outcome is not claimed."""
    if broker.profile.prompt_join_response:
        request.applymarker(
            pytest.mark.xfail(
                strict=False, reason="plain kafka-python 3.0.12 may wedge in a rejoin (note 6)"
            )
        )
    flow = flowing_group(["cooperative-sticky"], PARTITIONS, rate_per_s=50, install_hooks=False)
    check_pause_run(run_pause(flow), flow.group)
