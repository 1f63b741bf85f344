"""KIP-429's promise on a real broker: a rolling restart of every member under
cooperative-sticky.

For each restart: the members that are not restarting are never told to revoke a partition
they keep (they never stop fetching it), each restart revokes only what moves, the group
converges within the expected rounds (one generation when the restarted member rejoins before
the group settles, at most three: leave, rejoin with revocation, follow-up assignment), and
every stable generation is complete and balanced. Over the whole run: never two owners at
once, nothing lost, duplicates only in flight.

Eager ``sticky`` runs the same restarts as a control: there every restart revokes every
partition of every member (the demo measures what that costs).
"""

from __future__ import annotations

import time

import pytest
from group_flow import FlowingGroupFactory

from kafka_sticky_plugin.groups.analysis import rebalance_rounds, revoked_partitions
from testlab.checks import check_stable_assignment

PARTITIONS = 9
MEMBERS = ("m0", "m1", "m2")


@pytest.mark.timeout(180)
@pytest.mark.parametrize("strategy", ["cooperative-sticky", "sticky"])
def test_rolling_restart_of_every_member(strategy: str, flowing_group: FlowingGroupFactory) -> None:
    """Cooperative: survivors keep fetching; only what moves is revoked; few rounds."""
    flow = flowing_group([strategy], PARTITIONS, rate_per_s=100)
    group = flow.group
    everything = group.all_partitions()
    group.start_members(MEMBERS)
    stable = group.wait_stable(timeout_s=45)
    check_stable_assignment(stable, everything)

    for name in MEMBERS:
        old_key = group.live_keys()[name]
        t_start = time.monotonic()
        group.restart_member(name)
        after = group.wait_stable(timeout_s=60)
        check_stable_assignment(after, everything)
        events = group.log.events()
        revoked = revoked_partitions(events, t_start, after.t, exclude_keys=[old_key])
        rounds = rebalance_rounds(events, t_start, after.t)
        before_owner, after_owner = stable.owner_of(), after.owner_of()
        # (survivor, partition) pairs the survivor owned before and after the restart, and
        # every partition a survivor was told to revoke during it.
        kept = {(m, p) for p, m in before_owner.items() if m != name and after_owner[p] == m}
        told = {
            (e.member, p)
            for e in events
            if e.kind == "revoked" and e.member != name and t_start <= e.t <= after.t
            for p in e.partitions
        }
        print(f"{strategy} restart {name}: revoked {revoked}, rounds {rounds}")
        if strategy == "cooperative-sticky":
            assert not kept & told, f"survivors revoked partitions they kept: {kept & told}"
            assert all(after_owner[p] != m for m, p in told), "revoked, then given back"
            assert 1 <= len(rounds) <= 3, f"converged in {rounds}"
        else:
            assert kept <= told, "eager: every survivor revokes everything, kept ones too"
        stable = after

    flow.finish(label=strategy)
