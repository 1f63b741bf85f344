"""Calling an aiokafka ``ConsumerRebalanceListener`` the way the Java client does.

- Each method may be a plain function or a coroutine function; a returned awaitable is
  awaited before the rebalance goes on.
- ``on_partitions_lost`` (not part of aiokafka's listener class) is called when the listener
  defines it; otherwise ``on_partitions_revoked`` receives the lost partitions, as Java's
  default method does.
- A listener that raises does not stop the rebalance: the exception is logged (as aiokafka
  does for its own calls) and the bookkeeping goes on.
- Every call receives a fresh ``set`` of aiokafka ``TopicPartition``.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Iterable
from typing import Any

__all__ = ["call_listener"]

log = logging.getLogger("kafka_sticky_plugin.aiokafka")


async def call_listener(listener: Any, name: str, partitions: Iterable[Any], group: str) -> bool:
    """Call ``listener.<name>(set(partitions))``, awaiting it when it returns an awaitable.

    Returns whether the call completed without raising (a missing listener counts as done).
    """
    if listener is None:
        return True
    method = getattr(listener, name, None)
    if not callable(method):
        return True
    try:
        result = method(set(partitions))
        if inspect.isawaitable(result):
            await result
    except Exception:
        log.exception("rebalance listener %r failed in %s for group %s", listener, name, group)
        return False
    return True
