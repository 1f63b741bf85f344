"""aiokafka members for the real-broker tests, compatible with the hooks' harness.

Each :class:`AioMember` is one ``AIOKafkaConsumer`` (hooked unless ``hooks=False``) running in
its own thread with its own event loop, recording every rebalance callback and delivered
record with the shared monotonic clock, as ``hooks_harness.Member`` does for kafka-python, so
that ``wait_stable`` and ``consumed_by_two_live_members`` check mixed groups of both.

Commands run *in* the member's loop: :meth:`freeze` blocks the loop (no heartbeat at all, a
process stopped in a debugger), :meth:`stall` stops consuming while the loop runs (aiokafka
leaves the group after ``max_poll_interval_ms``), :meth:`crash` drops the member's connections
without a LeaveGroup. With ``commit_on_revoke`` auto-commit is off and the listener commits
the processed positions of revoked partitions (never of lost ones). Every
``on_partitions_revoked`` is noted when it begins (:attr:`AioMember.revoking`) and may take
``revoke_delay_s`` (awaited: the member's ``getmany`` loop runs meanwhile, as an application's
would while its callback commits).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from aiokafka import AIOKafkaConsumer
from aiokafka.abc import ConsumerRebalanceListener
from hooks_harness import Delivery, Event

from kafka_sticky_plugin.aiokafka import install_hooks

AIO_SETTINGS: dict[str, Any] = {
    "session_timeout_ms": 6000,
    "heartbeat_interval_ms": 1000,
    "max_poll_interval_ms": 10000,
    "auto_offset_reset": "earliest",
}

Partition = tuple[str, int]
Command = Callable[[AIOKafkaConsumer], Awaitable[None]]


class _Listener(ConsumerRebalanceListener):  # type: ignore[misc]  # aiokafka is untyped
    def __init__(self, member: AioMember, consumer: AIOKafkaConsumer) -> None:
        self._member = member
        self._consumer = consumer

    async def on_partitions_revoked(self, revoked: Any) -> None:
        self._member._revoking(revoked)
        if self._member.revoke_delay_s:
            await asyncio.sleep(self._member.revoke_delay_s)  # a slow commit, say
        if self._member.commit_on_revoke:
            offsets = {
                tp: self._member.processed[tp] for tp in revoked if tp in self._member.processed
            }
            if offsets:
                await self._consumer.commit(offsets)
        self._member._event("revoked", revoked)

    async def on_partitions_assigned(self, assigned: Any) -> None:
        self._member._event("assigned", assigned)

    async def on_partitions_lost(self, lost: Any) -> None:
        self._member._event("lost", lost)


@dataclass
class AioMember:
    """One aiokafka consumer in a thread (see the module docstring)."""

    name: str
    bootstrap: str
    group: str
    topics: list[str]
    strategy: list[Any]
    hooks: bool = True
    commit_on_revoke: bool = False
    revoke_delay_s: float = 0.0
    settings: dict[str, Any] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)
    deliveries: list[Delivery] = field(default_factory=list)
    owned: set[Partition] = field(default_factory=set)
    processed: dict[Any, int] = field(default_factory=dict)
    #: ``(monotonic time, partitions)`` at the start of every ``on_partitions_revoked``.
    revoking: list[tuple[float, frozenset[Partition]]] = field(default_factory=list)
    error: BaseException | None = None
    handle: Any = None

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._commands: list[Command] = []
        self._stop = threading.Event()
        self._crashed = False
        self._thread = threading.Thread(target=self._run, name=f"aio-{self.name}", daemon=True)

    # -- recording ---------------------------------------------------------------------
    def _event(self, kind: str, partitions: Iterable[Any]) -> None:
        parts = frozenset((tp.topic, tp.partition) for tp in partitions)
        with self._lock:
            self.events.append(Event(time.monotonic(), self.name, kind, parts))
            if kind == "assigned":
                self.owned |= parts
            else:
                self.owned -= parts

    def _revoking(self, partitions: Iterable[Any]) -> None:
        parts = frozenset((tp.topic, tp.partition) for tp in partitions)
        with self._lock:
            self.revoking.append((time.monotonic(), parts))

    def snapshot(self) -> frozenset[Partition]:
        with self._lock:
            return frozenset(self.owned)

    def kinds(self) -> list[str]:
        with self._lock:
            return [e.kind for e in self.events]

    def generation(self) -> int | None:
        return None if self.handle is None else self.handle.generation

    # -- lifecycle ---------------------------------------------------------------------
    def start(self) -> AioMember:
        self._thread.start()
        return self

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as exc:  # surfaced by stop()/check()
            self.error = exc

    async def _main(self) -> None:
        settings = {**AIO_SETTINGS, **self.settings}
        consumer = AIOKafkaConsumer(
            bootstrap_servers=self.bootstrap,
            group_id=self.group,
            partition_assignment_strategy=self.strategy,
            client_id=f"{self.group}-{self.name}",
            enable_auto_commit=not self.commit_on_revoke,
            **settings,
        )
        if self.hooks:
            self.handle = install_hooks(consumer)
        else:
            self.handle = _Unhooked(tuple(self.strategy))
        consumer.subscribe(self.topics, listener=_Listener(self, consumer))
        await consumer.start()
        try:
            while not self._stop.is_set():
                while self._commands:
                    await self._commands.pop(0)(consumer)
                if self._crashed:
                    return
                batch = await consumer.getmany(timeout_ms=100)
                now = time.monotonic()
                with self._lock:
                    for tp, records in batch.items():
                        for record in records:
                            self.deliveries.append(
                                Delivery(now, self.name, (tp.topic, tp.partition), record.offset)
                            )
                            self.processed[tp] = record.offset + 1
        finally:
            if not self._crashed:
                await consumer.stop()

    def _command(self, command: Command) -> None:
        self._commands.append(command)

    def freeze(self, seconds: float) -> None:
        """Block the member's event loop for ``seconds`` (no heartbeat, no consuming)."""

        async def block(_consumer: AIOKafkaConsumer) -> None:
            time.sleep(seconds)

        self._command(block)

    def stall(self, seconds: float) -> None:
        """Stop consuming for ``seconds`` while the loop (and its heartbeat) runs."""

        async def idle(_consumer: AIOKafkaConsumer) -> None:
            await asyncio.sleep(seconds)

        self._command(idle)

    def crash(self) -> None:
        """Drop the member's connections without a LeaveGroup, as a killed process would."""

        async def die(consumer: AIOKafkaConsumer) -> None:
            coordinator = consumer._coordinator
            coordinator._coordination_task.cancel()
            await coordinator._stop_heartbeat_task()
            await consumer._client.close()
            consumer._closed = True  # nothing left to close; no "unclosed consumer" warning
            self._crashed = True

        self._command(die)

    def check(self) -> None:
        if self.error is not None:
            raise AssertionError(f"member {self.name} failed: {self.error!r}") from self.error

    def stop(self, timeout_s: float = 30.0) -> None:
        self._stop.set()
        self._thread.join(timeout_s)
        self.check()


@dataclass(frozen=True)
class _Unhooked:
    """What a member without the hooks reports: its configured assignors."""

    assignors: tuple[Any, ...]
