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
from ..bootstrap_check import BootstrapCheck
from ..client_security import kafka_python_settings
from .assignor_names import make_assignor
from .member_config import EventSink, LoopControl, MemberConfig, reporting
from .metrics_events import MetricsReporter
from .python_clients import MemberBook, consumer_settings, subscribe_as_configured

__all__ = ["consume_loop", "generation_of"]


def _offset_and_metadata(offset: int) -> Any:
    """kafka-python's OffsetAndMetadata: (offset, metadata, leader_epoch), or the 2-field
    form of kafka-python 2.0.2."""
    from kafka.structs import OffsetAndMetadata

    try:
        return OffsetAndMetadata(offset, "", -1)
    except TypeError:
        return OffsetAndMetadata(offset, "")


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


def _make_listener(consumer: Any, config: MemberConfig, book: MemberBook) -> Any:
    """The recording listener: async on kafka-python 3.x (callbacks run on the IO thread,
    which must not block), sync on 2.x (callbacks run in the polling thread)."""

    def to_commit(revoked: Any) -> tuple[dict[Any, int], dict[Any, Any]]:
        chosen = book.positions_of(revoked)
        return chosen, {tp: _offset_and_metadata(off) for tp, off in chosen.items()}

    def still_assigned(revoked: Any) -> str:
        # Java's contract: during onPartitionsRevoked the partitions are still assigned (the
        # callback may read positions and commit them). Recorded so tests can check it.
        try:
            return f"still_assigned={set(revoked) <= set(consumer.assignment())}"
        except Exception as exc:  # reported as unknown
            return f"still_assigned=unknown ({exc!r})"

    try:
        from kafka.consumer.subscription_state import AsyncConsumerRebalanceListener
    except ImportError:  # kafka-python 2.x
        from kafka import ConsumerRebalanceListener

        class SyncRecordingListener(ConsumerRebalanceListener):  # type: ignore[misc]
            """Commit-on-revoke listener that reports every callback (kafka-python 2.x)."""

            def on_partitions_revoked(self, revoked: Any) -> None:
                probe = still_assigned(revoked)
                chosen, offsets = to_commit(revoked)
                if offsets:
                    try:
                        consumer.commit(offsets)
                    except Exception as exc:  # reported, the rebalance goes on
                        book.committed(chosen, repr(exc))
                    else:
                        book.committed(chosen)
                book.moved("revoked", revoked, detail=probe)

            def on_partitions_assigned(self, assigned: Any) -> None:
                book.moved("assigned", assigned)

            def on_partitions_lost(self, lost: Any) -> None:
                book.moved("lost", lost)

        return SyncRecordingListener()

    class RecordingListener(AsyncConsumerRebalanceListener):  # type: ignore[misc]
        """Commit-on-revoke listener that reports every callback (kafka-python 3.x)."""

        async def on_partitions_revoked(self, revoked: Any) -> None:
            probe = still_assigned(revoked)
            chosen, offsets = to_commit(revoked)
            if offsets and config.install_hooks:
                # The pattern README recommends: retried until the revocation deadline.
                from ..kafka_python import commit_on_revoke

                if await commit_on_revoke(consumer, offsets):
                    book.committed(chosen)
                else:
                    book.committed(chosen, "commit_on_revoke gave up")
            elif offsets:
                try:
                    await consumer.commit_async(offsets)
                except Exception as exc:  # reported, the rebalance goes on
                    book.committed(chosen, repr(exc))
                else:
                    book.committed(chosen)
            book.moved("revoked", revoked, detail=probe)

        async def on_partitions_assigned(self, assigned: Any) -> None:
            book.moved("assigned", assigned)

        async def on_partitions_lost(self, lost: Any) -> None:
            book.moved("lost", lost)

    return RecordingListener()


def _commit_positions(consumer: Any, book: MemberBook) -> None:
    """The periodic commit of what the member read from its assigned partitions; a failure
    (``CommitFailedError`` during a rebalance is expected) is reported, not raised."""
    chosen = book.positions_of(consumer.assignment())
    if not chosen:
        return
    try:
        consumer.commit({tp: _offset_and_metadata(off) for tp, off in chosen.items()})
    except Exception as exc:
        book.committed(chosen, repr(exc))
    else:
        book.committed(chosen)


def consume_loop(config: MemberConfig, sink: EventSink, control: LoopControl) -> None:
    """Run one member as ``control`` says (:class:`~.member_config.LoopControl`); then close
    the consumer (leaving the group). Exceptions from the client are reported as an
    ``error`` event and re-raised."""
    from kafka import KafkaConsumer

    # kafka-python bootstraps inside its constructor (3.0: up to bootstrap_timeout_ms, 30 s,
    # before any hook exists): no address answering is said first, once, and the
    # constructor still runs (a broker that comes up meanwhile is joined).
    settings = consumer_settings(config)
    subject = f"group {config.group_id} client {settings['client_id']}"
    BootstrapCheck(subject, config.bootstrap).run()
    consumer = KafkaConsumer(
        **settings,
        **kafka_python_settings(config.security),
        partition_assignment_strategy=[make_assignor(name) for name in config.assignors],
    )
    book = MemberBook(config, sink, lambda: generation_of(consumer))
    metrics = MetricsReporter(config, sink)
    with reporting(config, sink, consumer.close, metrics.final):
        if config.install_hooks and not STRATEGIES.keys().isdisjoint(config.assignors):
            from ..hooks import install_hooks

            prompt = {} if config.prompt_heartbeats else {"prompt_heartbeats": None}
            metrics.attach(install_hooks(consumer, **prompt))
        listener = _make_listener(consumer, config, book)
        subscribe_as_configured(consumer, config, listener)
        book.event("started")
        control.subscribed()
        last_commit = time.monotonic()
        while not control.should_stop():
            control.follow_changes(lambda t: consumer.subscribe(t, listener=listener), book.event)
            records = consumer.poll(timeout_ms=config.poll_timeout_ms)
            now = time.monotonic()
            book.polled(records, now)
            metrics.tick(now)
            if now - last_commit >= config.commit_interval_s:
                _commit_positions(consumer, book)
                last_commit = now
