"""KIP-429's two-bounce rolling upgrade to ``cooperative-sticky``, on Apache Kafka.

Start on an eager assignor (``range``, or this package's eager ``sticky``). Bounce 1 restarts
every member with ``[cooperative-sticky, <old>]`` (the group keeps running the old protocol
while any member lacks the new one; the consumers stay on the eager rebalance protocol because
their list still holds an eager-only assignor). Bounce 2 restarts every member with
``[cooperative-sticky]`` only. After it, one more restart must be incremental: the members that
stay are not told to revoke anything they keep. Throughout: every stable generation is
complete and balanced, never two owners at once, nothing lost.

Needs Kafka's protocol vote over the protocols every member supports; the embedded broker
fixes a group's protocol to its first member's first choice, so this is ``kafka_only``.
"""

from __future__ import annotations

import time

import pytest
from group_flow import FlowingGroupFactory

from kafka_sticky_plugin.groups.analysis import revoked_partitions
from testlab.checks import check_stable_assignment

PARTITIONS = 9
MEMBERS = ("m0", "m1", "m2")


@pytest.mark.kafka_only("protocol_vote")
@pytest.mark.timeout(300)
@pytest.mark.parametrize("old", ["range", "sticky"])
def test_two_bounce_upgrade_to_cooperative_sticky(
    old: str, flowing_group: FlowingGroupFactory
) -> None:
    """range/sticky -> [cooperative-sticky, old] -> [cooperative-sticky], no loss."""
    flow = flowing_group([old], PARTITIONS, rate_per_s=50)
    group = flow.group
    everything = group.all_partitions()
    group.start_members(MEMBERS)
    check_stable_assignment(group.wait_stable(timeout_s=60), everything)
    for assignors in (["cooperative-sticky", old], ["cooperative-sticky"]):
        for name in MEMBERS:
            group.restart_member(name, assignors=assignors)
            check_stable_assignment(group.wait_stable(timeout_s=90), everything)

    old_key = group.live_keys()["m0"]
    t_restart = time.monotonic()
    group.restart_member("m0")
    after = group.wait_stable(timeout_s=90)
    check_stable_assignment(after, everything)
    revoked = revoked_partitions(group.log.events(), t_restart, after.t, exclude_keys=[old_key])
    assert revoked == 0, "after the upgrade a restart still revoked the survivors' partitions"

    flow.finish()
