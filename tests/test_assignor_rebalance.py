"""KIP-429 protocol selection: the highest id common to every assignor, or an error."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_sticky_plugin.assignor.rebalance import (
    RebalanceProtocol,
    select_protocol,
)
from kafka_sticky_plugin.errors import ConfigurationError

protocol_sets = st.sets(st.sampled_from([0, 1]), min_size=0, max_size=2)


@given(st.lists(protocol_sets, min_size=1, max_size=5))
def test_selection_is_the_highest_common_protocol(sets: list[set[int]]) -> None:
    """The selected protocol is max(intersection); an empty intersection raises."""
    assignors = [(f"a{i}", sorted(ids)) for i, ids in enumerate(sets)]
    common = set.intersection(*sets)
    if not common:
        with pytest.raises(ConfigurationError):
            select_protocol(assignors)
        return
    chosen = select_protocol(assignors)
    assert chosen == max(common)
    assert all(int(chosen) in ids for ids in sets)


def test_no_common_protocol_names_each_assignor() -> None:
    """The configuration error says which assignor supports what."""
    with pytest.raises(ConfigurationError, match=r"range supports \['EAGER'\]") as caught:
        select_protocol([("range", [0]), ("coop-only", [1])])
    assert "coop-only supports ['COOPERATIVE']" in str(caught.value)


def test_no_assignor_is_an_error() -> None:
    """A consumer with no assignor cannot join a group."""
    with pytest.raises(ConfigurationError):
        select_protocol([])


def test_cooperative_when_all_support_it() -> None:
    """cooperative-sticky alone (COOPERATIVE, EAGER) selects COOPERATIVE."""
    assert select_protocol([("cooperative-sticky", [1, 0])]) is RebalanceProtocol.COOPERATIVE


def test_one_rebalance_protocol_for_the_whole_package() -> None:
    """The hooks, the confluent adapter and the kafka-python assignors share one enum."""
    from kafka_sticky_plugin import CooperativeStickyAssignor
    from kafka_sticky_plugin.adapters.confluent_kafka import config
    from kafka_sticky_plugin.hooks import RebalanceProtocol as HooksProtocol

    assert config.RebalanceProtocol is RebalanceProtocol is HooksProtocol
    supported = CooperativeStickyAssignor().supported_protocols()
    assert [type(p) for p in supported] == [RebalanceProtocol, RebalanceProtocol]
    assert config.check_config({"group.id": "g"}) in set(RebalanceProtocol)
