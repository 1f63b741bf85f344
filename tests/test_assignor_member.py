"""The member side of both assignors: what ``metadata()`` sends and how state evolves.

Driven the way kafka-python 3.0.12's coordinator does: ``metadata(topics)`` for JoinGroup,
``on_assignment(ConsumerProtocolAssignment, generation)`` after SyncGroup; the hooks call
``on_partitions_lost()`` when membership is lost.
"""

from __future__ import annotations

from kafka import KafkaConsumer
from kafka.coordinator.assignors.abstract import RebalanceProtocol
from kafka.coordinator.assignors.range import RangePartitionAssignor
from kafka.protocol.consumer.metadata import (
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
)

from kafka_sticky_plugin import CooperativeStickyAssignor, StickyAssignor
from kafka_sticky_plugin.codec import (
    Assignment,
    Subscription,
    decode_cooperative_user_data,
    decode_sticky_user_data,
    decode_subscription,
    encode_assignment,
)


def kp_assignment(pairs: list[tuple[str, int]]) -> ConsumerProtocolAssignment:
    """A kafka-python 3.x assignment object, as its coordinator decodes SyncGroup bytes."""
    raw = encode_assignment(Assignment(3, tuple(pairs)))
    return ConsumerProtocolAssignment.decode(raw)


def hx(*fields: str) -> bytes:
    return bytes.fromhex("".join(fields).replace(" ", ""))


def test_fresh_sticky_member_sends_v3_with_nothing_claimed() -> None:
    """Before any assignment: v3, sorted topics, null user data, nothing owned, generation -1."""
    raw = StickyAssignor().metadata({"t2", "t1"})
    assert raw == hx(
        "0003",  # version 3
        "00000002 0002 7431 0002 7432",  # topics ["t1", "t2"], sorted
        "ffffffff",  # user data: null (no previous assignment, as Java)
        "00000000",  # owned partitions: none
        "ffffffff",  # generation -1
        "ffff",  # rack: null
    )


def test_sticky_member_reports_assignment_and_generation_in_java_format() -> None:
    """After on_assignment the user data is Java's sticky v1 and the v3 fields agree with it."""
    assignor = StickyAssignor(rack_id="az1")
    assignor.on_assignment(kp_assignment([("t1", 4), ("t0", 1), ("t1", 0)]), 7)
    sub = decode_subscription(assignor.metadata(["t1", "t0"]))
    owned = (("t0", 1), ("t1", 0), ("t1", 4))
    assert (sub.version, sub.owned_partitions, sub.generation_id, sub.rack_id) == (
        3,
        owned,
        7,
        "az1",
    )
    assert sub.user_data is not None
    assert decode_sticky_user_data(sub.user_data) == (list(owned), 7)


def test_cooperative_member_reports_owned_generation_and_int32_user_data() -> None:
    """cooperative-sticky sends owned partitions, generation (v2) and Java's int32 user data."""
    assignor = CooperativeStickyAssignor()
    assignor.on_assignment(kp_assignment([("t1", 2)]), 3)
    sub = decode_subscription(assignor.metadata({"t1"}))
    assert sub == Subscription(3, ("t1",), hx("00000003"), (("t1", 2),), 3, None)
    assert decode_cooperative_user_data(hx("00000003")) == 3


def test_cooperative_member_under_eager_claims_nothing() -> None:
    """Bound to EAGER (first upgrade bounce) the member has revoked everything: no claims."""
    assignor = CooperativeStickyAssignor()
    assignor.on_assignment(kp_assignment([("t1", 2)]), 3)
    assignor.use_rebalance_protocol(RebalanceProtocol.EAGER)
    sub = decode_subscription(assignor.metadata({"t1"}))
    assert (sub.owned_partitions, sub.generation_id) == ((), 3)
    assignor.use_rebalance_protocol(RebalanceProtocol.COOPERATIVE)
    assert decode_subscription(assignor.metadata({"t1"})).owned_partitions == (("t1", 2),)
    eager = CooperativeStickyAssignor(rebalance_protocol=RebalanceProtocol.EAGER)
    eager.on_assignment(kp_assignment([("t1", 2)]), 3)
    assert decode_subscription(eager.metadata({"t1"})).owned_partitions == ()


def test_after_partitions_lost_the_member_claims_nothing_and_no_generation() -> None:
    """on_partitions_lost: next subscription has no owned partitions and generation -1."""
    for assignor, lost_user_data in (
        (StickyAssignor(), None),
        (CooperativeStickyAssignor(), hx("ffffffff")),
    ):
        assignor.on_assignment(kp_assignment([("t1", 0), ("t1", 1)]), 9)
        assignor.on_partitions_lost()
        sub = decode_subscription(assignor.metadata({"t1"}))
        assert (sub.owned_partitions, sub.generation_id, sub.user_data) == ((), -1, lost_user_data)
        assert (assignor.previous_assignment, assignor.generation) == ((), None)


def test_state_is_per_instance() -> None:
    """Two consumers in one process never see each other's assignment or generation."""
    class_vars_before = dict(vars(StickyAssignor))
    a, b = StickyAssignor(), StickyAssignor()
    a.on_assignment(kp_assignment([("t1", 0)]), 1)
    b.on_assignment(kp_assignment([("t1", 1)]), 2)
    assert (a.previous_assignment, a.generation) == ((("t1", 0),), 1)
    assert (b.previous_assignment, b.generation) == ((("t1", 1),), 2)
    assert dict(vars(StickyAssignor)) == class_vars_before


def test_on_assignment_accepts_bytes_and_codec_values_and_drops_negative_generation() -> None:
    """Raw bytes and our Assignment work too; a negative generation is recorded as None."""
    assignor = CooperativeStickyAssignor()
    assignor.on_assignment(encode_assignment(Assignment(0, (("t", 3),))), -1)
    assert (assignor.previous_assignment, assignor.generation) == ((("t", 3),), None)
    assignor.on_assignment(Assignment(1, (("u", 0), ("t", 1))), 5)
    assert (assignor.previous_assignment, assignor.generation) == ((("t", 1), ("u", 0)), 5)


def test_metadata_is_readable_by_kafka_python_coordinator_decoder() -> None:
    """kafka-python 3.0.12 decodes every member's metadata itself before assign(): ours parses."""
    assignor = StickyAssignor(rack_id="r")
    assignor.on_assignment(kp_assignment([("t1", 0)]), 2)
    theirs = ConsumerProtocolSubscription.decode(assignor.metadata({"t1"}))
    assert (theirs.version, list(theirs.topics), theirs.generation_id, theirs.rack_id) == (
        3,
        ["t1"],
        2,
        "r",
    )


def test_subscription_bytes_is_pure() -> None:
    """subscription_bytes reads state and changes nothing: equal calls give equal bytes."""
    assignor = CooperativeStickyAssignor()
    assignor.on_assignment(kp_assignment([("t1", 0)]), 2)
    assert assignor.subscription_bytes(["t1"]) == assignor.subscription_bytes({"t1"})
    assert assignor.previous_assignment == (("t1", 0),)


def _consumer(strategies: list[object]) -> KafkaConsumer:
    # No broker: api_version is given so construction does not probe; nothing connects
    # until poll(), and the consumer is closed at once.
    return KafkaConsumer(
        bootstrap_servers="127.0.0.1:9",
        group_id="g",
        api_version=(2, 8, 0),
        partition_assignment_strategy=strategies,
    )


def test_kafka_python_accepts_classes_and_instances_and_picks_the_protocol() -> None:
    """Usable as classes or instances; kafka-python derives EAGER/COOPERATIVE from them."""
    cases: list[tuple[list[object], RebalanceProtocol]] = [
        ([CooperativeStickyAssignor], RebalanceProtocol.COOPERATIVE),
        ([StickyAssignor()], RebalanceProtocol.EAGER),
        ([RangePartitionAssignor, CooperativeStickyAssignor], RebalanceProtocol.EAGER),
    ]
    for strategies, protocol in cases:
        consumer = _consumer(list(strategies))
        try:
            coordinator = consumer._coordinator
            assert coordinator._rebalance_protocol == protocol
            names = set(coordinator._assignors)
            assert names & {"sticky", "cooperative-sticky"}
        finally:
            consumer.close()
