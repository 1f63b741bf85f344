"""A group forms, grows and shrinks on a real broker, with records flowing throughout.

After each stable generation every partition is owned by exactly one live member and the
assignment is balanced; sticky strategies move no more partitions than balance needs
(growth: only what the newcomers must get; shrink: only the leaver's partitions); under
cooperative-sticky a member is only ever told to revoke partitions that actually move, so the
partitions it keeps are fetched without a pause. Processing guarantees are checked on the whole
run: no partition had two owners at once, nothing acknowledged was lost, duplicates were only
in flight.
"""

from __future__ import annotations

import time

import pytest
from group_flow import FlowingGroupFactory

from kafka_sticky_plugin.groups.analysis import revoked_partitions
from kafka_sticky_plugin.groups.events import Partition
from kafka_sticky_plugin.groups.runner import ConsumerGroupRunner, StableGroup
from testlab.checks import check_stable_assignment

PARTITIONS = 12


def _revoked_by(group: ConsumerGroupRunner, member: str, t0: float, t1: float) -> set[Partition]:
    return {
        p
        for e in group.log.events()
        if e.member == member and e.kind == "revoked" and t0 <= e.t <= t1
        for p in e.partitions
    }


def _moved(before: StableGroup, after: StableGroup) -> list[tuple[str, int]]:
    old, new = before.owner_of(), after.owner_of()
    return sorted(p for p in new if old.get(p) != new[p])


@pytest.mark.timeout(150)
@pytest.mark.parametrize("strategy", ["sticky", "cooperative-sticky"])
def test_group_forms_grows_and_shrinks(strategy: str, flowing_group: FlowingGroupFactory) -> None:
    """1 -> 3 -> 2 members: complete, balanced, minimal moves, guarantees kept."""
    flow = flowing_group([strategy], PARTITIONS, rate_per_s=100)
    group = flow.group
    everything = group.all_partitions()

    group.start_member("m0")
    formed = group.wait_stable(timeout_s=45)
    check_stable_assignment(formed, everything)
    assert set(formed.assignment["m0"]) == everything

    t_grow = time.monotonic()
    group.start_member("m1")
    group.start_member("m2")
    grown = group.wait_stable(timeout_s=60)
    check_stable_assignment(grown, everything)
    moved = _moved(formed, grown)
    assert len(moved) == PARTITIONS - PARTITIONS // 3, f"growth moved {moved}"
    assert set(grown.assignment["m0"]) <= set(formed.assignment["m0"])
    kept = set(formed.assignment["m0"]) & set(grown.assignment["m0"])
    revoked_kept = _revoked_by(group, "m0", t_grow, grown.t) & kept
    if strategy == "cooperative-sticky":
        assert not revoked_kept, f"m0 was told to revoke partitions it keeps: {revoked_kept}"
    else:
        assert revoked_kept == kept, "eager: m0 revokes everything, kept partitions too"

    t_shrink = time.monotonic()
    leaver_key = group.live_keys()["m1"]
    group.stop_member("m1")
    shrunk = group.wait_stable(timeout_s=60)
    check_stable_assignment(shrunk, everything)
    moved = _moved(grown, shrunk)
    assert set(moved) == set(grown.assignment["m1"]), f"shrink moved {moved}"
    revoked_on_shrink = revoked_partitions(
        group.log.events(), t_shrink, shrunk.t, exclude_keys=[leaver_key]
    )
    if strategy == "cooperative-sticky":
        assert revoked_on_shrink == 0, "survivors were told to revoke partitions they keep"
    else:
        assert revoked_on_shrink >= len(everything) - len(grown.assignment["m1"])

    flow.finish(label=strategy)
