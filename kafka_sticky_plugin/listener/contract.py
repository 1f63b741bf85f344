"""Java 4.5's ``RebalanceListener`` (KIP-1306) in Python, and how one is called.

Invariants (Java's):

- ``on_partitions_revoked`` and ``on_partitions_assigned`` must be written;
  ``on_partitions_lost`` defaults to ``on_partitions_revoked`` (Java's default method);
- each call gets a fresh view (:class:`~.view.RebalanceConsumer`), invalidated when the call
  returned, or raised (:func:`invoke`, :func:`invoke_async`); a view never outlives its call.

When the methods run, and with which partitions (the whole assignment under EAGER, only what
changes under COOPERATIVE, ``on_partitions_assigned`` at every completed rebalance), is each
client's, as documented on its listener page; the view adds no rule of its own to them.
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Literal

from ..errors import ConfigurationError
from .view import RebalanceConsumer

__all__ = [
    "KINDS",
    "CallbackKind",
    "RebalanceListener",
    "check_rebalance_listener",
    "invoke",
    "invoke_async",
    "method_name",
    "second_listener_error",
]

CallbackKind = Literal["revoked", "assigned", "lost"]
KINDS: tuple[CallbackKind, ...] = ("revoked", "assigned", "lost")


class RebalanceListener(ABC):
    """Subclass and pass to the client's registration (``install_hooks(consumer,
    listener=...)`` / ``set_rebalance_listener`` for kafka-python and aiokafka,
    ``kafka_sticky_plugin.confluent.subscribe`` for confluent-kafka).

    ``partitions`` is a fresh ``set`` of the client's partition type; ``consumer`` is valid
    only during the call. On aiokafka the methods may be ``async def`` (and the view's
    ``commit`` is awaited); on kafka-python and confluent-kafka they are plain functions and
    the view's ``commit`` is synchronous, as Java's ``commitSync``.
    """

    @abstractmethod
    def on_partitions_revoked(self, partitions: set[Any], consumer: RebalanceConsumer) -> Any:
        """The member gives ``partitions`` up and still owns them: commit here."""

    @abstractmethod
    def on_partitions_assigned(self, partitions: set[Any], consumer: RebalanceConsumer) -> Any:
        """The member now owns ``partitions`` (seek, pause here)."""

    def on_partitions_lost(self, partitions: set[Any], consumer: RebalanceConsumer) -> Any:
        """The membership was lost: another member may own ``partitions`` already, so
        their offsets cannot be committed. Java's default: ``on_partitions_revoked``."""
        return self.on_partitions_revoked(partitions, consumer)


def method_name(kind: CallbackKind) -> str:
    """The listener method a callback of ``kind`` calls."""
    return f"on_partitions_{kind}"


def check_rebalance_listener(listener: object, *, coroutines: bool) -> RebalanceListener:
    """``listener`` if it can be registered: a :class:`RebalanceListener` instance, with
    plain (not ``async def``) methods unless the client awaits them (``coroutines``).
    Raises :class:`~kafka_sticky_plugin.errors.ConfigurationError` otherwise."""
    if not isinstance(listener, RebalanceListener):
        raise ConfigurationError(
            f"{listener!r} is not a kafka_sticky_plugin.RebalanceListener: subclass it and "
            "write on_partitions_revoked(partitions, consumer) and "
            "on_partitions_assigned(partitions, consumer)"
        )
    if not coroutines:
        asynchronous = [
            method_name(kind)
            for kind in KINDS
            if inspect.iscoroutinefunction(getattr(listener, method_name(kind)))
        ]
        if asynchronous:
            raise ConfigurationError(
                f"{', '.join(asynchronous)} of {listener!r} is async def: this client calls "
                "RebalanceListener methods synchronously (the view's commit is synchronous, "
                "as Java's commitSync); write them as plain functions"
            )
    return listener


def invoke(
    listener: RebalanceListener,
    kind: CallbackKind,
    partitions: Iterable[Any],
    view: Callable[[str], RebalanceConsumer],
) -> None:
    """Call the method for ``kind`` with a fresh set and ``view(method)``; the view is
    invalidated when the call ends, whatever happened."""
    name = method_name(kind)
    consumer = view(name)
    try:
        getattr(listener, name)(set(partitions), consumer)
    finally:
        consumer._invalidate()


async def invoke_async(
    listener: RebalanceListener,
    kind: CallbackKind,
    partitions: Iterable[Any],
    view: Callable[[str], RebalanceConsumer],
) -> None:
    """:func:`invoke` for clients that await callbacks: a returned awaitable is awaited
    before the view is invalidated."""
    name = method_name(kind)
    consumer = view(name)
    try:
        result: Any = getattr(listener, name)(set(partitions), consumer)
        if inspect.isawaitable(result):
            await _awaited(result)
    finally:
        consumer._invalidate()


async def _awaited(result: Awaitable[Any]) -> Any:
    return await result


def second_listener_error(other: Any) -> ConfigurationError:
    """The error for a second listener beside a :class:`RebalanceListener` (``other``: the
    one ``subscribe(..., listener=...)`` gave or is about to give): a consumer has one
    listener slot, as in Java, for every client."""
    return ConfigurationError(
        f"this consumer already has a rebalance listener ({other!r}, from subscribe(..., "
        "listener=...)): a consumer has one listener slot, as in Java; register either the "
        "RebalanceListener (set_rebalance_listener / install_hooks(listener=...)) or the "
        "subscribe() listener, not both (a Processor's listener takes yours: "
        "processor.listener(your_rebalance_listener))"
    )
