"""What the kafka-python and aiokafka member loops share: the two clients take the same
consumer keywords (:func:`consumer_settings`) and ``subscribe`` call
(:func:`subscribe_as_configured`), name partitions by ``TopicPartition`` objects and hand
over each poll as ``{TopicPartition: [record, ...]}``; :class:`MemberBook` keeps a member's
bookkeeping of what it owns and where it has read, and reports it.

:mod:`.kafka_python_member` and :mod:`.aiokafka_member` build on this module (and on
:mod:`.member_config`, which every client's loop shares); :mod:`.confluent_member` does not
(librdkafka's settings, partitions and messages have other shapes).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from .events import Delivery, Partition
from .member_config import EventSink, MemberConfig, decode_sequence, forget_moved, member_event

__all__ = [
    "MemberBook",
    "consumer_settings",
    "offsets_in_order",
    "partitions_of",
    "record_deliveries",
    "subscribe_as_configured",
]


class MemberBook:
    """One member's bookkeeping and the events that report it, for a loop whose client names
    partitions by ``TopicPartition`` objects (kafka-python, aiokafka).

    Invariants: ``positions`` (keyed by the client's ``TopicPartition``) are the last
    delivered offset + 1, moved only by :meth:`polled`, and forgotten when a partition is
    revoked, assigned or lost (:meth:`moved`), so that a partition that comes back starts from
    the committed offset; ``owned`` (``(topic, partition)`` pairs) changes only in
    :meth:`moved`, which the rebalance callbacks call. Every event :meth:`report` writes
    carries ``owned_after`` and ``generation()`` at that moment (-1: none or unknown).
    """

    def __init__(
        self, config: MemberConfig, sink: EventSink, generation: Callable[[], int]
    ) -> None:
        self.config = config
        self.sink = sink
        self.generation = generation
        self.owned: set[Partition] = set()
        self.positions: dict[Any, int] = {}
        self._last_generation = -1

    def event(self, kind: str, **extra: Any) -> None:
        """Report an event of this member incarnation (:func:`~.member_config.member_event`)."""
        self.sink.add(member_event(self.config, kind, **extra))

    def report(self, kind: str, parts: tuple[Partition, ...], **extra: Any) -> None:
        """Report an event about ``parts``, with what the member owns after it and its
        generation."""
        self.event(
            kind,
            partitions=parts,
            owned_after=tuple(sorted(self.owned)),
            generation=self.generation(),
            **extra,
        )

    def moved(self, kind: str, tps: Iterable[Any], **extra: Any) -> None:
        """A rebalance callback of ``kind`` (``assigned``, ``revoked`` or ``lost``) moved the
        ``TopicPartition`` objects ``tps``: :func:`~.member_config.forget_moved`, then one
        event."""
        keys = list(tps)
        parts = partitions_of(keys)
        forget_moved(kind, keys, parts, self.positions, self.owned)
        self.report(kind, parts, **extra)

    def positions_of(self, tps: Iterable[Any]) -> dict[Any, int]:
        """The positions of those of ``tps`` the member has read from (what it commits)."""
        positions = self.positions
        return {tp: off for tp in tps if (off := positions.get(tp)) is not None}

    def committed(self, chosen: Mapping[Any, int], failure: str | None = None) -> None:
        """Report a commit of ``chosen`` (``{TopicPartition: offset}``): ``committed`` with
        the offsets, or ``commit_failed`` with ``failure`` as its detail."""
        parts, offsets = offsets_in_order(chosen)
        if failure is None:
            self.report("committed", parts, offsets=offsets)
        else:
            self.report("commit_failed", parts, detail=failure)

    def polled(self, batches: Mapping[Any, Sequence[Any]], now: float) -> None:
        """After each poll: its records reported and ``positions`` moved past them
        (:func:`record_deliveries`), and a ``generation`` event when the client is in a
        generation it was not in at the last poll."""
        record_deliveries(self.config, self.sink, batches, self.positions, now)
        current = self.generation()
        if current != self._last_generation and current >= 0:
            self._last_generation = current
            self.event("generation", generation=current, owned_after=tuple(sorted(self.owned)))


def consumer_settings(config: MemberConfig) -> dict[str, Any]:
    """The consumer keyword arguments kafka-python's ``KafkaConsumer`` and aiokafka's
    ``AIOKafkaConsumer`` share (same names in both; the assignors are each client's own):
    manual commits, earliest reset, the configured timeouts and rack."""
    return {
        "bootstrap_servers": config.bootstrap,
        "group_id": config.group_id,
        "client_id": config.client_id or f"{config.member}-{config.incarnation}",
        "enable_auto_commit": False,
        "auto_offset_reset": "earliest",
        "session_timeout_ms": config.session_timeout_ms,
        "heartbeat_interval_ms": config.heartbeat_interval_ms,
        "max_poll_interval_ms": config.max_poll_interval_ms,
        "metadata_max_age_ms": config.metadata_max_age_ms,
        **({"client_rack": config.client_rack} if config.client_rack is not None else {}),
        # Only when set: kafka-python 2.x has no static membership (nor the keyword).
        **(
            {"group_instance_id": config.group_instance_id}
            if config.group_instance_id is not None
            else {}
        ),
    }


def subscribe_as_configured(consumer: Any, config: MemberConfig, listener: Any) -> None:
    """``subscribe`` a kafka-python or aiokafka consumer (the same call in both) to the
    configured topic pattern, else to the configured topics."""
    if config.topic_pattern is not None:
        consumer.subscribe(pattern=config.topic_pattern, listener=listener)
    else:
        consumer.subscribe(list(config.topics), listener=listener)


def record_deliveries(
    config: MemberConfig,
    sink: EventSink,
    batches: Mapping[Any, Sequence[Any]],
    positions: dict[Any, int],
    now: float,
) -> None:
    """Report every record of one poll (``{TopicPartition: [record, ...]}``, as kafka-python
    and aiokafka return them) as a :class:`Delivery`, and move ``positions`` past each."""
    batch: list[Delivery] = []
    for tp, records in batches.items():
        for record in records:
            batch.append(
                Delivery(
                    t=now,
                    member=config.member,
                    incarnation=config.incarnation,
                    topic=tp.topic,
                    partition=tp.partition,
                    offset=record.offset,
                    sequence=decode_sequence(record.value),
                )
            )
        if records:
            positions[tp] = records[-1].offset + 1
    sink.add_deliveries(batch)


def partitions_of(tps: Iterable[Any]) -> tuple[Partition, ...]:
    """The sorted ``(topic, partition)`` pairs of a client's ``TopicPartition`` objects."""
    return tuple(sorted((tp.topic, int(tp.partition)) for tp in tps))


def offsets_in_order(chosen: Mapping[Any, int]) -> tuple[tuple[Partition, ...], tuple[int, ...]]:
    """The partitions of ``chosen`` (``{TopicPartition: offset}``) in order, and their offsets
    in the same order: what a ``committed`` event reports."""
    by_partition = {(tp.topic, int(tp.partition)): off for tp, off in chosen.items()}
    parts = tuple(sorted(by_partition))
    return parts, tuple(by_partition[p] for p in parts)
