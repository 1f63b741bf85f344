"""kafka-python's own ``StickyPartitionAssignor`` and ours read each other's sticky history.

kafka-python 2.x (and kafka-python-ng) read and write Java's sticky user data v1, and read
only v1: our members write v1 (generation -1 when unknown, as Java and librdkafka do), so
their leader keeps our members' previous assignments and ours keeps theirs (issue 40).
kafka-python 3.0's own assignor puts an int16 version header in front of the user data
(its ``StickyAssignorUserData`` schema), which neither Java's nor our reader expects, nor
does it read Java's or our bytes: the two tests are strict xfails there, and flip when that
client writes Java's layout again.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from typing import Any

import kafka
import pytest
from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor

from kafka_sticky_plugin import StickyAssignor
from kafka_sticky_plugin.codec import (
    Assignment,
    Subscription,
    decode_assignment,
    encode_assignment,
    encode_subscription,
)

PREVIOUS: Mapping[str, Sequence[int]] = {"m-a": (3, 4, 5), "m-b": (0, 1, 2)}
TOPIC = "t"
OWN_LAYOUT_IS_JAVAS = int(kafka.__version__.split(".")[0]) < 3
KAFKA_PYTHON_3_HEADER = pytest.mark.xfail(
    not OWN_LAYOUT_IS_JAVAS,
    reason="kafka-python 3.0's own sticky user data has a version header Java's has not",
    raises=AssertionError,
    strict=True,
)


def _decoded_subscription(raw: bytes) -> Any:
    """The member metadata as this kafka-python's own leader decodes it (version 0's fields:
    topics and user data; kafka-python 3.x keeps the owned partitions too)."""
    if OWN_LAYOUT_IS_JAVAS:
        from kafka.coordinator import protocol

        decoder = getattr(protocol, "ConsumerProtocolMemberMetadata", None)
        return (decoder or protocol.ConsumerProtocolMemberMetadata_v0).decode(raw)
    from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription

    return ConsumerProtocolSubscription.decode(raw)


def _own_user_data(partitions: Sequence[int], generation: int) -> bytes:
    """kafka-python's own sticky user data, from its own encoder."""
    module = importlib.import_module(StickyPartitionAssignor.__module__)
    if OWN_LAYOUT_IS_JAVAS:
        # kept in a name: kafka-python's Struct.encode holds its instance by a weak reference
        data = module.StickyAssignorUserDataV1([(TOPIC, list(partitions))], generation)
        return bytes(data.encode())
    from kafka.coordinator.assignors.sticky.user_data import StickyAssignorUserData

    data = StickyAssignorUserData([(TOPIC, list(partitions))], generation)
    return bytes(data.encode())


def _our_member_bytes(partitions: Sequence[int]) -> bytes:
    """Our member's join metadata after an assignment whose generation it was not told."""
    ours = StickyAssignor()
    ours.on_assignment(encode_assignment(Assignment(0, tuple((TOPIC, p) for p in partitions))))
    return ours.metadata({TOPIC})


@KAFKA_PYTHON_3_HEADER
def test_kafka_python_own_leader_reads_our_members_history() -> None:
    for member, parts in PREVIOUS.items():
        parsed = StickyPartitionAssignor.parse_member_metadata(
            _decoded_subscription(_our_member_bytes(parts))
        )
        got = sorted(tp.partition for tp in parsed.partitions)
        assert got == sorted(parts), f"{member}: kafka-python's leader read {got}"


@KAFKA_PYTHON_3_HEADER
def test_our_leader_keeps_kafka_python_own_members_history() -> None:
    metadata = {
        member: encode_subscription(Subscription(0, (TOPIC,), user_data=_own_user_data(parts, 4)))
        for member, parts in PREVIOUS.items()
    }
    plan = StickyAssignor().assign_from_bytes({TOPIC: 6}, metadata)
    got = {m: sorted(p for _, p in decode_assignment(raw).partitions) for m, raw in plan.items()}
    assert got == {m: sorted(p) for m, p in PREVIOUS.items()}
