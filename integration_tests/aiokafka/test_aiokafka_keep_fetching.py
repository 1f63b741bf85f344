"""A cooperative aiokafka member keeps consuming the partitions it keeps while its group
rebalances (issue 38): ``getmany`` goes on returning their records while the join is in
flight (the hooks never mark a cooperative reassignment as in progress, which is what makes
aiokafka's fetcher hold every record back). The slow member is a hooked kafka-python one
(aiokafka rejoins from its own task, whatever ``getmany``'s caller does): the scenario is
:mod:`keep_fetching_scenario`'s.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from hooks_harness import consumed_by_two_live_members, wait_stable
from keep_fetching_scenario import (
    redelivered_after_revocation,
    run_long_rebalance,
    skip_without_held_rounds,
)

import kafka_sticky_plugin as kp

pytestmark = pytest.mark.timeout(150)


def test_aiokafka_member_consumes_kept_partitions_during_a_rebalance(
    group: Any, broker: Any
) -> None:
    skip_without_held_rounds(broker)
    g = group({"t": 8})
    a = g.aio("a")
    b = g.kp("b", [kp.CooperativeStickyAssignor])
    everything = g.all_partitions()
    before = wait_stable([a, b], everything)
    t_join = time.monotonic()
    c, kept, returned = run_long_rebalance(a, b, lambda: g.aio("c"), before["a"])
    assert returned > 0, f"a returned nothing while its join was in flight (kept {sorted(kept)})"
    final = wait_stable([a, b, c], everything)
    assert all(final.values()), final
    problems = consumed_by_two_live_members([a, b, c])
    assert not problems, problems[:5]
    # Auto-commit: what a returned of a partition the round revoked is committed before it
    # leaves, so its next owner does not read it again.
    again = redelivered_after_revocation(a, [b, c], t_join)
    assert not again, again
