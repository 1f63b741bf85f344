"""Two hooked kafka-python members of one cooperative-sticky group, polled from one thread,
and what the group has committed (read through a fresh consumer's ``committed()``, which
joins nothing): the commit guard tests' shared pieces."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from kafka import ConsumerRebalanceListener, KafkaConsumer, TopicPartition
from kafka.structs import OffsetAndMetadata

from kafka_sticky_plugin.kafka_python import (
    CooperativeStickyAssignor,
    guard_commits,
    install_hooks,
)


class LostRecorder(ConsumerRebalanceListener):  # type: ignore[misc]
    """A rebalance listener that records calls and, on loss, tries a commit (a zombie) whose
    outcome (a response or an exception) lands in ``lost_commit_error``."""

    def __init__(self) -> None:
        self.consumer: KafkaConsumer | None = None
        self.lost_commit_error: object = None
        self.calls: list[str] = []

    def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        self.calls.append("revoked")

    def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        self.calls.append("assigned")

    def on_partitions_lost(self, lost: set[TopicPartition]) -> None:
        self.calls.append("lost")
        assert self.consumer is not None
        # 3.0 runs sync listeners on its IO thread, where only commit_async may be called
        self.consumer.commit_async(
            {tp: OffsetAndMetadata(999, "", -1) for tp in lost},
            callback=lambda _offsets, outcome: setattr(self, "lost_commit_error", outcome),
        )


class RevokeCommitter(ConsumerRebalanceListener):  # type: ignore[misc]
    """Commits ``offset`` for the revoked partitions from ``on_partitions_revoked`` with
    ``commit_async`` (the commit 3.0 allows in a sync listener): legitimate, must land."""

    def __init__(self, offset: int) -> None:
        self.consumer: KafkaConsumer | None = None
        self.offset = offset
        self.outcomes: list[object] = []

    def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        if revoked and self.consumer is not None:
            self.consumer.commit_async(
                offsets(revoked, self.offset), callback=lambda _o, r: self.outcomes.append(r)
            )

    def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        pass


def member(
    bootstrap: str,
    group: str,
    topic: str,
    mode: str = "refuse",
    listener: Any = None,
    **config: Any,
) -> KafkaConsumer:
    """A guarded member, subscribed (it joins at its first poll)."""
    settings: dict[str, Any] = {
        "bootstrap_servers": bootstrap,
        "group_id": group,
        "enable_auto_commit": False,
        "partition_assignment_strategy": [CooperativeStickyAssignor],
        "session_timeout_ms": 6000,
        "heartbeat_interval_ms": 500,
    }
    settings.update(config)
    consumer = KafkaConsumer(**settings)
    if listener is not None:
        listener.consumer = consumer
        consumer.subscribe([topic], listener=listener)
    else:
        consumer.subscribe([topic])
    install_hooks(consumer)
    guard_commits(consumer, mode)  # type: ignore[arg-type]
    return consumer


def stable(consumer: KafkaConsumer) -> bool:
    """The member is in a generation and wants no rejoin (no rebalance of its own pending)."""
    coordinator = consumer._coordinator
    return coordinator.generation_if_stable() is not None and not coordinator.need_rejoin()


def poll_until(consumers: Iterable[KafkaConsumer], done: Any, timeout_s: float = 45.0) -> None:
    """Poll every consumer in turn until ``done()`` holds with every member stable
    (AssertionError naming the assignments if not)."""
    members = list(consumers)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for consumer in members:
            consumer.poll(timeout_ms=100)
        if done() and all(stable(consumer) for consumer in members):
            return
    raise AssertionError(f"group did not settle: {[sorted(c.assignment()) for c in members]}")


def owned(consumer: KafkaConsumer) -> set[TopicPartition]:
    return set(consumer.assignment())


def committed(bootstrap: str, group: str, partitions: Iterable[TopicPartition]) -> dict[int, Any]:
    """The group's committed offset per partition number (``None``: nothing committed)."""
    reader = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    try:
        return {tp.partition: reader.committed(tp) for tp in partitions}
    finally:
        reader.close(autocommit=False)


def offsets(partitions: Iterable[TopicPartition], offset: int) -> dict[TopicPartition, Any]:
    return {tp: OffsetAndMetadata(offset, "", -1) for tp in partitions}
