"""A cooperative kafka-python member keeps consuming the partitions it keeps while its group
rebalances (issue 38; :mod:`kafka_sticky_plugin.adapters.kafka_python.hooks.keep_fetching`):
the scenario is :mod:`keep_fetching_scenario`'s. Without the hooks' fix kafka-python returns
nothing for the whole round; with it the member goes on returning records of the partitions
it owns, and nothing of a partition after its revocation.
"""

from __future__ import annotations

import inspect
import time
from typing import Any

import pytest
from hooks_harness import consumed_by_two_live_members, wait_stable
from keep_fetching_scenario import (
    redelivered_after_revocation,
    run_long_rebalance,
    skip_without_held_rounds,
)

pytestmark = pytest.mark.timeout(150)


def _coordinator_poll_takes_a_timeout() -> bool:
    from kafka.coordinator.consumer import ConsumerCoordinator

    return "timeout_ms" in inspect.signature(ConsumerCoordinator.poll).parameters


def test_member_consumes_kept_partitions_during_a_rebalance(group: Any, broker: Any) -> None:
    skip_without_held_rounds(broker)
    if not _coordinator_poll_takes_a_timeout():
        pytest.skip("kafka-python 2.0.2's coordinator.poll() blocks until joined (documented)")
    g = group({"t": 8})
    a, b = g.member("a"), g.member("b")
    everything = g.all_partitions()
    before = wait_stable([a, b], everything)
    t_join = time.monotonic()
    c, kept, returned = run_long_rebalance(a, b, lambda: g.member("c"), before["a"])
    assert returned > 0, f"a returned nothing while its join was in flight (kept {sorted(kept)})"
    final = wait_stable([a, b, c], everything)
    assert all(final.values()), final
    problems = consumed_by_two_live_members([a, b, c])
    assert not problems, problems[:5]
    # Auto-commit (the harness's members have no commit listener): what a returned during
    # its join of a partition the round revoked is committed before it leaves.
    again = redelivered_after_revocation(a, [b, c], t_join)
    assert not again, again
