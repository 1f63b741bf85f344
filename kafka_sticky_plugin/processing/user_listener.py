"""Calling the user's own rebalance listener from a processing helper's listener.

The helper's listener does its own work first (wait, commit, forget), then calls the user's
method of the same name, if the user gave a listener that has it; a plain function's result
or a coroutine is awaited alike. Lost partitions go to ``on_partitions_lost`` or, for a
listener without it, to ``on_partitions_revoked`` (Java's default method).
"""

from __future__ import annotations

import inspect
from typing import Any

__all__ = ["call_user", "lost_method"]


def lost_method(user: Any) -> str:
    """The user's method that receives lost partitions."""
    return "on_partitions_lost" if hasattr(user, "on_partitions_lost") else "on_partitions_revoked"


async def call_user(user: Any, name: str, partitions: set[Any]) -> None:
    """Call ``user.<name>(partitions)`` when it exists, awaiting what it returns if awaitable."""
    method = getattr(user, name, None)
    if method is None:
        return
    result = method(partitions)
    if inspect.isawaitable(result):
        await result
