"""Real-broker scenarios of the aiokafka hooks (join, leave, crash, rolling restart with
commit-on-revoke), on both brokers and every aiokafka matrix venv. Fresh topics and group per
test; the fast group settings of ``aio_harness.AIO_SETTINGS``."""

from __future__ import annotations

import time
from typing import Any

import pytest
from hooks_harness import consumed_by_two_live_members, wait_stable

from kafka_sticky_plugin.aiokafka import CooperativeStickyAssignor, StickyAssignor

pytestmark = pytest.mark.timeout(180)


@pytest.mark.parametrize("strategy", ["cooperative-sticky", "sticky"])
def test_join_and_leave_keep_survivors_partitions(group: Any, strategy: str) -> None:
    """Three aiokafka members share six partitions; after one leaves the survivors keep
    theirs (COOPERATIVE: never revoked; EAGER sticky: revoked and given back), every
    generation reaches the assignors, no partition is consumed by two live members."""
    assignor = CooperativeStickyAssignor if strategy == "cooperative-sticky" else StickyAssignor
    g = group({"t": 6})
    members = [g.aio(name, strategy=[assignor]) for name in ("a", "b", "c")]
    everything = g.all_partitions()
    before = wait_stable(members, everything)
    assert all(len(parts) == 2 for parts in before.values()), before
    assert all(m.generation() is not None for m in members), "aiokafka#1176: generation -1"
    seen = {m.name: len(m.events) for m in members[:2]}  # formation may hand partitions over
    members[2].stop()
    after = wait_stable(members[:2], everything)
    for member in members[:2]:
        assert before[member.name] <= after[member.name], (before, after)
        revoked = [e for e in member.events[seen[member.name] :] if e.kind == "revoked"]
        if strategy == "cooperative-sticky":
            assert not revoked, f"{member.name} had partitions revoked: {revoked}"
        else:
            assert revoked, f"EAGER never revoked on {member.name}"
    assert sorted(len(p) for p in after.values()) == [3, 3]
    assert not consumed_by_two_live_members(members)


def test_crashed_member_is_replaced_by_the_survivors(group: Any) -> None:
    """A member that vanishes without a LeaveGroup: after the session timeout the survivors
    take its partitions and keep their own, never revoked (COOPERATIVE)."""
    g = group({"t": 6})
    members = [g.aio(name) for name in ("a", "b", "c")]
    everything = g.all_partitions()
    before = wait_stable(members, everything)
    seen = {m.name: len(m.kinds()) for m in members[:2]}  # formation may revoke (handovers)
    members[2].crash()
    after = wait_stable(members[:2], everything, timeout_s=90)
    for member in members[:2]:
        assert before[member.name] <= after[member.name], (before, after)
        assert "revoked" not in member.kinds()[seen[member.name] :], member.events
    assert not consumed_by_two_live_members(members[:2])


def test_rolling_restart_with_commit_on_revoke_loses_nothing(group: Any) -> None:
    """Three members restarted one at a time (cooperative-sticky, commits in
    on_partitions_revoked, auto-commit off): every record produced is delivered at least once
    and no partition is consumed by two live members at once."""
    g = group({"t": 6})
    live = {name: g.aio(name, commit_on_revoke=True) for name in ("a", "b", "c")}
    everything = g.all_partitions()
    wait_stable(list(live.values()), everything)
    retired = []
    for round_no, name in enumerate(("a", "b", "c")):
        live[name].stop()
        retired.append(live[name])
        live[name] = g.aio(f"{name}{round_no}", commit_on_revoke=True)
        wait_stable(list(live.values()), everything)
    assert g.producer is not None
    g.producer.close()
    end = _end_offsets(g.bootstrap, everything)
    members = retired + list(live.values())
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and _missing(members, end):
        time.sleep(0.5)
    assert not _missing(members, end), "records never delivered (lost)"
    assert not consumed_by_two_live_members(members)


def _end_offsets(bootstrap: str, partitions: set[tuple[str, int]]) -> dict[tuple[str, int], int]:
    from kafka import KafkaConsumer, TopicPartition

    probe = KafkaConsumer(bootstrap_servers=bootstrap)
    try:
        ends = probe.end_offsets([TopicPartition(t, p) for t, p in partitions])
        return {(tp.topic, tp.partition): offset for tp, offset in ends.items()}
    finally:
        probe.close()


def _missing(members: list[Any], end: dict[tuple[str, int], int]) -> dict[tuple[str, int], int]:
    """Per partition, how many offsets below its end offset no member has delivered."""
    seen: dict[tuple[str, int], set[int]] = {}
    for member in members:
        for delivery in list(member.deliveries):
            seen.setdefault(delivery.partition, set()).add(delivery.offset)
    missing = {p: e - len({o for o in seen.get(p, ()) if o < e}) for p, e in end.items()}
    return {p: n for p, n in missing.items() if n}


def test_restart_in_the_first_generation_moves_only_the_restarted_members_partitions(
    group: Any,
) -> None:
    """Issue 24: a member restarted while the group is still in its first generation (0 on
    Tansu, 1 on Apache Kafka) leaves with a LeaveGroup, so its successor gets exactly its
    partitions within one join round, well inside the departed member's session timeout;
    no survivor is revoked anything. Before the fix aiokafka sent no LeaveGroup in
    generation 0: the departed member (the leader here) kept its seat until its session
    expired and the restarted member's partitions stayed unowned for 11-13 s."""
    g = group({"t": 6})
    members = {name: g.aio(name) for name in ("a", "b", "c")}
    everything = g.all_partitions()
    before = wait_stable(list(members.values()), everything)
    first_generation = members["a"].generation()
    seen = {name: len(members[name].events) for name in ("b", "c")}
    members["a"].stop()
    t_stopped = time.monotonic()
    successor = g.aio("a2")
    survivors = [members["b"], members["c"]]
    after = wait_stable([successor, *survivors], everything)
    assert after["a2"] == before["a"], (before, after)
    for name in ("b", "c"):
        assert after[name] == before[name], (before, after)
        kinds = members[name].kinds()[seen[name] :]
        assert "revoked" not in kinds and "lost" not in kinds, members[name].events
    handed_over = _time_owning(successor, before["a"])
    session_s = 6.0  # aio_harness.AIO_SETTINGS
    assert handed_over - t_stopped < session_s, (
        f"the successor waited {handed_over - t_stopped:.1f} s after a member of generation"
        f" {first_generation} stopped: did it leave the group?"
    )


def _time_owning(member: Any, partitions: frozenset[tuple[str, int]]) -> float:
    """When ``member``'s events first left it owning exactly ``partitions``."""
    owned: set[tuple[str, int]] = set()
    for event in member.events:
        if event.kind == "assigned":
            owned |= event.partitions
        else:
            owned -= event.partitions
        if owned == partitions:
            return float(event.t)
    raise AssertionError(f"{member.name} never owned {sorted(partitions)}: {member.events}")
