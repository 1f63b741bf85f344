"""One consumer-group member: a kafka-python ``KafkaConsumer`` loop that records what it sees.

:func:`consume_loop` subscribes, polls until told to stop, and reports through an
:class:`EventSink`: every rebalance callback (with the member's assignment after it), every
generation change, every commit, every delivered record. Offsets are committed by hand
(``enable_auto_commit=False``): periodically from the poll loop, and for revoked partitions in
``on_partitions_revoked`` (commit-on-revoke: with the hooks installed, through
:func:`~kafka_sticky_plugin.kafka_python.commit_on_revoke`, which retries until the
revocation deadline; plain members send one ``commit_async``); never for lost partitions.

Why the listener commits its own tracked positions and not ``consumer.position()``:
kafka-python 3.0.12 (cooperative mode) removes revoked partitions from the subscription
*before* calling ``on_partitions_revoked``, so ``position()`` raises there; and the listener
runs on the client's IO thread, where only non-blocking calls are allowed, so it awaits
``commit_async`` from an ``AsyncConsumerRebalanceListener``.

Invariants: positions are last-delivered-offset + 1 and are forgotten when a partition is
revoked or lost (a partition that comes back starts from the committed offset); the member's
``owned`` set is only changed by the listener callbacks.
"""

from __future__ import annotations

import time
from typing import Any

from ..assignor.strategies import STRATEGIES
from ..client_security import kafka_python_settings
from .assignor_names import make_assignor
from .events import Partition
from .member_config import (
    EventSink,
    LoopControl,
    MemberConfig,
    consumer_settings,
    member_event,
    record_deliveries,
    reporting,
    subscribe_as_configured,
)
from .metrics_events import MetricsReporter

__all__ = ["consume_loop", "generation_of"]


def _offset_and_metadata(offset: int) -> Any:
    """kafka-python's OffsetAndMetadata: (offset, metadata, leader_epoch), or the 2-field
    form of kafka-python 2.0.2."""
    from kafka.structs import OffsetAndMetadata

    try:
        return OffsetAndMetadata(offset, "", -1)
    except TypeError:
        return OffsetAndMetadata(offset, "")


def _partitions(tps: Any) -> tuple[Partition, ...]:
    return tuple(sorted((tp.topic, int(tp.partition)) for tp in tps))


def generation_of(consumer: Any) -> int:
    """The consumer's current generation id (-1: none or unknown), on kafka-python 2.x/3.x."""
    try:
        return int(consumer.group_metadata().generation_id)
    except AttributeError:  # kafka-python 2.x has no group_metadata()
        pass
    except Exception:  # the snapshot is best effort
        return -1
    generation = getattr(getattr(consumer, "_coordinator", None), "_generation", None)
    value = getattr(generation, "generation_id", -1)
    return int(value) if isinstance(value, int) else -1


def _make_listener(
    consumer: Any,
    config: MemberConfig,
    sink: EventSink,
    positions: dict[Any, int],
    owned: set[Partition],
) -> Any:
    """The recording listener: async on kafka-python 3.x (callbacks run on the IO thread,
    which must not block), sync on 2.x (callbacks run in the polling thread)."""

    def report(kind: str, parts: tuple[Partition, ...], **extra: Any) -> None:
        sink.add(
            member_event(
                config,
                kind,
                partitions=parts,
                owned_after=tuple(sorted(owned)),
                generation=generation_of(consumer),
                **extra,
            )
        )

    def to_commit(revoked: Any) -> tuple[dict[Any, Any], tuple[Partition, ...], tuple[int, ...]]:
        chosen = {tp: positions[tp] for tp in revoked if tp in positions}
        parts = _partitions(chosen)
        by_partition = {(tp.topic, tp.partition): off for tp, off in chosen.items()}
        offsets = {tp: _offset_and_metadata(off) for tp, off in chosen.items()}
        return offsets, parts, tuple(by_partition[p] for p in parts)

    def still_assigned(revoked: Any) -> str:
        # Java's contract: during onPartitionsRevoked the partitions are still assigned (the
        # callback may read positions and commit them). Recorded so tests can check it.
        try:
            return f"still_assigned={set(revoked) <= set(consumer.assignment())}"
        except Exception as exc:  # reported as unknown
            return f"still_assigned=unknown ({exc!r})"

    def moved(kind: str, tps: Any, **extra: Any) -> None:
        """Partitions revoked, assigned or lost: their positions are forgotten, ``owned``
        gains (assigned) or loses them, and one event is reported."""
        parts = _partitions(tps)
        for tp in tps:
            positions.pop(tp, None)
        if kind == "assigned":
            owned.update(parts)
        else:
            owned.difference_update(parts)
        report(kind, parts, **extra)

    def after_revoke(revoked: Any, probe: str) -> None:
        moved("revoked", revoked, detail=probe)

    def assigned_(assigned: Any) -> None:
        moved("assigned", assigned)

    def lost_(lost: Any) -> None:
        moved("lost", lost)

    try:
        from kafka.consumer.subscription_state import AsyncConsumerRebalanceListener
    except ImportError:  # kafka-python 2.x
        from kafka import ConsumerRebalanceListener

        class SyncRecordingListener(ConsumerRebalanceListener):  # type: ignore[misc]
            """Commit-on-revoke listener that reports every callback (kafka-python 2.x)."""

            def on_partitions_revoked(self, revoked: Any) -> None:
                probe = still_assigned(revoked)
                offsets, parts, values = to_commit(revoked)
                if offsets:
                    try:
                        consumer.commit(offsets)
                    except Exception as exc:  # reported, the rebalance goes on
                        report("commit_failed", parts, detail=repr(exc))
                    else:
                        report("committed", parts, offsets=values)
                after_revoke(revoked, probe)

            def on_partitions_assigned(self, assigned: Any) -> None:
                assigned_(assigned)

            def on_partitions_lost(self, lost: Any) -> None:
                lost_(lost)

        return SyncRecordingListener()

    class RecordingListener(AsyncConsumerRebalanceListener):  # type: ignore[misc]
        """Commit-on-revoke listener that reports every callback (kafka-python 3.x)."""

        async def on_partitions_revoked(self, revoked: Any) -> None:
            probe = still_assigned(revoked)
            offsets, parts, values = to_commit(revoked)
            if offsets and config.install_hooks:
                # The pattern README recommends: retried until the revocation deadline.
                from ..kafka_python import commit_on_revoke

                if await commit_on_revoke(consumer, offsets):
                    report("committed", parts, offsets=values)
                else:
                    report("commit_failed", parts, detail="commit_on_revoke gave up")
            elif offsets:
                try:
                    await consumer.commit_async(offsets)
                except Exception as exc:  # reported, the rebalance goes on
                    report("commit_failed", parts, detail=repr(exc))
                else:
                    report("committed", parts, offsets=values)
            after_revoke(revoked, probe)

        async def on_partitions_assigned(self, assigned: Any) -> None:
            assigned_(assigned)

        async def on_partitions_lost(self, lost: Any) -> None:
            lost_(lost)

    return RecordingListener()


def _commit_positions(
    consumer: Any, config: MemberConfig, sink: EventSink, positions: dict[Any, int]
) -> None:

    assigned = set(consumer.assignment())
    snapshot = {tp: off for tp, off in list(positions.items()) if tp in assigned}
    if not snapshot:
        return
    parts = _partitions(snapshot)
    by_partition = {(tp.topic, tp.partition): off for tp, off in snapshot.items()}
    kind, detail = "committed", ""
    try:
        consumer.commit({tp: _offset_and_metadata(off) for tp, off in snapshot.items()})
    except Exception as exc:  # CommitFailedError during a rebalance is expected and reported
        kind, detail = "commit_failed", repr(exc)
    sink.add(
        member_event(
            config,
            kind,
            partitions=parts,
            offsets=tuple(by_partition[p] for p in parts) if kind == "committed" else (),
            detail=detail,
        )
    )


def consume_loop(config: MemberConfig, sink: EventSink, control: LoopControl) -> None:
    """Run one member as ``control`` says (:class:`~.member_config.LoopControl`); then close
    the consumer (leaving the group). Exceptions from the client are reported as an
    ``error`` event and re-raised."""
    from kafka import KafkaConsumer

    def event(kind: str, **extra: Any) -> None:
        sink.add(member_event(config, kind, **extra))

    consumer = KafkaConsumer(
        **consumer_settings(config),
        **kafka_python_settings(config.security),
        partition_assignment_strategy=[make_assignor(name) for name in config.assignors],
    )
    positions: dict[Any, int] = {}
    owned: set[Partition] = set()
    metrics = MetricsReporter(config, sink)
    with reporting(config, sink, consumer.close, metrics.final):
        if config.install_hooks and not STRATEGIES.keys().isdisjoint(config.assignors):
            from ..hooks import install_hooks

            prompt = {} if config.prompt_heartbeats else {"prompt_heartbeats": None}
            metrics.attach(install_hooks(consumer, **prompt))
        listener = _make_listener(consumer, config, sink, positions, owned)
        subscribe_as_configured(consumer, config, listener)
        event("started")
        control.subscribed()
        last_generation = -1
        last_commit = time.monotonic()
        while not control.should_stop():
            control.follow_changes(lambda t: consumer.subscribe(t, listener=listener), event)
            records = consumer.poll(timeout_ms=config.poll_timeout_ms)
            now = time.monotonic()
            record_deliveries(config, sink, records, positions, now)
            metrics.tick(now)
            generation = generation_of(consumer)
            if generation != last_generation and generation >= 0:
                last_generation = generation
                event("generation", generation=generation, owned_after=tuple(sorted(owned)))
            if now - last_commit >= config.commit_interval_s:
                _commit_positions(consumer, config, sink, positions)
                last_commit = now
