"""kafka-python 2.x: a heartbeat refused with GROUP_AUTHORIZATION_FAILED (the group's ACL
revoked while the member runs) drops the membership, so the next rebalance step hands the
partitions to ``on_partitions_lost`` (3.0's hooks do the same; the real-broker side is the
revocation test of ``integration_tests/hooks/test_hooks_scram.py``)."""

from __future__ import annotations

from typing import Any

import pytest
from hooks_support import IS_V3, RecordingListener, join_complete, make_consumer, tps

from kafka_sticky_plugin import CooperativeStickyAssignor
from kafka_sticky_plugin.hooks import install_hooks

pytestmark = [
    pytest.mark.skipif(IS_V3, reason="2.x family: 3.0 hooks wrap its async heartbeat"),
    pytest.mark.timeout(30),
]


def _joined(consumer: Any) -> tuple[Any, RecordingListener]:
    from kafka.coordinator.base import Generation, MemberState

    install_hooks(consumer)
    listener = RecordingListener(consumer)
    consumer.subscribe(["t1"], listener=listener)
    coordinator = consumer._coordinator
    join_complete(consumer, 3, "cooperative-sticky", [("t1", 0), ("t1", 1)])
    coordinator._generation = Generation(3, "member-1", "cooperative-sticky")
    coordinator.state = MemberState.STABLE
    return coordinator, listener


@pytest.mark.parametrize("refused", [True, False])
def test_a_refused_heartbeat_drops_the_membership(refused: bool) -> None:
    import kafka.errors as kafka_errors
    from kafka.coordinator.base import MemberState
    from kafka.future import Future

    consumer = make_consumer([CooperativeStickyAssignor])
    try:
        coordinator, listener = _joined(consumer)
        hooks = install_hooks(consumer)._impl
        answer = Future()
        hooks._originals[f"{id(coordinator)}:_send_heartbeat_request"] = lambda: answer
        assert coordinator._send_heartbeat_request() is answer  # what the heartbeat thread calls
        coordinator.rejoin_needed = False
        if refused:
            answer.failure(kafka_errors.GroupAuthorizationFailedError("unit-hooks"))
        else:
            answer.failure(kafka_errors.NodeNotReadyError(0))
        generation = coordinator._generation
        if not refused:
            assert generation.generation_id == 3 and coordinator.state is MemberState.STABLE
            assert not coordinator.rejoin_needed and hooks.group_authorization.refusals == 0
            return
        assert generation.generation_id == -1 and not generation.member_id
        assert coordinator.state is MemberState.UNJOINED, "the heartbeat thread stops"
        assert coordinator.need_rejoin() and hooks.group_authorization.refusals == 1
        coordinator._on_join_prepare(generation.generation_id, generation.member_id)
        assert listener.kinds()[-1] == "lost"
        assert listener.calls[-1][1] == tps(("t1", 0), ("t1", 1))
        assert not consumer.assignment()
    finally:
        consumer.close()
