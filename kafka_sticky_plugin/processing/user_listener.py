"""Calling the user's own rebalance listener from a processing helper's listener.

The helper's listener does its own work first (wait, commit, forget), then calls the user's
method of the same name, if the user gave a listener that has it; a plain function's result
or a coroutine is awaited alike. Lost partitions go to ``on_partitions_lost`` or, for a
listener without it, to ``on_partitions_revoked`` (Java's default method).
"""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from typing import Any, Literal

__all__ = ["ProcessingListenerSteps", "call_user", "lost_method"]


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


class ProcessingListenerSteps(ABC):
    """A processing helper's async rebalance listener, in the order every client keeps:
    revoked: the processor hands the partitions over (waits, commits the finished work)
    before the user's method runs; assigned: the user's method only; lost: the processor
    forgets the partitions (commits nothing: another member owns them) before the user's
    method runs. Each method gets its own copy of the partitions. A client supplies the
    steps (``_hand_over``, ``_forget``, ``_tell``)."""

    async def on_partitions_revoked(self, revoked: set[Any]) -> None:
        partitions = set(revoked)
        await self._hand_over(partitions)
        await self._tell("revoked", partitions)

    async def on_partitions_assigned(self, assigned: set[Any]) -> None:
        await self._tell("assigned", set(assigned))

    async def on_partitions_lost(self, lost: set[Any]) -> None:
        partitions = set(lost)
        self._forget(partitions)
        await self._tell("lost", partitions)

    @abstractmethod
    async def _hand_over(self, partitions: set[Any]) -> None:
        """Wait for the running work of ``partitions`` and commit what finished."""

    @abstractmethod
    def _forget(self, partitions: set[Any]) -> None:
        """Drop ``partitions`` without committing anything."""

    @abstractmethod
    async def _tell(
        self, kind: Literal["revoked", "assigned", "lost"], partitions: set[Any]
    ) -> None:
        """Call the user's listener for ``kind`` (after the processor's own step)."""
