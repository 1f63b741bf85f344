"""A member whose JoinGroup metadata cannot be decoded joins a real group: the hooked leader
(each client family: this runs in every venv of the version matrix) gives it an empty
assignment and one error line, and the rest of the group keeps consuming.

The broken member is a :class:`~testlab.raw_member.RawGroupMember` (no
client: raw JoinGroup/SyncGroup/Heartbeat over a socket), offering the group's own protocol
name with bytes no consumer-protocol decoder can read.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from hooks_harness import Member, Producer, create_topics, unique, wait_stable

from kafka_sticky_plugin import CooperativeStickyAssignor, StickyAssignor
from kafka_sticky_plugin.codec import decode_assignment
from testlab.raw_member import RawGroupMember

pytestmark = pytest.mark.timeout(150)

ASSIGNORS = {"cooperative-sticky": CooperativeStickyAssignor, "sticky": StickyAssignor}
GARBAGE = b"\x00\x00\x00\x00\x00\x05ab"  # v0, "5 topics", then 2 bytes: truncated


@pytest.fixture
def cleanup() -> Iterator[list[Any]]:
    """Everything started by a test, stopped at teardown in reverse order."""
    started: list[Any] = []
    yield started
    for item in reversed(started):
        if isinstance(item, Producer):
            item.close()
        else:
            item.stop()


@pytest.mark.parametrize("strategy", sorted(ASSIGNORS))
def test_undecodable_member_does_not_stop_the_group(
    broker: Any, cleanup: list[Any], strategy: str
) -> None:
    """Two hooked members consume four partitions; the broken member joins; the leader's
    ``poll()`` does not raise, the broken member is synced an empty assignment, every
    partition stays owned by the two, and both go on receiving records after the join."""
    host, port = broker.bootstrap.rsplit(":", 1)
    group_id = unique("g-bad-member")
    topic = unique("t")
    create_topics(broker.bootstrap, {topic: 4})
    cleanup.append(Producer(broker.bootstrap, {topic: 4}, rate_per_s=60))
    members = [
        Member(name, broker.bootstrap, group_id, [topic], [ASSIGNORS[strategy]]).start()
        for name in ("a", "b")
    ]
    cleanup.extend(members)
    everything = {(topic, p) for p in range(4)}
    wait_stable(members, everything)

    raw = RawGroupMember(host, int(port), group_id, [(strategy, GARBAGE)]).start()
    cleanup.append(raw)
    synced = raw.wait_synced(1, timeout_s=60)[0]
    joined_at = time.monotonic()
    assert not synced.leader, "the raw member led the group; the test needs a hooked leader"
    assert decode_assignment(synced.assignment).partitions == ()

    after = wait_stable(members, everything, timeout_s=60)
    assert sorted(len(parts) for parts in after.values()) == [2, 2], after
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        late = {m.name: any(d.t > joined_at for d in m.deliveries) for m in members}
        if all(late.values()):
            break
        time.sleep(0.2)
    assert all(late.values()), f"members that stopped receiving records: {late}"
    for member in members:
        member.check()
    assert raw.error is None
