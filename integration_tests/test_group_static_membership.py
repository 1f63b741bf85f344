"""Static membership (KIP-345, ``group_instance_id``) on a real broker.

A static member that restarts within the session timeout comes back under the same instance
id: it gets exactly its old partitions back and no other member is told to revoke anything
(kafka-python's static members do not send LeaveGroup on close). Expiry of a static member
that stays away is measured in ``test_broker_profile.py::test_static_member_expiry``.

Static groups use a 25 s session: on the embedded broker every static JoinGroup and SyncGroup
waits about 3 s more, and with the 6 s session used elsewhere static groups keep rebalancing
(measured: three of four runs never settled within 60 s); a static restart itself takes about
12 s there (28 s seen on a loaded 2-core machine), so the session leaves room for it.
"""

from __future__ import annotations

import time

import pytest
from group_flow import FlowingGroupFactory

from kafka_sticky_plugin.groups.analysis import revoked_partitions
from testlab.checks import check_stable_assignment

PARTITIONS = 6
MEMBERS = ("m0", "m1", "m2")
STATIC_TIMEOUTS = {"session_timeout_ms": 25000, "max_poll_interval_ms": 25000}


@pytest.mark.timeout(150)
@pytest.mark.parametrize("strategy", ["sticky", "cooperative-sticky"])
def test_static_member_restart_within_session_keeps_assignment(
    strategy: str, flowing_group: FlowingGroupFactory
) -> None:
    """Same instance id back within the session timeout: same partitions, nobody revokes."""
    flow = flowing_group([strategy], PARTITIONS, rate_per_s=50, **STATIC_TIMEOUTS)
    group = flow.group
    for name in MEMBERS:
        group.start_member(name, instance_id=f"{group.group_id}-{name}")
    before = group.wait_stable(timeout_s=60)
    check_stable_assignment(before, group.all_partitions())

    old_key = group.live_keys()["m1"]
    t_restart = time.monotonic()
    group.restart_member("m1")
    after = group.wait_stable(timeout_s=60)
    elapsed = after.t - t_restart
    print(f"{strategy}: static restart settled in {elapsed:.1f}s, generation {after.generation}")
    assert after.assignment == before.assignment
    events = group.log.events()
    assert revoked_partitions(events, t_restart, after.t, exclude_keys=[old_key]) == 0

    flow.finish()
