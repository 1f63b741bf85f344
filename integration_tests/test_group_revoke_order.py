"""The revoke callback's contract on a real broker: partitions are still assigned while
``on_partitions_revoked`` runs (Java's order), so the callback can read their positions and
commit them before they are removed. Growth 2 -> 3 members forces revocations under both
strategies; every ``revoked`` event records whether its partitions were still in
``consumer.assignment()`` during the callback.

With this package's coordinator hooks (issue 4) the contract must hold for both strategies.
kafka-python 3.0.12 on its own removes the partitions *before* the cooperative revoke callback;
``test_plain_kafka_python_cooperative_revoke_order`` pins that known client behaviour as a
strict xfail, so it is noticed (XPASS fails) when a kafka-python release fixes it.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kafka_sticky_plugin.groups.runner import ConsumerGroupRunner
from testlab.checks import check_stable_assignment

PARTITIONS = 6


def _revoke_probes(
    strategy: str,
    hooks: bool,
    topic_factory: Callable[[int], str],
    group_id: str,
    group_factory: Callable[..., ConsumerGroupRunner],
) -> list[str]:
    topic = topic_factory(PARTITIONS)
    group = group_factory(group_id, {topic: PARTITIONS}, [strategy], install_hooks=hooks)
    group.start_members(["m0", "m1"])
    check_stable_assignment(group.wait_stable(timeout_s=45), group.all_partitions())
    group.start_member("m2")
    check_stable_assignment(group.wait_stable(timeout_s=60), group.all_partitions())
    probes = [
        e.detail
        for e in group.log.events()
        if e.kind == "revoked" and e.partitions and e.member in ("m0", "m1")
    ]
    print(f"{strategy} hooks={hooks}: {probes}")
    assert probes, "growth revoked nothing: the scenario did not exercise the callback"
    return probes


@pytest.mark.timeout(120)
@pytest.mark.parametrize("strategy", ["sticky", "cooperative-sticky"])
def test_revoked_partitions_still_assigned_during_callback(
    strategy: str,
    topic_factory: Callable[[int], str],
    group_id: str,
    group_factory: Callable[..., ConsumerGroupRunner],
) -> None:
    """With the hooks, every revoke callback sees its partitions still assigned."""
    probes = _revoke_probes(strategy, True, topic_factory, group_id, group_factory)
    assert all(p == "still_assigned=True" for p in probes), probes


@pytest.mark.xfail(
    strict=True,
    reason="kafka-python 3.0.12 removes partitions before the cooperative revoke callback",
)
@pytest.mark.timeout(120)
def test_plain_kafka_python_cooperative_revoke_order(
    topic_factory: Callable[[int], str],
    group_id: str,
    group_factory: Callable[..., ConsumerGroupRunner],
) -> None:
    """Without the hooks (known client gap): the cooperative revoke comes after removal."""
    probes = _revoke_probes("cooperative-sticky", False, topic_factory, group_id, group_factory)
    assert all(p == "still_assigned=True" for p in probes), probes
