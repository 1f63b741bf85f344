"""One consumer-group member on aiokafka: the same events and deliveries as
:func:`~.kafka_python_member.consume_loop` (kafka-python), from a hooked ``AIOKafkaConsumer``
running in its own event loop (``MemberConfig.client == "aiokafka"``).

The member installs :func:`kafka_sticky_plugin.aiokafka.install_hooks` (aiokafka alone
is eager only and has no generations) unless ``install_hooks`` is off (a baseline of
aiokafka's own assignors, such as ``aiokafka-sticky``), commits on revoke (auto-commit
off), commits its positions every ``commit_interval_s`` (both through
:func:`kafka_sticky_plugin.aiokafka.commit_on_revoke`, bounded by the revocation deadline),
and reports ``started``, ``assigned``/``revoked``/``lost`` (with the partitions it owns
afterwards and the generation), ``committed``/``commit_failed``, ``generation``, ``error``,
``closing`` (after its last commit, before ``stop()``: aiokafka's close revokes nothing, so
this is where the member's ownership ends) and ``stopped``.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from ..client_security import aiokafka_settings
from .assignor_names import assignor_class
from .member_config import EventSink, LoopControl, MemberConfig
from .metrics_events import MetricsReporter
from .python_clients import MemberBook, consumer_settings, subscribe_as_configured

__all__ = ["aio_consume_loop"]


def aio_consume_loop(config: MemberConfig, sink: EventSink, control: LoopControl) -> None:
    """Run one aiokafka member as ``control`` says (see the module docstring; a subscription
    change is a ``subscribe`` again between two ``getmany`` calls)."""
    asyncio.run(_run(config, sink, control))


async def _run(config: MemberConfig, sink: EventSink, control: LoopControl) -> None:
    from aiokafka import AIOKafkaConsumer
    from aiokafka.abc import ConsumerRebalanceListener

    from ..aiokafka import commit_on_revoke, install_hooks

    consumer = AIOKafkaConsumer(
        **consumer_settings(config),
        **aiokafka_settings(config.security),
        partition_assignment_strategy=[assignor_class(n, "aiokafka") for n in config.assignors],
    )
    handle: Any = None  # aiokafka alone (a baseline of its own assignors): eager, no hooks
    if config.install_hooks:
        handle = (
            install_hooks(consumer)
            if config.prompt_heartbeats
            else install_hooks(consumer, prompt_heartbeats=None)
        )
    metrics = MetricsReporter(config, sink)
    metrics.attach(handle)

    def generation() -> int:
        value = consumer._coordinator.generation if consumer._coordinator is not None else -1
        return int(value) if isinstance(value, int) else -1

    book = MemberBook(config, sink, generation)
    event = book.event

    async def commit(chosen: dict[Any, int]) -> None:
        if not chosen:
            return
        # Bounded (aiokafka alone retries a missing coordinator without end, stalling the
        # loop past max_poll_interval_ms: see adapters/aiokafka/bounded_commit).
        if await commit_on_revoke(consumer, dict(chosen)):
            book.committed(chosen)
        else:
            book.committed(chosen, "commit_on_revoke gave up")

    class Listener(ConsumerRebalanceListener):  # type: ignore[misc]
        async def on_partitions_revoked(self, revoked: Any) -> None:
            probe = f"still_assigned={set(revoked) <= set(consumer.assignment())}"
            await commit(book.positions_of(revoked))
            book.moved("revoked", revoked, detail=probe)

        async def on_partitions_assigned(self, assigned: Any) -> None:
            book.moved("assigned", assigned)

        async def on_partitions_lost(self, lost: Any) -> None:
            book.moved("lost", lost)

    try:
        listener = Listener()
        subscribe_as_configured(consumer, config, listener)
        protocol = handle.protocol.name if handle is not None else "EAGER (no hooks)"
        event("started", detail=f"aiokafka, protocol {protocol}")
        control.subscribed()
        await consumer.start()
        last_commit = time.monotonic()
        while not control.should_stop():
            control.follow_changes(lambda t: consumer.subscribe(t, listener=listener), event)
            batches = await consumer.getmany(timeout_ms=config.poll_timeout_ms)
            now = time.monotonic()
            book.polled(batches, now)
            metrics.tick(now)
            if now - last_commit >= config.commit_interval_s:
                await commit(book.positions_of(consumer.assignment()))
                last_commit = now
    except Exception as exc:
        event("error", detail=repr(exc))
        raise
    finally:
        try:
            # aiokafka does not revoke at close: commit what was processed, then leave.
            await commit(book.positions_of(consumer.assignment()))
            # From here nothing is delivered or committed (a revocation stop() still runs
            # finds no positions): ownership ends now, before stop()'s LeaveGroup lets the
            # others take these partitions (``stopped`` is stamped only after stop() returned).
            book.positions.clear()
            book.report("closing", tuple(sorted(book.owned)))
            await consumer.stop()
            metrics.final()
        finally:
            event("stopped")
