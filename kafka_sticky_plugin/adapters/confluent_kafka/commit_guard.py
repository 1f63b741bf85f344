"""The commit guard on a confluent-kafka consumer built by
:func:`~kafka_sticky_plugin.confluent.create_consumer`. The rule and the modes:
:mod:`kafka_sticky_plugin.assignor.commit_guard`.

Ownership is librdkafka's current assignment (``consumer.assignment()``; the listener
bridge removes revoked partitions when ``on_partitions_revoked`` returns) minus the
partitions being lost (from the moment the bridge hears ``on_lost``: see :func:`.ownership.losing`).
``commit(offsets=...)``, ``commit(message=...)`` and ``commit()`` (the positions of the
assignment) are checked when called, before librdkafka queues the request.

librdkafka's own auto-commit (``enable.auto.commit``) runs inside librdkafka and commits
only its current assignment, from which a revoked partition has left when
``on_partitions_revoked`` returned; it is not routed through this guard.
"""

from __future__ import annotations

from typing import Any

import confluent_kafka

from ...assignor.commit_guard import CommitGuard, CommitVerdict, GuardMode, check_mode
from ...errors import ConfigurationError
from .consumer import CheckedConsumer
from .ownership import LOSING_ATTRIBUTE

__all__ = ["guard_commits"]

_GUARD_ATTRIBUTE = "_kafka_sticky_plugin_commit_guard"


def _pairs(partitions: Any) -> set[tuple[str, int]]:
    return {(str(tp.topic), int(tp.partition)) for tp in partitions or ()}


def guard_commits(consumer: CheckedConsumer, mode: GuardMode = "refuse") -> CommitGuard:
    """Refuse commits for partitions ``consumer`` does not own at that moment. ``mode``:
    ``"refuse"`` (commit the owned ones, then raise
    :class:`~kafka_sticky_plugin.errors.CommitRefusedError`) or ``"drop"`` (commit the owned
    ones, one WARNING line naming the rest). Only a consumer from ``create_consumer``
    (a plain ``confluent_kafka.Consumer`` cannot carry the guard: ``ConfigurationError``).
    Idempotent: a second call returns the first guard with its mode set to ``mode``."""
    checked = check_mode(mode)
    if not isinstance(consumer, CheckedConsumer):
        raise ConfigurationError(
            "guard_commits needs a consumer built by kafka_sticky_plugin.confluent."
            f"create_consumer(config), not a plain {type(consumer).__name__}"
        )
    existing = vars(consumer).get(_GUARD_ATTRIBUTE)
    if isinstance(existing, CommitGuard):
        existing.mode = checked
        return existing
    losing_now: set[tuple[str, int]] = set()
    guard = CommitGuard(
        group_id=consumer.group_id,
        mode=checked,
        owned=lambda: _pairs(consumer.assignment()) - losing_now,
        in_generation=lambda: not losing_now,
    )
    vars(consumer)[LOSING_ATTRIBUTE] = losing_now
    vars(consumer)[_GUARD_ATTRIBUTE] = guard
    unguarded = confluent_kafka.Consumer.commit

    def commit(*args: Any, **kwargs: Any) -> Any:
        kwargs.update(zip(("message", "offsets", "asynchronous"), args, strict=False))
        kwargs = {name: value for name, value in kwargs.items() if value is not None}
        offsets = _named_offsets(consumer, **kwargs)
        if offsets is None:  # commit() of the assignment while nothing is being lost
            return unguarded(consumer, **kwargs)
        verdict: CommitVerdict[tuple[str, int], Any] = guard.split(offsets)
        result = None
        if verdict.allowed:
            kwargs.pop("message", None)
            kwargs["offsets"] = list(verdict.allowed.values())
            result = unguarded(consumer, **kwargs)
        guard.settle(verdict)
        return result

    vars(consumer)["commit"] = commit
    return guard


def _named_offsets(
    consumer: CheckedConsumer, message: Any = None, offsets: Any = None, **_: Any
) -> dict[tuple[str, int], Any] | None:
    """The partitions a ``commit`` call names, each with the ``TopicPartition`` to commit;
    ``None`` for ``commit()`` while no partition is being lost (nothing to check)."""
    if message is not None:
        tp = confluent_kafka.TopicPartition(
            message.topic(), message.partition(), message.offset() + 1
        )
        return {(tp.topic, tp.partition): tp}
    if offsets is not None:
        return {(tp.topic, tp.partition): tp for tp in offsets}
    if not vars(consumer).get(LOSING_ATTRIBUTE):
        return None
    positions = consumer.position(consumer.assignment())
    return {(tp.topic, tp.partition): tp for tp in positions if tp.offset >= 0}
