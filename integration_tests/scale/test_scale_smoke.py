"""A group the size production runs (issue 38), on Apache Kafka, asserting correctness only.

50 hooked kafka-python members under ``cooperative-sticky``, several per child process
(:mod:`kafka_sticky_plugin.groups.member_pack`: seven processes of seven, and one member
alone in an eighth), subscribed to 24 topics of 50 partitions (1,200 partitions), one of them
produced to throughout (a burst, then 100 records a second). The scenario: every member
joins, the group becomes stable; three members in different processes are restarted one
after the other (a clean close, then a new incarnation in the same process), the group
stable after each; the lone member's process is killed (SIGKILL: no LeaveGroup, no commit)
and the others take its partitions over. Asserted: the group becomes stable each time
(every partition owned by exactly one live member, one generation), no partition ever had
two owners at once, no acknowledged record was lost (re-deliveries only above the committed
offsets), no member raised. No time is asserted (the bounds below only end a hung run).
"""

from __future__ import annotations

import time

import pytest
from group_flow import FlowingGroupFactory

from testlab.checks import check_stable_assignment

PACKS = 7
PER_PACK = 7
TOPICS = 24
PARTITIONS_PER_TOPIC = 50
RESTARTED = ("p0m3", "p3m3", "p6m3")
KILLED = "lone"


@pytest.mark.timeout(900)
def test_fifty_cooperative_members_rolling_restart_and_a_kill(
    flowing_group: FlowingGroupFactory,
) -> None:
    started = time.monotonic()
    flow = flowing_group(
        ["cooperative-sticky"],
        PARTITIONS_PER_TOPIC,
        rate_per_s=100,
        idle_topics=TOPICS - 1,
        session_timeout_ms=10000,
        max_poll_interval_ms=60000,
    )
    group = flow.group
    everything = group.all_partitions()
    assert len(everything) == TOPICS * PARTITIONS_PER_TOPIC
    for pack in range(PACKS):
        group.start_pack([f"p{pack}m{i}" for i in range(PER_PACK)])
    lone = group.start_pack([KILLED])
    stable = group.wait_stable(timeout_s=300, quiet_s=3.0)
    check_stable_assignment(stable, everything)
    assert len(stable.assignment) == PACKS * PER_PACK + 1
    print(f"50 members stable after {time.monotonic() - started:.1f} s")

    for name in RESTARTED:
        group.restart_member(name)
        check_stable_assignment(group.wait_stable(timeout_s=300, quiet_s=3.0), everything)
    print(f"3 restarts done after {time.monotonic() - started:.1f} s")

    lone.kill()
    after_kill = group.wait_stable(timeout_s=300, quiet_s=3.0)
    check_stable_assignment(after_kill, everything)
    assert KILLED not in after_kill.assignment
    print(f"kill absorbed after {time.monotonic() - started:.1f} s")

    report = flow.finish(label="50 members")
    errors = [e for e in group.log.events() if e.kind == "error"]
    assert not errors, errors[:3]
    assert report.acknowledged > 0
    print(f"wall time {time.monotonic() - started:.1f} s")
