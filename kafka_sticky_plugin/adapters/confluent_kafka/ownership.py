"""What the listener bridge tells the commit guard (:mod:`.commit_guard`): the partitions
being lost, which count as not owned from the moment ``on_lost`` starts until librdkafka
has dropped them. Kept apart so the bridge needs no import of the guard."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["LOSING_ATTRIBUTE", "losing"]

#: the attribute of a guarded consumer holding the ``(topic, partition)`` pairs being lost
LOSING_ATTRIBUTE = "_kafka_sticky_plugin_losing"


@contextmanager
def losing(consumer: Any, partitions: Any) -> Iterator[None]:
    """While the bridge handles ``on_lost``: ``partitions`` are not owned (nothing happens
    on a consumer without the guard)."""
    state = getattr(consumer, "__dict__", {}).get(LOSING_ATTRIBUTE)
    if state is None:
        yield
        return
    pairs = {(str(tp.topic), int(tp.partition)) for tp in partitions}
    state.update(pairs)
    try:
        yield
    finally:
        state.difference_update(pairs)
