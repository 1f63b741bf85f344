"""Java 4.5's rebalance listener (KIP-1306) on a hooked kafka-python consumer.

:func:`set_rebalance_listener` (or ``install_hooks(consumer, listener=...)``) puts a bridge
in the consumer's listener slot; the hooks and the client call it like any listener, and it
calls the user's :class:`~kafka_sticky_plugin.listener.RebalanceListener` with a
:class:`~kafka_sticky_plugin.listener.RebalanceConsumer` over the consumer's own calls
(:data:`OFFERED`: the names kafka-python shares with Java's view), invalidated when the
method returns.

- **3.0.x** runs listeners on its IO thread, where a blocking call (``commit``,
  ``committed``, ``position`` when it must fetch) raises. The bridge runs the user's method
  on a helper thread while the IO loop goes on (heartbeats included) and awaits it, so the
  view's ``commit`` is the consumer's synchronous ``commit`` (Java's ``commitSync``), and
  the hooks still see the callback end before the partitions leave (the commit guard's wait
  for in-flight commits follows it). Methods run one at a time, in the client's order.
- **2.x** calls listeners inside ``poll()``: the bridge calls the method there.

One listener slot, as Java has: a consumer with a ``subscribe(..., listener=...)`` listener
refuses :func:`set_rebalance_listener`, and after it ``subscribe(..., listener=...)``
raises; ``subscribe(topics)`` keeps the listener (Java: ``subscribe`` without a listener
keeps the one set). Java lets the later registration replace the earlier one silently; here
both orders raise :class:`~kafka_sticky_plugin.errors.ConfigurationError`, because a silently
dropped listener is a lost commit-on-revoke. A listener of ours given to
``Processor.listener(...)`` is called the same way, after the processor's own work.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any

from ...errors import ConfigurationError
from ...listener.contract import (
    CallbackKind,
    RebalanceListener,
    check_rebalance_listener,
    invoke,
    second_listener_error,
)
from ...listener.view import RebalanceConsumer, java_operations_except, view_of

__all__ = [
    "OFFERED",
    "call_off_loop",
    "rebalance_consumer",
    "refuse_second_listener",
    "set_rebalance_listener",
]

#: kafka-python's calls offered by the view (the client's own names and signatures).
OFFERED: tuple[str, ...] = java_operations_except()

_HOOKS_ATTRIBUTE = "_kafka_sticky_plugin_hooks"
_STEP_S = 0.005  # how often the IO loop looks whether the helper thread is done


def rebalance_consumer(consumer: Any, callback: str) -> RebalanceConsumer:
    """A fresh view of ``consumer`` for one call of ``callback``."""
    return view_of(consumer, OFFERED, callback=callback, client="kafka-python")


def _call(consumer: Any, listener: RebalanceListener, kind: CallbackKind, partitions: Any) -> None:
    invoke(listener, kind, partitions, lambda name: rebalance_consumer(consumer, name))


async def call_off_loop(
    consumer: Any, listener: RebalanceListener, kind: CallbackKind, partitions: Iterable[Any]
) -> None:
    """3.0.x, from a coroutine on the IO loop: run the listener's method on a helper thread
    and await its end (re-raising what it raised); inline when not on the IO thread."""
    net = consumer._net
    if threading.current_thread() is not getattr(net, "_io_thread", None):
        _call(consumer, listener, kind, partitions)
        return
    done = threading.Event()
    failure: list[BaseException] = []
    chosen = set(partitions)

    def run() -> None:
        try:
            _call(consumer, listener, kind, chosen)
        except BaseException as exc:  # handed to the IO loop's caller below
            failure.append(exc)
        finally:
            done.set()

    helper = threading.Thread(target=run, name=f"rebalance-listener-{kind}", daemon=True)
    helper.start()
    while not done.is_set():
        await net.sleep(_STEP_S)
    if failure:
        raise failure[0]


_BRIDGES: dict[str, type] = {}


def _bridge_class(family: str) -> type:
    """The listener class kafka-python accepts in the slot, with our three methods (one
    class per family, made once)."""
    made = _BRIDGES.get(family)
    if made is None:
        made = _BRIDGES[family] = _make_bridge_class(family)
    return made


def _make_bridge_class(family: str) -> type:
    if family == "v3":
        from kafka import AsyncConsumerRebalanceListener

        class AsyncBridge(AsyncConsumerRebalanceListener):  # type: ignore[misc]
            def __init__(self, consumer: Any, listener: RebalanceListener) -> None:
                self.consumer = consumer
                self.listener = listener

            async def on_partitions_revoked(self, revoked: Any) -> None:
                await call_off_loop(self.consumer, self.listener, "revoked", revoked)

            async def on_partitions_assigned(self, assigned: Any) -> None:
                await call_off_loop(self.consumer, self.listener, "assigned", assigned)

            async def on_partitions_lost(self, lost: Any) -> None:
                await call_off_loop(self.consumer, self.listener, "lost", lost)

        return AsyncBridge

    from kafka import ConsumerRebalanceListener

    class SyncBridge(ConsumerRebalanceListener):  # type: ignore[misc]
        def __init__(self, consumer: Any, listener: RebalanceListener) -> None:
            self.consumer = consumer
            self.listener = listener

        def on_partitions_revoked(self, revoked: Any) -> None:
            _call(self.consumer, self.listener, "revoked", revoked)

        def on_partitions_assigned(self, assigned: Any) -> None:
            _call(self.consumer, self.listener, "assigned", assigned)

        def on_partitions_lost(self, lost: Any) -> None:
            _call(self.consumer, self.listener, "lost", lost)

    return SyncBridge


def _slot(subscription: Any) -> str:
    """The subscription's listener attribute (3.0: ``rebalance_listener``; 2.x: ``listener``)."""
    return "rebalance_listener" if hasattr(subscription, "rebalance_listener") else "listener"


def refuse_second_listener(consumer: Any) -> None:
    """Raise ``ConfigurationError`` when ``subscribe()`` gave ``consumer`` a listener of its
    own (checked by ``install_hooks(listener=...)`` before anything is installed)."""
    subscription = consumer._subscription
    current = getattr(subscription, _slot(subscription), None)
    if current is not None and not isinstance(current, tuple(_BRIDGES.values())):
        raise second_listener_error(current)


def set_rebalance_listener(consumer: Any, listener: RebalanceListener) -> None:
    """Register ``listener`` (a :class:`~kafka_sticky_plugin.listener.RebalanceListener`)
    on ``consumer``, before or after ``subscribe(topics)``; Java's
    ``Consumer#setRebalanceListener``. Needs the hooks
    (:func:`~kafka_sticky_plugin.kafka_python.install_hooks` first). Calling it again
    replaces the listener. Raises ``ConfigurationError`` for a listener that is not a
    ``RebalanceListener`` (or has ``async def`` methods), a consumer without the hooks, or
    one whose ``subscribe()`` gave a listener (see the module docstring)."""
    handle = getattr(consumer, _HOOKS_ATTRIBUTE, None)
    if handle is None:
        raise ConfigurationError(
            "set_rebalance_listener needs the plugin's hooks on this consumer: call "
            "install_hooks(consumer) first (or install_hooks(consumer, listener=...))"
        )
    check_rebalance_listener(listener, coroutines=False)
    hooks = handle._impl
    subscription = consumer._subscription
    slot = _slot(subscription)
    current = getattr(subscription, slot, None)
    bridge_class = _bridge_class(hooks.family)
    if current is not None and not isinstance(current, bridge_class):
        raise second_listener_error(current)
    bridge = bridge_class(consumer, listener)
    setattr(subscription, slot, bridge)
    hooks.rebalance_bridge = bridge
    if "subscribe" not in vars(subscription):
        hooks._patch(subscription, "subscribe", _keeping(hooks, subscription, slot))


def _keeping(hooks: Any, subscription: Any, slot: str) -> Callable[..., Any]:
    """The subscription's ``subscribe``: refuses a listener while ours is registered, and
    puts ours back after the client's own (which clears the slot)."""
    original = type(subscription).subscribe

    def subscribe(*args: Any, **kwargs: Any) -> Any:
        given = kwargs.get("listener", args[2] if len(args) > 2 else None)
        bridge = getattr(hooks, "rebalance_bridge", None)
        if given is not None and bridge is not None:
            raise second_listener_error(given)
        result = original(subscription, *args, **kwargs)
        if bridge is not None:
            setattr(subscription, slot, bridge)
        return result

    return subscribe
