"""One consumer-group member on confluent-kafka (librdkafka), recording like
:mod:`.kafka_python_member`.

librdkafka runs its own C assignors, so a confluent member's ``assignors`` are librdkafka
strategy names (``cooperative-sticky``, ``range``, ``roundrobin``; eager ``sticky`` does not
exist there and is refused). The listener is this package's
:func:`kafka_sticky_plugin.confluent.subscribe` bridge; the member commits its own tracked
positions (last delivered offset + 1) for revoked partitions inside
``on_partitions_revoked`` (commit-on-revoke, synchronous), periodically from the poll loop
(asynchronous: a synchronous commit blocks the loop while no coordinator is known), and never
for lost partitions, like the kafka-python member.

librdkafka returns its errors from ``consume()`` as messages; the loop passes over them
(librdkafka retries them itself) except a fatal one (``_FATAL``: the consumer can no longer
be used, e.g. a static member fenced), which ends the loop as an error, as an exception out
of ``poll()`` ends the other clients' loops. Before, the member polled its dead consumer on,
alive and owning nothing (the confluent gauntlet's "never stable" finding of 5 December 2026;
:mod:`kafka_sticky_plugin.adapters.confluent_kafka.fencing`).

librdkafka does not expose the group generation id to Python: every event of a confluent
member carries generation -1 and it reports no ``generation`` events
(:meth:`~.runner.ConsumerGroupRunner.wait_stable` leaves confluent members out of its
same-generation test and judges them by their assignment alone).

Thread and child-process members run this loop through :mod:`.member_process` (the one place
that picks a client's loop), like every other Python client.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from typing import Any

from ..client_security import confluent_settings
from .events import Delivery, Partition
from .member_config import (
    LIBRDKAFKA_DEBUG,
    LIBRDKAFKA_LOGGER,
    EventSink,
    LoopControl,
    MemberConfig,
    decode_sequence,
    forget_moved,
    member_event,
    reporting,
)
from .metrics_events import MetricsReporter

__all__ = ["confluent_consume_loop"]

_STRATEGIES = {"cooperative-sticky", "range", "roundrobin"}


def _strategy(assignors: Iterable[str]) -> str:
    names = list(assignors)
    unknown = [n for n in names if n not in _STRATEGIES]
    if unknown:
        raise ValueError(f"librdkafka has no assignor {unknown}; it has {sorted(_STRATEGIES)}")
    return ",".join(names)


def _protocol_settings(config: MemberConfig) -> dict[str, Any]:
    """The group-protocol part of the configuration: the classic protocol's strategy list and
    timeouts, or KIP-848's ``group.protocol=consumer`` with the broker assignor asked for
    (librdkafka refuses the classic-only settings there: the broker owns them)."""
    if config.group_protocol == "consumer":
        settings: dict[str, Any] = {"group.protocol": "consumer"}
        if config.assignors and config.assignors[0] in ("uniform", "range"):
            settings["group.remote.assignor"] = config.assignors[0]
        return settings
    if config.group_protocol != "classic":
        raise ValueError(f"unknown group protocol {config.group_protocol!r}")
    return {
        "partition.assignment.strategy": _strategy(config.assignors),
        "session.timeout.ms": config.session_timeout_ms,
        "heartbeat.interval.ms": config.heartbeat_interval_ms,
    }


def _log_settings(config: MemberConfig) -> dict[str, Any]:
    """librdkafka's logging: errors only (to stderr), or with
    :attr:`~.member_config.MemberConfig.debug_logs` every line of
    :data:`~.member_config.LIBRDKAFKA_DEBUG` to the logger
    :data:`~.member_config.LIBRDKAFKA_LOGGER`."""
    if not config.debug_logs:
        return {"log_level": 3}
    return {
        "log_level": 7,
        "debug": LIBRDKAFKA_DEBUG,
        "logger": logging.getLogger(LIBRDKAFKA_LOGGER),
    }


def confluent_consume_loop(config: MemberConfig, sink: EventSink, control: LoopControl) -> None:
    """Run one confluent member as ``control`` says (:class:`~.member_config.LoopControl`);
    then close it (leaving the group)."""
    import confluent_kafka

    from ..confluent import create_consumer, subscribe

    owned: set[Partition] = set()
    positions: dict[Partition, int] = {}

    def event(kind: str, parts: Iterable[Partition] = (), **extra: Any) -> None:
        sink.add(member_event(config, kind, partitions=tuple(sorted(parts)), **extra))

    def committed_async(error: Any, partitions: list[Any]) -> None:
        """librdkafka's answer to a periodic asynchronous commit (served from ``consume``)."""
        failed = [tp for tp in partitions if tp.error is not None]
        done = [tp for tp in partitions if tp.error is None and tp.offset >= 0]
        if error is not None or failed:
            bad = partitions if error is not None else failed
            event("commit_failed", {(tp.topic, tp.partition) for tp in bad}, detail=repr(error))
        if error is None and done:
            ordered = sorted(done, key=lambda tp: (tp.topic, tp.partition))
            parts = [(tp.topic, tp.partition) for tp in ordered]
            event("committed", parts, offsets=tuple(tp.offset for tp in ordered))

    consumer = create_consumer(
        {
            "bootstrap.servers": config.bootstrap,
            "group.id": config.group_id,
            "client.id": config.client_id or f"{config.member}-{config.incarnation}",
            **_protocol_settings(config),
            "max.poll.interval.ms": max(config.max_poll_interval_ms, config.session_timeout_ms),
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "topic.metadata.refresh.interval.ms": 5000,
            **_log_settings(config),
            **confluent_settings(config.security),
            **({"group.instance.id": config.group_instance_id} if config.group_instance_id else {}),
            **({"client.rack": config.client_rack} if config.client_rack is not None else {}),
            "on_commit": committed_async,
        }
    )

    def commit(chosen: dict[Partition, int], asynchronous: bool = False) -> None:
        """Synchronously (on revoke, at close), or asynchronously (the periodic commit: a
        synchronous commit waits for a group coordinator without bound, so during a
        coordinator move the loop stopped polling past ``max.poll.interval.ms`` and
        librdkafka left the group; the answer then comes to ``committed_async``)."""
        if not chosen:
            return
        parts = tuple(sorted(chosen))
        offsets = [confluent_kafka.TopicPartition(t, p, chosen[(t, p)]) for t, p in parts]
        if asynchronous:
            consumer.commit(offsets=offsets, asynchronous=True)
            return
        try:
            done = consumer.commit(offsets=offsets, asynchronous=False)
            for tp in done or []:
                if tp.error is not None:
                    raise confluent_kafka.KafkaException(tp.error)
        except confluent_kafka.KafkaException as exc:  # mid-rebalance: reported, retried later
            event("commit_failed", parts, detail=repr(exc))
        else:
            event("committed", parts, offsets=tuple(chosen[p] for p in parts))

    class Listener:
        """Commit-on-revoke listener that reports every callback."""

        def on_partitions_revoked(self, revoked: set[Any]) -> None:
            parts = {(tp.topic, tp.partition) for tp in revoked}
            commit({p: positions[p] for p in parts if p in positions})
            _changed("revoked", parts)

        def on_partitions_assigned(self, assigned: set[Any]) -> None:
            _changed("assigned", {(tp.topic, tp.partition) for tp in assigned})

        def on_partitions_lost(self, lost: set[Any]) -> None:
            _changed("lost", {(tp.topic, tp.partition) for tp in lost})

    def _changed(kind: str, parts: set[Partition]) -> None:
        """:func:`~.member_config.forget_moved` (positions are keyed by the pairs
        themselves), then report the callback."""
        forget_moved(kind, parts, parts, positions, owned)
        event(kind, parts, owned_after=tuple(sorted(owned)))

    listener = Listener()
    metrics = MetricsReporter(config, sink)
    with reporting(config, sink, consumer.close, metrics.final):
        metrics.attach(subscribe(consumer, list(config.topics), listener))
        event("started", detail=f"confluent-kafka {confluent_kafka.version()[0]}")
        control.subscribed()
        last_commit = time.monotonic()
        while not control.should_stop():
            control.follow_changes(
                lambda t: metrics.attach(subscribe(consumer, t, listener)), event
            )
            messages = consumer.consume(num_messages=500, timeout=config.poll_timeout_ms / 1000)
            now = time.monotonic()
            batch: list[Delivery] = []
            for message in messages:
                error = message.error()
                if error is not None:
                    if error.code() == confluent_kafka.KafkaError._FATAL:
                        # the consumer can no longer be used: an error out of the loop
                        raise confluent_kafka.KafkaException(error)
                    continue
                topic, partition = message.topic() or "", message.partition() or 0
                offset = message.offset() or 0
                batch.append(
                    Delivery(
                        t=now,
                        member=config.member,
                        incarnation=config.incarnation,
                        topic=topic,
                        partition=partition,
                        offset=offset,
                        sequence=decode_sequence(message.value()),
                    )
                )
                positions[(topic, partition)] = offset + 1
            sink.add_deliveries(batch)
            metrics.tick(now)
            if now - last_commit >= config.commit_interval_s:
                assigned = {(tp.topic, tp.partition) for tp in consumer.assignment()}
                commit({p: o for p, o in list(positions.items()) if p in assigned}, True)
                last_commit = now
