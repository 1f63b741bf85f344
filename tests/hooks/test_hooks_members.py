"""Leader-side member shapes of every client version, and owned-partition rewriting."""

from __future__ import annotations

from types import SimpleNamespace

from hypothesis import given
from hypothesis import strategies as st

from kafka_sticky_plugin.adapters.kafka_python.hooks.contract import GroupMemberMetadata
from kafka_sticky_plugin.adapters.kafka_python.hooks.members import (
    normalise_members,
    subscribed_topics,
    with_owned_partitions,
)
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
    assert {normalise_members([shape])[0] for shape in shapes} == {
        GroupMemberMetadata("m1", None, V3)
    }
    static = normalise_members([("m2", "instance-2", V0)])
    assert static == [GroupMemberMetadata("m2", "instance-2", V0)]


def test_subscribed_topics_reads_every_version() -> None:
    """The union of topics from v0 and v3 subscriptions."""
    members = normalise_members([("m1", V3), ("m2", V0)])
    assert subscribed_topics(members) == {"a", "b", "c"}


owned_lists = st.lists(st.tuples(st.sampled_from(["a", "b"]), st.integers(0, 9)), max_size=8)


@given(owned_lists)
def test_owned_partitions_are_replaced_by_the_current_assignment(
    owned: list[tuple[str, int]],
) -> None:
    """v1+ subscriptions carry exactly the given owned partitions, other fields unchanged."""
    rewritten = decode_subscription(with_owned_partitions(V3, owned))
    original = decode_subscription(V3)
    assert rewritten.owned_partitions == tuple(sorted(set(owned)))
    assert (rewritten.topics, rewritten.generation_id, rewritten.version) == (
        original.topics,
        original.generation_id,
        original.version,
    )


def test_v0_subscription_has_no_owned_field_to_rewrite() -> None:
    """A v0 subscription is returned byte for byte."""
    assert with_owned_partitions(V0, [("c", 0)]) == V0
