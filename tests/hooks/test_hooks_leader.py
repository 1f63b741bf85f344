"""The hooks' leader path on every client family: one broken member never stops the group.

Each test drives the coordinator's own ``_perform_assignment`` (the instance attribute the
hooks patch) of a real, hooked ``KafkaConsumer`` that never talks to a broker; the topic's
partition count is entered into the consumer's real ``ClusterMetadata`` (its partition table,
the only thing the leader reads from it when no broker reports a rack).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest
from gc_watch import CollectionWatch
from hooks_support import make_consumer

from kafka_sticky_plugin import CooperativeStickyAssignor, StickyAssignor
from kafka_sticky_plugin.assignor.contract import BoundAssignor
from kafka_sticky_plugin.codec import decode_assignment, encode_subscription, subscription_of
from kafka_sticky_plugin.hooks import install_hooks

ASSIGNORS = {"cooperative-sticky": CooperativeStickyAssignor, "sticky": StickyAssignor}
GARBAGE = b"\x00\x00\x00\x00\x00\x05ab"  # v0, "5 topics", then 2 bytes: truncated


@pytest.fixture(params=sorted(ASSIGNORS))
def leader(request: pytest.FixtureRequest) -> Iterator[tuple[str, Any]]:
    """``(protocol name, hooked consumer)`` whose cluster knows topic ``t`` with 6 partitions."""
    name = str(request.param)
    consumer = make_consumer([ASSIGNORS[name]])
    install_hooks(consumer)
    consumer.subscribe(["t"])
    consumer._coordinator._cluster._partitions["t"] = {p: None for p in range(6)}
    yield name, consumer
    consumer.close()


def perform(consumer: Any, protocol: str, members: list[tuple[str, bytes]]) -> dict[str, Any]:
    """The coordinator's leader step, as its join loop calls it."""
    coordinator = consumer._coordinator
    return dict(coordinator._perform_assignment(members[0][0], protocol, members))


def ours(caplog: pytest.LogCaptureFixture, level: int) -> list[str]:
    """Messages of the plugin's loggers at exactly ``level`` (the client logs its own)."""
    return [
        r.getMessage()
        for r in caplog.records
        if r.name.startswith("kafka_sticky_plugin") and r.levelno == level
    ]


def plan_of(result: dict[str, Any]) -> dict[str, list[tuple[str, int]]]:
    return {m: list(decode_assignment(bytes(v)).partitions) for m, v in result.items()}


def good(assignor: Any) -> bytes:
    return bytes(assignor.subscription_bytes(["t"]))


def test_garbage_metadata_member_gets_nothing_and_the_rest_is_assigned(
    leader: tuple[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    """Undecodable JoinGroup metadata: no exception, one error line naming the member, an empty
    assignment for it, every partition assigned to the readable members."""
    protocol, consumer = leader
    members = [
        ("a", good(ASSIGNORS[protocol]())),
        ("broken", GARBAGE),
        ("b", good(ASSIGNORS[protocol]())),
    ]
    with caplog.at_level(logging.WARNING, logger="kafka_sticky_plugin"):
        plan = plan_of(perform(consumer, protocol, members))
    errors = ours(caplog, logging.ERROR)
    assert len(errors) == 1 and "broken" in errors[0], errors
    assert plan["broken"] == []
    assert sorted(plan["a"] + plan["b"]) == [("t", p) for p in range(6)]
    assert sorted(map(len, (plan["a"], plan["b"]))) == [3, 3]


def test_unreadable_user_data_means_no_history_on_the_hooks_path(
    leader: tuple[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    """A readable subscription with garbage user data: one warning naming the member, which is
    assigned as a member with no history."""
    protocol, consumer = leader
    odd = encode_subscription(subscription_of(["t"], version=0, user_data=b"\x00\x01\x02"))
    members = [("a", good(ASSIGNORS[protocol]())), ("odd", odd)]
    with caplog.at_level(logging.WARNING, logger="kafka_sticky_plugin"):
        plan = plan_of(perform(consumer, protocol, members))
    warnings = ours(caplog, logging.WARNING)
    assert len(warnings) == 1 and "odd" in warnings[0], warnings
    assert sorted(map(len, plan.values())) == [3, 3]


def test_only_broken_members_get_empty_assignments_without_raising(
    leader: tuple[str, Any],
) -> None:
    """Every member unreadable: every member gets an empty assignment, nothing raises."""
    protocol, consumer = leader
    plan = plan_of(perform(consumer, protocol, [("x", GARBAGE), ("y", b"")]))
    assert plan == {"x": [], "y": []}


def test_no_collection_scans_the_decoded_group(
    leader: tuple[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The leader's round runs in one pause of the cyclic collector, from the decode to the
    plan, and frees the decoded group inside it: no collection starts while the group is
    alive (:class:`gc_watch.CollectionWatch`: any allocation after a decode that left the
    collector running would start one)."""
    name, consumer = leader
    consumer._coordinator._cluster._partitions["t"] = {p: None for p in range(300)}
    read = BoundAssignor.read
    members = [
        (
            f"m{i:03}",
            encode_subscription(
                subscription_of(["t"], owned_partitions=[("t", p) for p in range(i, 300, 100)])
            ),
        )
        for i in range(100)
    ]
    with CollectionWatch() as watch:
        monkeypatch.setattr(
            BoundAssignor, "read", lambda bound, metas: watch.track(read(bound, metas))
        )
        result = perform(consumer, name, members)
    assert watch.tracked and not watch.alive()
    assert watch.scanned == []
    assert sum(len(partitions) for partitions in plan_of(result).values()) == 300
