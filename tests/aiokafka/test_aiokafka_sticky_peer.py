"""aiokafka's own ``StickyPartitionAssignor`` and ours read each other's sticky history.

aiokafka's own assignor reads sticky user data v1 only: v0 bytes (no generation field) are
logged as ``Could not parse member data`` and the member's previous assignment is dropped.
Our member without a known generation (always so for an aiokafka member without the hooks:
aiokafka passes none, aiokafka#1176) writes v1 with generation -1, as Java's
``StickyAssignor`` and librdkafka do, so a group switching between aiokafka's ``sticky`` and
ours keeps its partitions whichever leads (issue 40).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

import pytest
from aio_support import metadata_response
from aiokafka.cluster import ClusterMetadata
from aiokafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor
from aiokafka.coordinator.protocol import (
    ConsumerProtocolMemberAssignment,
    ConsumerProtocolMemberMetadata,
)
from aiokafka.structs import TopicPartition

from kafka_sticky_plugin.aiokafka import StickyAssignor
from kafka_sticky_plugin.codec import decode_assignment, decode_subscription

# Previous assignments no fresh sticky plan would give: each member keeps a block another
# member would get first without history.
PREVIOUS: Mapping[str, Sequence[int]] = {"m-a": (3, 4, 5), "m-b": (0, 1, 2)}
TOPIC = "t"


def _cluster() -> ClusterMetadata:
    cluster = ClusterMetadata()
    cluster.update_metadata(metadata_response({TOPIC: 6}))
    return cluster


def _our_member_bytes(partitions: Sequence[int]) -> bytes:
    """What our aiokafka member without the hooks sends after its last assignment: aiokafka
    calls ``on_assignment(assignment)`` with no generation, then ``metadata(topics)``."""
    ours = StickyAssignor()
    ours.on_assignment(ConsumerProtocolMemberAssignment(0, [(TOPIC, list(partitions))], b""))
    raw = bytes(ours.metadata({TOPIC}))
    assert decode_subscription(raw).generation_id == -1  # the generation is not known
    return raw


def test_aiokafka_own_leader_keeps_our_members_history(caplog: pytest.LogCaptureFixture) -> None:
    """aiokafka's own leader reads our members' previous assignments (it dropped v0 as
    unreadable): its plan is their history, and it logs no parse error."""
    members = {
        member: ConsumerProtocolMemberMetadata.decode(_our_member_bytes(parts))
        for member, parts in PREVIOUS.items()
    }
    with caplog.at_level(logging.ERROR, logger="aiokafka"):
        plan = StickyPartitionAssignor.assign(_cluster(), members)
    assert not [r for r in caplog.records if "Could not parse" in r.getMessage()]
    got = {m: sorted(p for _, ps in a.assignment for p in ps) for m, a in plan.items()}
    assert got == {m: sorted(p) for m, p in PREVIOUS.items()}


def test_our_leader_keeps_aiokafka_own_members_history() -> None:
    """The reverse: our leader reads the v1 user data aiokafka's own members write."""
    members = {
        member: ConsumerProtocolMemberMetadata.decode(
            StickyPartitionAssignor._metadata(
                {TOPIC}, [TopicPartition(TOPIC, p) for p in parts], generation=4
            ).encode()
        )
        for member, parts in PREVIOUS.items()
    }
    plan = StickyAssignor().assign(_cluster(), members)
    got = {m: sorted(p for _, p in decode_assignment(raw).partitions) for m, raw in plan.items()}
    assert got == {m: sorted(p) for m, p in PREVIOUS.items()}
