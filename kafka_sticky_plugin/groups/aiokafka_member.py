"""One consumer-group member on aiokafka: the same events and deliveries as
:func:`~.kafka_python_member.consume_loop` (kafka-python), from a hooked ``AIOKafkaConsumer``
running in its own event loop (``MemberConfig.client == "aiokafka"``).

The member installs :func:`kafka_sticky_plugin.aiokafka.install_hooks` (aiokafka alone
is eager only and has no generations) unless ``install_hooks`` is off (a baseline of
aiokafka's own assignors, such as ``aiokafka-sticky``), commits on revoke (auto-commit
off), commits its positions every ``commit_interval_s`` (both through
:func:`kafka_sticky_plugin.aiokafka.commit_on_revoke`, bounded by the revocation deadline),
and reports ``started``, ``assigned``/``revoked``/``lost`` (with the partitions it owns
afterwards and the generation), ``committed``/``commit_failed``, ``generation``, ``error``
and ``stopped``.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from ..client_security import aiokafka_settings
from .assignor_names import assignor_class
from .events import Partition
from .member_config import (
    EventSink,
    LoopControl,
    MemberConfig,
    consumer_settings,
    member_event,
    record_deliveries,
    subscribe_as_configured,
)
from .metrics_events import MetricsReporter

__all__ = ["aio_consume_loop"]


def _parts(tps: Any) -> tuple[Partition, ...]:
    return tuple(sorted((tp.topic, int(tp.partition)) for tp in tps))


def aio_consume_loop(config: MemberConfig, sink: EventSink, control: LoopControl) -> None:
    """Run one aiokafka member as ``control`` says (see the module docstring; a subscription
    change is a ``subscribe`` again between two ``getmany`` calls)."""
    asyncio.run(_run(config, sink, control))


async def _run(config: MemberConfig, sink: EventSink, control: LoopControl) -> None:
    from aiokafka import AIOKafkaConsumer
    from aiokafka.abc import ConsumerRebalanceListener

    from ..aiokafka import commit_on_revoke, install_hooks

    owned: set[Partition] = set()
    positions: dict[Any, int] = {}
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

    def event(kind: str, **extra: Any) -> None:
        sink.add(member_event(config, kind, **extra))

    def report(kind: str, parts: tuple[Partition, ...], **extra: Any) -> None:
        event(
            kind,
            partitions=parts,
            owned_after=tuple(sorted(owned)),
            generation=generation(),
            **extra,
        )

    async def commit(chosen: dict[Any, int]) -> None:
        if not chosen:
            return
        parts = _parts(chosen)
        by_partition = {(tp.topic, tp.partition): off for tp, off in chosen.items()}
        # Bounded (aiokafka alone retries a missing coordinator without end, stalling the
        # loop past max_poll_interval_ms: see adapters/aiokafka/bounded_commit).
        if await commit_on_revoke(consumer, dict(chosen)):
            report("committed", parts, offsets=tuple(by_partition[p] for p in parts))
        else:
            report("commit_failed", parts, detail="commit_on_revoke gave up")

    class Listener(ConsumerRebalanceListener):  # type: ignore[misc]
        async def on_partitions_revoked(self, revoked: Any) -> None:
            probe = f"still_assigned={set(revoked) <= set(consumer.assignment())}"
            await commit({tp: positions[tp] for tp in revoked if tp in positions})
            for tp in revoked:
                positions.pop(tp, None)
            owned.difference_update(_parts(revoked))
            report("revoked", _parts(revoked), detail=probe)

        async def on_partitions_assigned(self, assigned: Any) -> None:
            for tp in assigned:
                positions.pop(tp, None)
            owned.update(_parts(assigned))
            report("assigned", _parts(assigned))

        async def on_partitions_lost(self, lost: Any) -> None:
            for tp in lost:
                positions.pop(tp, None)
            owned.difference_update(_parts(lost))
            report("lost", _parts(lost))

    try:
        listener = Listener()
        subscribe_as_configured(consumer, config, listener)
        protocol = handle.protocol.name if handle is not None else "EAGER (no hooks)"
        event("started", detail=f"aiokafka, protocol {protocol}")
        control.subscribed()
        await consumer.start()
        last_generation = -1
        last_commit = time.monotonic()
        while not control.should_stop():
            control.follow_changes(lambda t: consumer.subscribe(t, listener=listener), event)
            batches = await consumer.getmany(timeout_ms=config.poll_timeout_ms)
            now = time.monotonic()
            record_deliveries(config, sink, batches, positions, now)
            metrics.tick(now)
            current = generation()
            if current != last_generation and current >= 0:
                last_generation = current
                event("generation", generation=current, owned_after=tuple(sorted(owned)))
            if now - last_commit >= config.commit_interval_s:
                assigned = set(consumer.assignment())
                await commit({tp: off for tp, off in positions.items() if tp in assigned})
                last_commit = now
    except Exception as exc:
        event("error", detail=repr(exc))
        raise
    finally:
        try:
            # aiokafka does not revoke at close: commit what was processed, then leave.
            assigned = set(consumer.assignment())
            await commit({tp: off for tp, off in positions.items() if tp in assigned})
            await consumer.stop()
            metrics.final()
        finally:
            event("stopped")
