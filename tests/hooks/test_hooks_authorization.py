"""The kafka-python hooks' authorization handling without a broker (the real-broker side is
``integration_tests/security/test_security_acl_kafka_python.py``): the metadata listener that
never raises refused topics, the JoinGroup topics without a member's refused ones, and the
spaced group attempts."""

from __future__ import annotations

import logging
from types import SimpleNamespace
from typing import Any

import pytest
from hooks_support import make_consumer

from kafka_sticky_plugin.adapters.kafka_python.hooks.authorization import (
    MAX_GROUP_RETRY_S,
    GroupAuthorization,
    TopicAuthorization,
)
from kafka_sticky_plugin.kafka_python import CooperativeStickyAssignor, install_hooks


class _Cluster:
    """The two things the coordinator's listener reads of a metadata update."""

    def __init__(self, partitions: dict[str, int], refused: set[str]) -> None:
        self._partitions = partitions
        self.unauthorized_topics = refused

    def partitions_for_topic(self, topic: str) -> set[int] | None:
        count = self._partitions.get(topic)
        return None if count is None else set(range(count))

    def topics(self, exclude_internal_topics: bool = True) -> set[str]:
        return set(self._partitions)


@pytest.fixture
def consumer() -> Any:
    consumer = make_consumer([CooperativeStickyAssignor], api_version=(3, 0))
    yield consumer
    consumer.close()


def test_client_listener_raises_on_any_refused_topic(consumer: Any) -> None:
    """The defect: the client's own listener raises before it looks for partition changes."""
    import kafka.errors as kafka_errors

    consumer.subscribe(["mine"])
    with pytest.raises(kafka_errors.TopicAuthorizationFailedError):
        consumer._coordinator._handle_metadata_update(_Cluster({"mine": 2}, {"theirs"}))


def test_refused_topics_never_raise_and_changes_are_still_seen(
    consumer: Any, caplog: pytest.LogCaptureFixture
) -> None:
    hooks = install_hooks(consumer)._impl
    consumer.subscribe(["mine", "hidden"])
    coordinator = consumer._coordinator
    guard = hooks.topic_authorization
    assert isinstance(guard, TopicAuthorization)
    with caplog.at_level(logging.INFO, "kafka_sticky_plugin"):
        for _ in range(3):  # the same refusal, three updates: one line
            guard.on_metadata(_Cluster({"mine": 2}, {"hidden"}))
        assert coordinator._metadata_snapshot["mine"] == {0, 1}
        guard.on_metadata(_Cluster({"mine": 3}, {"hidden"}))  # a partition added: seen
        assert coordinator._metadata_snapshot["mine"] == {0, 1, 2}
    refused = [r for r in caplog.records if "'hidden'" in r.getMessage()]
    assert len(refused) == 1 and refused[0].levelno == logging.WARNING
    assert guard.joinable(["mine", "hidden"]) == {"mine"}
    assert {t for _, meta in hooks.group_protocols() for t in _topics(meta)} == {"mine"}
    guard.on_metadata(_Cluster({"mine": 3, "hidden": 1}, set()))  # granted
    assert guard.joinable(["mine", "hidden"]) == {"mine", "hidden"}
    assert coordinator.need_rejoin()


def _topics(metadata: Any) -> list[str]:
    from kafka_sticky_plugin.codec import decode_subscription

    return list(decode_subscription(metadata).topics) if isinstance(metadata, bytes) else []


def test_a_member_refused_everything_still_joins_with_its_subscription(consumer: Any) -> None:
    install_hooks(consumer)
    consumer.subscribe(["only"])
    guard = install_hooks(consumer)._impl.topic_authorization
    guard.on_metadata(_Cluster({}, {"only"}))
    assert guard.joinable(["only"]) == {"only"}


def test_uninstall_gives_the_client_its_listener_back(consumer: Any) -> None:
    cluster = consumer._coordinator._cluster
    before = set(cluster._listeners)
    handle = install_hooks(consumer)
    assert set(cluster._listeners) != before
    handle.uninstall()
    assert set(cluster._listeners) == before


def test_group_refusals_are_one_line_and_spaced(caplog: pytest.LogCaptureFixture) -> None:
    dropped: list[int] = []

    consumer = SimpleNamespace(
        config={
            "security_protocol": "SASL_SSL",
            "sasl_mechanism": "SCRAM-SHA-512",
            "sasl_plain_username": "carol",
            "sasl_plain_password": "pw-never-logged",
        }
    )
    state = GroupAuthorization(consumer, "g", lambda: dropped.append(1))
    waits = []
    with caplog.at_level(logging.DEBUG, "kafka_sticky_plugin"):
        for _ in range(8):
            state.refused("JoinGroup")
            waits.append(round(state.wait_s()))
    assert waits == [1, 2, 4, 8, 16, 30, 30, 30] and MAX_GROUP_RETRY_S == 30
    assert len(dropped) == 8 and state.refusals == 8
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert errors == [errors[0]] and "grant Read on Group 'g' to User:carol" in errors[0]
    assert all("pw-never-logged" not in r.getMessage() for r in caplog.records)
    state.accepted()
    assert state.wait_s() == 0 and state.refused_at is None
