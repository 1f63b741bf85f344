"""Move a group's committed offsets to a new group id: the broker-independent migration path.

librdkafka cannot list eager and cooperative strategies together, so a group cannot switch
from ``range`` to ``cooperative-sticky`` member by member. Where the group's protocol can only
change while the group is empty, or not at all (the embedded Tansu broker fixes it per group id
forever), the safe switch is: stop the old members, copy their committed offsets to a new
group id with :func:`copy_committed_offsets`, start the new members under that id.

Invariant: the target group ends with exactly the source group's committed offsets for the
partitions that had one; nothing is written when the target already has committed offsets
(that would move a live group backwards), and the source group is only read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import confluent_kafka

from ...errors import ConfigurationError
from .listener import TopicPartition

__all__ = ["copy_committed_offsets"]

# Properties that would make the helper consumers act as members of a group; they only read
# and write offsets and never join.
_MEMBER_ONLY_PROPERTIES = ("group.instance.id", "group.protocol", "partition.assignment.strategy")


def copy_committed_offsets(
    config: Mapping[str, Any],
    source_group: str,
    target_group: str,
    topics: Iterable[str],
    *,
    timeout: float = 10.0,
    allow_empty: bool = False,
) -> dict[TopicPartition, int]:
    """Copy ``source_group``'s committed offsets for ``topics`` to ``target_group``.

    ``config`` gives the connection (``bootstrap.servers``, security settings); its group
    settings are ignored. Stop the source group's members first, or their later commits are
    not carried over. Returns the copied offsets (partitions without one are left out).
    Raises :class:`ConfigurationError` if the groups are the same, if the source group has no
    committed offset for any partition of ``topics`` (a misspelt group id, or the wrong topics:
    the new group would otherwise start at ``auto.offset.reset``; pass ``allow_empty=True`` when
    an empty copy is really meant), or if the target already has committed offsets for any of
    these partitions.
    """
    if not source_group or not target_group or source_group == target_group:
        raise ConfigurationError(
            f"copy_committed_offsets needs two different group ids, got {source_group!r} and "
            f"{target_group!r}"
        )
    topic_list = sorted({topics} if isinstance(topics, str) else set(topics))
    source = confluent_kafka.Consumer(_helper_config(config, source_group))
    try:
        partitions = _partitions(source, topic_list, timeout)
        committed = source.committed(partitions, timeout=timeout)
    finally:
        source.close()
    offsets = {
        TopicPartition(tp.topic, tp.partition): tp.offset for tp in committed if tp.offset >= 0
    }
    if not offsets and not allow_empty:
        raise ConfigurationError(
            f"group {source_group!r} has no committed offsets for {', '.join(topic_list)}: "
            "nothing to copy, and the new group would start at auto.offset.reset. Check the "
            "group id and topics (and that the old members committed), or pass allow_empty=True "
            "if an empty copy is intended"
        )
    target = confluent_kafka.Consumer(_helper_config(config, target_group))
    try:
        existing = [tp for tp in target.committed(partitions, timeout=timeout) if tp.offset >= 0]
        if existing:
            raise ConfigurationError(
                f"group {target_group!r} already has committed offsets for "
                f"{', '.join(f'{tp.topic}[{tp.partition}]' for tp in existing)}; copying would "
                "overwrite them - choose an unused group id"
            )
        if offsets:
            result = target.commit(
                offsets=[
                    confluent_kafka.TopicPartition(tp.topic, tp.partition, offset)
                    for tp, offset in sorted(offsets.items())
                ],
                asynchronous=False,
            )
            for tp in result or []:
                if tp.error is not None:
                    raise confluent_kafka.KafkaException(tp.error)
    finally:
        target.close()
    return offsets


def _helper_config(config: Mapping[str, Any], group_id: str) -> dict[str, Any]:
    helper = {k: v for k, v in config.items() if k not in _MEMBER_ONLY_PROPERTIES}
    helper["group.id"] = group_id
    helper["enable.auto.commit"] = False
    return helper


def _partitions(
    consumer: confluent_kafka.Consumer, topics: list[str], timeout: float
) -> list[confluent_kafka.TopicPartition]:
    partitions: list[confluent_kafka.TopicPartition] = []
    for topic in topics:
        metadata = consumer.list_topics(topic, timeout=timeout).topics.get(topic)
        if metadata is None or metadata.error is not None or not metadata.partitions:
            raise ConfigurationError(f"topic {topic!r} does not exist or has no partitions")
        partitions.extend(
            confluent_kafka.TopicPartition(topic, p) for p in sorted(metadata.partitions)
        )
    return partitions
