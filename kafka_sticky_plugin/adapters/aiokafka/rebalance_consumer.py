"""Java 4.5's rebalance listener (KIP-1306) on a hooked aiokafka consumer.

The hooks call every rebalance callback themselves (:meth:`.hooks.AioHooks._listen`); with a
:class:`~kafka_sticky_plugin.listener.RebalanceListener` registered
(:func:`set_rebalance_listener` or ``install_hooks(consumer, listener=...)``) they call it,
in the coordinator's task, with a :class:`~kafka_sticky_plugin.listener.RebalanceConsumer`
over the consumer's own calls (:data:`OFFERED`: the names aiokafka shares with Java's view,
its coroutines staying coroutines: ``await consumer.commit(...)`` is Java's ``commitSync``),
invalidated when the method (or the awaitable it returned) finished. Methods may be plain or
``async def``. A listener that raises is logged and the rebalance goes on, as aiokafka does
with its own listeners.

One listener slot, as Java has: a consumer whose ``subscribe(..., listener=...)`` gave a
listener refuses :func:`set_rebalance_listener`, and after it ``subscribe(...,
listener=...)`` raises (Java replaces the earlier one silently; a silently dropped listener is
a lost commit-on-revoke, so both orders raise
:class:`~kafka_sticky_plugin.errors.ConfigurationError`). ``subscribe(topics)`` keeps it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from ...errors import ConfigurationError
from ...listener.contract import (
    CallbackKind,
    RebalanceListener,
    check_rebalance_listener,
    invoke_async,
    second_listener_error,
)
from ...listener.view import RebalanceConsumer, java_operations_except, view_of

__all__ = [
    "OFFERED",
    "call_rebalance_listener",
    "rebalance_consumer",
    "refuse_second_listener",
    "set_rebalance_listener",
]

log = logging.getLogger("kafka_sticky_plugin.aiokafka")

#: aiokafka's calls offered by the view (its own names, signatures and coroutines).
OFFERED: tuple[str, ...] = java_operations_except("commit_async", "group_metadata")

_HANDLE = "_kafka_sticky_plugin_aiokafka_hooks"


def rebalance_consumer(consumer: Any, callback: str) -> RebalanceConsumer:
    """A fresh view of ``consumer`` for one call of ``callback``."""
    return view_of(consumer, OFFERED, callback=callback, client="aiokafka")


async def call_rebalance_listener(
    consumer: Any,
    listener: RebalanceListener,
    kind: CallbackKind,
    partitions: Iterable[Any],
    group: str,
) -> bool:
    """Call the listener's method for ``kind`` with its view; True when it did not raise."""
    try:
        await invoke_async(
            listener, kind, partitions, lambda name: rebalance_consumer(consumer, name)
        )
    except Exception:
        log.exception(
            "rebalance listener %r failed in on_partitions_%s for group %s", listener, kind, group
        )
        return False
    return True


def refuse_second_listener(consumer: Any, given: Any = None) -> None:
    """Raise ``ConfigurationError`` when ``consumer`` would get a second listener: the one
    ``subscribe()`` gave (or ``given``, about to be subscribed) beside a RebalanceListener."""
    handle = consumer.__dict__.get(_HANDLE)
    ours = getattr(getattr(handle, "_impl", None), "rebalance_listener", None)
    if given is not None and ours is not None:
        raise second_listener_error(given)
    current = consumer._subscription.listener
    if given is None and current is not None:
        raise second_listener_error(current)


def set_rebalance_listener(consumer: Any, listener: RebalanceListener) -> None:
    """Register ``listener`` (a :class:`~kafka_sticky_plugin.listener.RebalanceListener`)
    on ``consumer``, before or after ``subscribe(topics)``, before or after ``start()``;
    Java's ``Consumer#setRebalanceListener``. Needs the hooks
    (:func:`~kafka_sticky_plugin.aiokafka.install_hooks` first). Calling it again replaces
    the listener. Raises ``ConfigurationError`` for a listener that is not a
    ``RebalanceListener``, a consumer without the hooks, or one whose ``subscribe()`` gave a
    listener (see the module docstring)."""
    handle = consumer.__dict__.get(_HANDLE) if hasattr(consumer, "__dict__") else None
    if handle is None:
        raise ConfigurationError(
            "set_rebalance_listener needs the plugin's hooks on this consumer: call "
            "install_hooks(consumer) first (or install_hooks(consumer, listener=...))"
        )
    check_rebalance_listener(listener, coroutines=True)
    refuse_second_listener(consumer)
    handle._impl.rebalance_listener = listener
