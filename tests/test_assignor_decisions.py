"""Properties of the pure rebalance decisions every client family acts on."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kafka_sticky_plugin.assignor.decisions import (
    decide_complete,
    decide_prepare,
    lost_method_name,
    membership_lost,
)
from kafka_sticky_plugin.assignor.rebalance import RebalanceProtocol

partitions = st.frozensets(
    st.tuples(st.sampled_from(["a", "b", "c"]), st.integers(0, 5)), max_size=12
)
protocols = st.sampled_from(list(RebalanceProtocol))


@given(partitions, st.frozensets(st.sampled_from(["a", "b", "c"])), protocols, st.booleans())
def test_prepare_partitions_the_owned_set(
    owned: frozenset[tuple[str, int]],
    topics: frozenset[str],
    protocol: RebalanceProtocol,
    lost: bool,
) -> None:
    """lost | revoked | kept == owned, disjointly; lost skips the commit and resets."""
    decision = decide_prepare(owned, {p: p[0] in topics for p in owned}, protocol, lost)
    parts = [decision.lost, decision.revoked, decision.kept]
    assert frozenset().union(*parts) == owned
    assert sum(len(p) for p in parts) == len(owned)
    assert decision.commit is (not lost)
    assert decision.forget_join is lost
    if lost:
        assert decision.lost == owned
    elif protocol is RebalanceProtocol.EAGER:
        assert decision.revoked == owned
    else:
        # KIP-70: only partitions of topics no longer subscribed leave before the join
        assert decision.revoked == frozenset(p for p in owned if p[0] not in topics)


@given(partitions, partitions)
def test_cooperative_complete_splits_old_and_new(
    owned: frozenset[tuple[str, int]], assigned: frozenset[tuple[str, int]]
) -> None:
    """revoked|kept == owned, added|kept == assigned; rejoin exactly when revoking."""
    decision = decide_complete(owned, assigned, RebalanceProtocol.COOPERATIVE)
    assert decision.revoked | decision.kept == owned
    assert decision.added | decision.kept == assigned
    assert not decision.revoked & decision.added
    assert not decision.revoked & decision.kept
    assert decision.assigned_callback == decision.added
    assert decision.rejoin is bool(decision.revoked)


@given(partitions, partitions)
def test_eager_complete_assigns_everything_anew(
    owned: frozenset[tuple[str, int]], assigned: frozenset[tuple[str, int]]
) -> None:
    """Under EAGER the whole assignment is new and no second round is requested."""
    decision = decide_complete(owned, assigned, RebalanceProtocol.EAGER)
    assert decision.added == decision.assigned_callback == assigned
    assert not decision.revoked
    assert not decision.kept
    assert not decision.rejoin


def test_membership_lost_rule() -> None:
    """No generation or no member id means lost, as in Java's onJoinPrepare."""
    assert membership_lost(-1, "m")
    assert membership_lost(5, "")
    assert membership_lost(-1, "")
    assert not membership_lost(0, "m")


def test_lost_partitions_go_to_on_partitions_lost_only_when_it_is_callable() -> None:
    """One rule for every client (the kafka-python hooks' copy took a non-callable
    ``on_partitions_lost = None`` for the method, then failed to call it)."""

    class Modern:
        def on_partitions_lost(self, partitions: object) -> None: ...

    class Legacy:  # kafka-python 2.x / aiokafka listeners predate KIP-429
        def on_partitions_revoked(self, partitions: object) -> None: ...

    class Disabled(Legacy):
        on_partitions_lost = None

    assert lost_method_name(Modern()) == "on_partitions_lost"
    assert lost_method_name(Legacy()) == "on_partitions_revoked"
    assert lost_method_name(Disabled()) == "on_partitions_revoked"
