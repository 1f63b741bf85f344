"""The ``[topic [partition]]`` array shared by every message of the consumer protocol.

Invariants: :func:`write_topic_partitions` writes topics in sorted order, each with its
distinct partitions sorted, so two equal sets always encode to the same bytes (a reordering
alone must never look like a change). :func:`read_topic_partitions` returns the pairs in
wire order, flattened, without de-duplicating (that is the reader's policy, not the wire's).
"""

from __future__ import annotations

from collections.abc import Iterable

from ._wire import MIN_INT32_SIZE, MIN_STRING_SIZE, Reader, Writer

__all__ = [
    "TopicPartitionPair",
    "group_by_topic",
    "read_topic_partitions",
    "write_topic_partitions",
]

TopicPartitionPair = tuple[str, int]

#: The smallest ``topic [partition]`` element: an empty string and an empty array.
_MIN_TOPIC_ELEMENT = MIN_STRING_SIZE + MIN_INT32_SIZE


def group_by_topic(pairs: Iterable[TopicPartitionPair]) -> list[tuple[str, list[int]]]:
    """Sorted topics, each with its sorted distinct partitions."""
    by_topic: dict[str, set[int]] = {}
    for topic, partition in pairs:
        by_topic.setdefault(topic, set()).add(partition)
    return [(topic, sorted(by_topic[topic])) for topic in sorted(by_topic)]


def write_topic_partitions(
    writer: Writer, pairs: Iterable[TopicPartitionPair], expected: str
) -> None:
    """Write ``pairs`` grouped by topic, sorted (see the module invariants)."""
    grouped = group_by_topic(pairs)
    writer.array_count(len(grouped), expected)
    for topic, partitions in grouped:
        writer.string(topic, f"{expected} topic")
        writer.int32_array(partitions, f"{expected} partitions of {topic!r}")


def read_topic_partitions(reader: Reader, expected: str) -> list[TopicPartitionPair]:
    """Read a ``[topic [partition]]`` array as flat ``(topic, partition)`` pairs."""
    count = reader.array_count(_MIN_TOPIC_ELEMENT, expected)
    out: list[TopicPartitionPair] = []
    for _ in range(count):
        topic = reader.string(f"{expected} topic")
        out.extend((topic, partition) for partition in reader.int32_array(f"{expected} partitions"))
    return out
