"""The ``[topic [partition]]`` array shared by every message of the consumer protocol.

Invariants: :func:`write_topic_partitions` writes topics in sorted order, each with its
distinct partitions sorted, so two equal sets always encode to the same bytes (a reordering
alone must never look like a change). :func:`read_topic_partitions` returns the pairs in
wire order, flattened, without de-duplicating (that is the reader's policy, not the wire's).
"""

from __future__ import annotations

from collections.abc import Iterable

from ._wire import Reader, Writer

__all__ = [
    "TopicPartitionPair",
    "group_by_topic",
    "read_topic_partitions",
    "write_topic_partitions",
]

TopicPartitionPair = tuple[str, int]


def group_by_topic(pairs: Iterable[TopicPartitionPair]) -> list[tuple[str, list[int]]]:
    """Sorted topics, each with its sorted distinct partitions.

    Linear when ``pairs`` is already strictly increasing (the engine's plans are); falls back
    to a set-and-sort otherwise.
    """
    items = pairs if isinstance(pairs, (list, tuple)) else list(pairs)
    grouped: list[tuple[str, list[int]]] = []
    previous: TopicPartitionPair | None = None
    current: list[int] = []
    for pair in items:
        if previous is not None and not previous < pair:
            return _group_unsorted(items)
        topic, partition = pair
        if previous is None or topic != previous[0]:
            current = []
            grouped.append((topic, current))
        current.append(partition)
        previous = pair
    return grouped


def _group_unsorted(pairs: Iterable[TopicPartitionPair]) -> list[tuple[str, list[int]]]:
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
    out: list[TopicPartitionPair] = []
    extend = out.extend
    for topic, partitions in reader.keyed_int32_arrays(expected):
        extend([(topic, partition) for partition in partitions])
    return out
