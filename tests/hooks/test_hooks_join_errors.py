"""kafka-python 2.x: MEMBER_ID_REQUIRED (KIP-394) on any JoinGroup version is a retry."""

from __future__ import annotations

import pytest
from hooks_support import IS_V3, make_consumer

from kafka_sticky_plugin import CooperativeStickyAssignor
from kafka_sticky_plugin.hooks import install_hooks

pytestmark = [
    pytest.mark.skipif(IS_V3, reason="kafka-python 3.0 handles MEMBER_ID_REQUIRED itself"),
    pytest.mark.timeout(30),
]


def _member_id_required_response(member_id: str) -> object:
    from kafka.protocol.group import JoinGroupResponse

    return JoinGroupResponse[2](
        throttle_time_ms=0,
        error_code=79,
        generation_id=-1,
        group_protocol="",
        leader_id="",
        member_id=member_id,
        members=[],
    )


def test_member_id_required_keeps_the_member_id_and_retries() -> None:
    """Error 79 fails the join future with a retriable error and records the member id."""
    import kafka.errors as kafka_errors
    from kafka.future import Future

    consumer = make_consumer([CooperativeStickyAssignor])
    try:
        install_hooks(consumer)
        consumer.subscribe(["t1"])
        coordinator = consumer._coordinator
        future = Future()
        response = _member_id_required_response("member-from-broker")
        coordinator._handle_join_group_response(future, 0.0, response)
        assert future.failed()
        assert isinstance(future.exception, kafka_errors.UnknownMemberIdError)
        assert coordinator._generation.member_id == "member-from-broker"
        assert coordinator._generation.generation_id == -1
        assert coordinator.need_rejoin()
    finally:
        consumer.close()
