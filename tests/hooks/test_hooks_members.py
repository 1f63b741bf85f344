"""Leader-side member shapes of every client version, and the owned partitions a member sends."""

from __future__ import annotations

from types import SimpleNamespace

from hypothesis import given
from hypothesis import strategies as st

from kafka_sticky_plugin import CooperativeStickyAssignor
from kafka_sticky_plugin.adapters.kafka_python.hooks.members import (
    normalise_members,
)
from kafka_sticky_plugin.assignor.contract import (
    BoundAssignor,
    bind_assignor,
)
from kafka_sticky_plugin.assignor.leader import MemberMetadata
from kafka_sticky_plugin.assignor.member import JoinState
from kafka_sticky_plugin.assignor.rebalance import RebalanceProtocol
from kafka_sticky_plugin.codec.consumer_protocol import (
    decode_subscription,
    encode_subscription,
    subscription_of,
)

V3 = encode_subscription(subscription_of(["a", "b"], owned_partitions=[("a", 1)], generation_id=4))
V0 = encode_subscription(subscription_of(["c"], version=0))


def test_every_client_shape_normalises_to_the_same_triple() -> None:
    """2-tuples, 3-tuples, GroupMember-like (metadata_bytes) and 3.0 objects (metadata)."""
    shapes = [
        ("m1", V3),
        ("m1", "", V3),
        SimpleNamespace(member_id="m1", group_instance_id=None, metadata_bytes=V3),
        SimpleNamespace(member_id="m1", group_instance_id=None, metadata=V3),
    ]
    assert {normalise_members([shape])[0] for shape in shapes} == {MemberMetadata("m1", V3)}
    static = normalise_members([("m2", "instance-2", V0)])
    assert static == [MemberMetadata("m2", V0, "instance-2")]


def test_group_topics_come_from_the_one_decode_of_every_version() -> None:
    """The union of topics from v0 and v3 subscriptions, read in the same pass as the specs."""
    members = normalise_members([("m1", V3), ("m2", V0)])
    group = bind(CooperativeStickyAssignor()).read(members)
    assert group.topics == {"a", "b", "c"}
    assert [spec.member_id for spec in group.specs] == ["m1", "m2"]
    assert group.unreadable == ()


def test_a_member_whose_object_cannot_become_bytes_is_unreadable_not_raised() -> None:
    """normalise_members never raises on a member's metadata; the leader names the member."""
    members = normalise_members([("m1", V3), ("bad", object())])
    group = bind(CooperativeStickyAssignor()).read(members)
    assert group.unreadable == ("bad",)
    assert group.topics == {"a", "b"}


def bind(assignor: object) -> BoundAssignor:
    bound = bind_assignor(assignor)
    assert bound is not None
    return bound


owned_lists = st.lists(st.tuples(st.sampled_from(["a", "b"]), st.integers(0, 9)), max_size=8)


@given(owned_lists)
def test_owned_partitions_are_replaced_by_the_current_assignment(
    owned: list[tuple[str, int]],
) -> None:
    """Given the consumer's current assignment, the subscription claims exactly it (sorted,
    distinct), everything else as the assignor's own subscription; no decode of our bytes."""
    bound = bind(CooperativeStickyAssignor())
    joined = JoinState.after([("a", 1)], 4)
    cooperative = RebalanceProtocol.COOPERATIVE
    rewritten = decode_subscription(
        bound.assignor.join_metadata(["a", "b"], joined, protocol=cooperative, owned=owned)
    )
    original = decode_subscription(
        bound.assignor.join_metadata(["a", "b"], joined, protocol=cooperative)
    )
    assert original.owned_partitions == (("a", 1),)
    assert rewritten.owned_partitions == tuple(sorted(set(owned)))
    assert (rewritten.topics, rewritten.generation_id, rewritten.version) == (
        original.topics,
        original.generation_id,
        original.version,
    )
