"""A cooperative aiokafka member returns nothing of a partition once its revocation has begun
(issue 38: "nothing may be returned for a partition after it is revoked").

aiokafka runs ``on_partitions_revoked`` in its coordination task while the application's
``getmany`` runs in its own: a callback that awaits (a commit does) let ``getmany`` return
records of the partitions being revoked meanwhile. Their positions were then past what the
callback had read, so the next owner could read them again (the re-deliveries of
``make bench-scale``'s aiokafka cooperative rows). Java's consumer cannot do this: its
callback runs inside ``poll()``. The hooks pause what a round revokes before the callback
starts (aiokafka's fetcher returns nothing of a paused partition and drops what it holds).
"""

from __future__ import annotations

from typing import Any

import pytest
from aio_harness import AioMember
from hooks_harness import wait_stable

pytestmark = pytest.mark.timeout(150)


def _returned_while_revoking(member: AioMember) -> list[tuple[tuple[str, int], int, float]]:
    """``(partition, offset, seconds after the callback began)`` of every record ``member``
    returned of a partition after its revocation began (and before it was assigned again)."""
    events = list(member.events)
    late = []
    for began, revoked in list(member.revoking):
        again = {
            p: e.t for e in events if e.kind == "assigned" and e.t > began for p in e.partitions
        }
        for d in list(member.deliveries):
            if d.partition in revoked and began < d.t < again.get(d.partition, float("inf")):
                late.append((d.partition, d.offset, round(d.t - began, 3)))
    return late


def test_nothing_of_a_revoked_partition_is_returned_once_its_revocation_began(
    group: Any,
) -> None:
    g = group({"t": 8})
    # a's callback takes 3 s while records keep arriving (60 a second over 8 partitions).
    a = g.aio("a", revoke_delay_s=3.0, commit_on_revoke=True)
    everything = g.all_partitions()
    wait_stable([a], everything)
    b = g.aio("b", commit_on_revoke=True)
    wait_stable([a, b], everything)
    assert a.revoking, "a revoked nothing when b joined"
    late = _returned_while_revoking(a)
    assert not late, f"a returned records of partitions it was revoking: {late[:5]}"
    # What a returned before was committed by its callback: b reads none of it again.
    by_a = {(d.partition, d.offset) for d in list(a.deliveries)}
    again = [(d.partition, d.offset) for d in list(b.deliveries) if (d.partition, d.offset) in by_a]
    assert not again, f"b read again what a had returned: {again[:5]}"
