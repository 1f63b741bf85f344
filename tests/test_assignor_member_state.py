"""The client-free member state: what every adapter's assignor remembers and sends."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_sticky_plugin.assignor.member import MemberState
from kafka_sticky_plugin.assignor.rebalance import RebalanceProtocol
from kafka_sticky_plugin.codec import decode_subscription, read_user_data_claim
from kafka_sticky_plugin.errors import ConfigurationError

pairs = st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.integers(0, 40)), max_size=30)
generations = st.one_of(st.none(), st.integers(0, 2**31 - 1))


def test_strategy_protocols_are_enforced() -> None:
    """sticky runs EAGER only; an unknown strategy or protocol is a configuration error."""
    with pytest.raises(ConfigurationError, match="does not support the COOPERATIVE"):
        MemberState("sticky", rebalance_protocol=RebalanceProtocol.COOPERATIVE)
    with pytest.raises(ConfigurationError, match="unknown strategy 'range'"):
        MemberState("range")
    with pytest.raises(ConfigurationError, match="unknown rebalance protocol 7"):
        MemberState("cooperative-sticky", rebalance_protocol=7)


def test_cooperative_member_under_eager_claims_nothing_but_keeps_its_generation() -> None:
    """The first bounce of the KIP-429 upgrade: revoked everything, so no owned partitions."""
    member = MemberState("cooperative-sticky", rebalance_protocol=RebalanceProtocol.EAGER)
    member.record([("a", 1)], 5)
    sent = decode_subscription(member.subscription_bytes(["a"]))
    assert (sent.owned_partitions, sent.generation_id) == ((), 5)


@given(pairs, generations, st.sampled_from(["sticky", "cooperative-sticky"]))
def test_leader_reads_back_what_a_member_claims(
    owned: list[tuple[str, int]], generation: int | None, name: str
) -> None:
    """The claim rule in codec/ reads a member's user data as the partitions and generation
    the member recorded."""
    member = MemberState(name)
    member.record(owned, generation)
    raw = member.subscription_bytes(["a", "b", "c"])
    subscription = decode_subscription(raw)
    cooperative = name == "cooperative-sticky"
    claimed, claimed_generation = read_user_data_claim(
        subscription.user_data, cooperative=cooperative
    )
    assert claimed_generation == (-1 if generation is None else generation)
    if cooperative:
        assert claimed == ()
    else:
        assert claimed == tuple(member.previous_assignment)
        assert subscription.owned_partitions == member.previous_assignment
