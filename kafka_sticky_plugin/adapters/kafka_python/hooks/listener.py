"""Calling the user's rebalance listener the way the Java client does.

- ``on_partitions_lost`` falls back to ``on_partitions_revoked`` when the listener has no
  such method (kafka-python 2.x listeners predate KIP-429), as Java's default method does
  (:func:`kafka_sticky_plugin.assignor.decisions.lost_method_name`).
- A listener that raises does not stop the rebalance bookkeeping: the exception is logged
  and returned to the caller, which decides whether to re-raise after cleaning up.
- Every call receives a fresh ``set`` of ``TopicPartition`` (the client's own type), so a
  listener that mutates its argument cannot corrupt the coordinator's state.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Iterable
from typing import Any

__all__ = ["call_sync", "listener_method", "rebalance_listener"]

log = logging.getLogger("kafka_sticky_plugin.hooks")


def rebalance_listener(subscription: Any) -> Any | None:
    """The listener registered with ``subscribe(..., listener=...)`` on any client version."""
    listener = getattr(subscription, "rebalance_listener", None)
    if listener is None:
        listener = getattr(subscription, "listener", None)
    return listener


def listener_method(listener: Any, name: str) -> Any | None:
    """The bound listener method ``name`` or ``None``; coroutine functions are returned as is."""
    method = getattr(listener, name, None)
    return method if callable(method) else None


def call_sync(
    listener: Any, name: str, partitions: Iterable[Any], group_id: str
) -> BaseException | None:
    """Call ``listener.name(set(partitions))``; return the exception it raised, if any."""
    method = listener_method(listener, name)
    if method is None:
        return None
    try:
        result = method(set(partitions))
        if inspect.isawaitable(result):  # an async listener on a sync client: cannot await
            raise TypeError(
                f"{name} is a coroutine function; this client calls listeners synchronously"
            )
    except Exception as exc:
        log.exception("rebalance listener %r failed in %s for group %s", listener, name, group_id)
        return exc
    return None
