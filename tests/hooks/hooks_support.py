"""Shared helpers of the hooks' unit tests: real ``KafkaConsumer`` objects, no broker.

Every consumer is built with an explicit ``api_version`` so that no client version tries to
reach the (unused, closed) bootstrap address, and with auto-commit off so that no rebalance
step needs a broker. The helpers drive the coordinator's own rebalance entry points (the
instance attributes the hooks patch, or the class methods when no hooks are installed) on
every supported client version: sync on 2.x, through the client's ``_net`` loop on 3.0.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import kafka
from kafka import ConsumerRebalanceListener, KafkaConsumer
from kafka.structs import TopicPartition

from kafka_sticky_plugin.adapters.kafka_python.hooks.versions import detect_client
from kafka_sticky_plugin.codec.consumer_protocol import Assignment, encode_assignment

CLIENT = detect_client()
IS_V3 = CLIENT.family == "v3"
CLOSED_BOOTSTRAP = "127.0.0.1:9"  # discard port: nothing listens, nothing is contacted


def make_consumer(strategy: Iterable[Any], **overrides: Any) -> Any:
    """A consumer that never talks to a broker (explicit api_version, no auto-commit)."""
    config: dict[str, Any] = {
        "bootstrap_servers": CLOSED_BOOTSTRAP,
        "group_id": "unit-hooks",
        "api_version": (2, 5, 0),
        "enable_auto_commit": False,
        "partition_assignment_strategy": list(strategy),
    }
    config.update(overrides)
    return KafkaConsumer(**config)


def tps(*pairs: tuple[str, int]) -> set[Any]:
    return {TopicPartition(topic, partition) for topic, partition in pairs}


def assignment_bytes(pairs: Iterable[tuple[str, int]]) -> bytes:
    return encode_assignment(Assignment(version=3, partitions=tuple(sorted(pairs))))


def join_complete(
    consumer: Any, generation: int, protocol: str, pairs: Iterable[tuple[str, int]]
) -> None:
    """Run the coordinator's post-SyncGroup step with this member's assignment.

    Mirrors the join loop around it: JoinGroup metadata was built (``group_protocols``) and
    the rejoin flag cleared before the assignment is applied.
    """
    coordinator = consumer._coordinator
    data = assignment_bytes(pairs)
    coordinator.group_protocols()
    coordinator.rejoin_needed = False
    if IS_V3:
        coordinator._net.run(
            coordinator._on_join_complete_async, generation, "member-1", protocol, data
        )
    else:
        coordinator._on_join_complete(generation, "member-1", protocol, data)


def sent_subscription(consumer: Any, protocol: str) -> Any:
    """The subscription the hooked consumer's next JoinGroup sends for ``protocol`` (its
    subscribed topics, the hooks' join state), decoded."""
    from kafka_sticky_plugin.codec import decode_subscription

    return decode_subscription(bytes(dict(consumer._coordinator.group_protocols())[protocol]))


def join_prepare(consumer: Any, generation: int, member_id: str) -> None:
    """Run the coordinator's pre-JoinGroup step for the given generation and member id."""
    coordinator = consumer._coordinator
    if IS_V3:
        coordinator._net.run(coordinator._on_join_prepare_async, generation, member_id)
    else:
        coordinator._on_join_prepare(generation, member_id)


class RevokeOnlyListener(ConsumerRebalanceListener):  # type: ignore[misc]
    """A pre-KIP-429 listener: records revoked/assigned, defines no ``on_partitions_lost``.

    On 3.0 the client's base class supplies one that delegates to ``on_partitions_revoked``;
    on 2.x the base class has none, so the hooks must fall back themselves.
    """

    def __init__(self, consumer: Any) -> None:
        self.consumer = consumer
        self.calls: list[tuple[str, set[Any], set[Any]]] = []

    def _record(self, kind: str, partitions: Any) -> None:
        self.calls.append((kind, set(partitions), set(self.consumer._subscription.assignment)))

    def on_partitions_revoked(self, revoked: Any) -> None:
        self._record("revoked", revoked)

    def on_partitions_assigned(self, assigned: Any) -> None:
        self._record("assigned", assigned)

    def kinds(self) -> list[str]:
        return [kind for kind, _parts, _held in self.calls]


class RecordingListener(RevokeOnlyListener):
    """Records every callback, ``on_partitions_lost`` included, with the assignment held."""

    def on_partitions_lost(self, lost: Any) -> None:
        self._record("lost", lost)


def kafka_version() -> str:
    return str(kafka.__version__)


def held_position(consumer: Any, partition: Any) -> int | None:
    """The fetch position kept in the subscription state (no broker round trip)."""
    position = consumer._subscription.assignment[partition].position
    return None if position is None else int(getattr(position, "offset", position))
