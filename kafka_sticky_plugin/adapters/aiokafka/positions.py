"""Replacing an aiokafka assignment while keeping the fetch state of the partitions that stay.

aiokafka builds a new ``Assignment`` (fresh per-partition state: no position, awaiting the
committed offset) every time the assignment changes. Under COOPERATIVE most partitions stay
with their member across a rebalance; for those the consumed position, pause state and
high-water marks are carried over, so consumption resumes where it was instead of rewinding
to the last committed offset.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["assign_keeping_positions"]


def assign_keeping_positions(
    subscription_state: Any, partitions: Iterable[Any], previous: Any | None
) -> None:
    """Set the consumer's assignment to ``partitions`` (aiokafka ``TopicPartition``; all of
    subscribed topics); a partition also held by ``previous`` (an aiokafka ``Assignment``, or
    ``None``) keeps its position, reset strategy, pause state and marks."""
    wanted = set(partitions)
    carried: dict[Any, Any] = {}
    if previous is not None:
        for tp in wanted:
            state = previous.state_value(tp)
            if state is not None:
                carried[tp] = state
    subscription_state.assign_from_subscribed(wanted)
    current = subscription_state.subscription.assignment
    for tp, old in carried.items():
        new = current.state_value(tp)
        if old.has_valid_position:
            new.seek(old.position)
        elif old.awaiting_reset:
            new.await_reset(old.reset_strategy)
        new.highwater = old.highwater
        new.lso = old.lso
        new.timestamp = old.timestamp
        if old.paused:
            new.pause()
