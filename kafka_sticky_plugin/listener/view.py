"""The restricted consumer a KIP-1306 rebalance callback receives.

Java 4.5's ``RebalanceConsumer`` exposes only what is safe while the group rebalances:
offset management (``commitSync``, ``commitAsync``, ``committed``, ``position``), seeks,
partition state (``assignment``, ``paused``, ``pause``, ``resume``) and read-only queries;
``poll``, ``close``, ``subscribe``, ``unsubscribe``, ``assign``, ``wakeup`` and
``enforceRebalance`` are absent. :data:`JAVA_OPERATIONS` is that list in the Python clients'
spelling; each client's binding offers the subset its client has (a client without an
equivalent call leaves it out).

Invariants:

- an attribute outside the offered operations raises :class:`RebalanceConsumerError` (an
  ``AttributeError``, so ``hasattr(view, "poll")`` is False, as the method is absent in
  Java), naming what is allowed;
- once :meth:`RebalanceConsumer._invalidate` ran (the callback returned), every attribute,
  and every operation fetched earlier and called later, raises
  :class:`RebalanceConsumerClosedError` (Java's ``IllegalStateException``);
- the view holds no state of its own: each operation is the client's call, so the commit
  guard and the hooks see it as any other call of the consumer.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ..errors import StickyPluginError

__all__ = [
    "JAVA_OPERATIONS",
    "RebalanceConsumer",
    "RebalanceConsumerClosedError",
    "RebalanceConsumerError",
    "java_operations_except",
    "view_of",
]

#: Java's permitted operations (``RebalanceConsumer``, Kafka 4.5), keyed by the Python
#: clients' name for them; the value is Java's name.
JAVA_OPERATIONS: Mapping[str, str] = {
    "commit": "commitSync",
    "commit_async": "commitAsync",
    "committed": "committed",
    "position": "position",
    "seek": "seek",
    "seek_to_beginning": "seekToBeginning",
    "seek_to_end": "seekToEnd",
    "assignment": "assignment",
    "paused": "paused",
    "pause": "pause",
    "resume": "resume",
    "beginning_offsets": "beginningOffsets",
    "end_offsets": "endOffsets",
    "offsets_for_times": "offsetsForTimes",
    "partitions_for_topic": "partitionsFor",
    "topics": "listTopics",
    "group_metadata": "groupMetadata",
}


def java_operations_except(*absent: str) -> tuple[str, ...]:
    """:data:`JAVA_OPERATIONS`' names, in its order, but ``absent`` (a binding's offer)."""
    return tuple(name for name in JAVA_OPERATIONS if name not in absent)


#: Consumer calls Java leaves out of the view on purpose, and why (for the error message).
_EXCLUDED_WHY = (
    "poll, close, subscribe, unsubscribe, assign, wakeup and enforce_rebalance belong to the "
    "consumer's own loop, not to a rebalance callback (KIP-1306)"
)


class RebalanceConsumerError(StickyPluginError, AttributeError):
    """An operation a :class:`RebalanceConsumer` does not offer (Java's view has no such
    method); the message lists the ones it offers."""


class RebalanceConsumerClosedError(StickyPluginError, RuntimeError):
    """A :class:`RebalanceConsumer` used after its callback returned (Java:
    ``IllegalStateException``)."""


class RebalanceConsumer:
    """The view of one consumer given to one rebalance callback (see the module docstring).

    ``operations``: name -> the client's callable, names from :data:`JAVA_OPERATIONS`;
    ``callback``: the listener method it was made for; ``client``: for the messages.
    Built by a client's binding, never by users.
    """

    __slots__ = ("_callback", "_client", "_operations", "_valid")

    _operations: dict[str, Callable[..., Any]]
    _callback: str
    _client: str
    _valid: bool

    def __init__(
        self, operations: Mapping[str, Callable[..., Any]], *, callback: str, client: str
    ) -> None:
        unknown = sorted(set(operations) - set(JAVA_OPERATIONS))
        if unknown:
            raise ValueError(f"not operations of Java's RebalanceConsumer: {unknown}")
        object.__setattr__(self, "_operations", dict(operations))
        object.__setattr__(self, "_callback", callback)
        object.__setattr__(self, "_client", client)
        object.__setattr__(self, "_valid", True)

    @property
    def operations(self) -> tuple[str, ...]:
        """The operations this view offers, in :data:`JAVA_OPERATIONS` order."""
        return tuple(name for name in JAVA_OPERATIONS if name in self._operations)

    @property
    def valid(self) -> bool:
        """True until the callback this view was given to has returned."""
        return self._valid

    def _invalidate(self) -> None:
        """Called by the binding when the callback returned (not by users)."""
        object.__setattr__(self, "_valid", False)

    def _closed_error(self, name: str) -> RebalanceConsumerClosedError:
        return RebalanceConsumerClosedError(
            f"this RebalanceConsumer ({self._client}) was given to {self._callback} and is no "
            f"longer valid: that callback returned, so {name} cannot run; use the consumer "
            "itself outside rebalance callbacks"
        )

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        if not self._valid:
            raise self._closed_error(name)
        operation = self._operations.get(name)
        if operation is None:
            offered = ", ".join(self.operations)
            raise RebalanceConsumerError(
                f"RebalanceConsumer has no {name!r}: inside {self._callback} it offers only "
                f"Java's rebalance-safe operations ({offered}); {_EXCLUDED_WHY}"
            )

        if inspect.iscoroutinefunction(operation):  # stays a coroutine function (aiokafka)

            @functools.wraps(operation)
            async def checked_async(*args: Any, **kwargs: Any) -> Any:
                if not self._valid:
                    raise self._closed_error(name)
                return await operation(*args, **kwargs)

            return checked_async

        @functools.wraps(operation)
        def checked(*args: Any, **kwargs: Any) -> Any:
            if not self._valid:
                raise self._closed_error(name)
            return operation(*args, **kwargs)

        return checked

    def __setattr__(self, name: str, value: Any) -> None:
        raise RebalanceConsumerError(f"RebalanceConsumer is read-only (cannot set {name!r})")

    def __dir__(self) -> list[str]:
        return [*self.operations, "operations", "valid"]

    def __repr__(self) -> str:
        state = "valid" if self._valid else "no longer valid"
        return f"<RebalanceConsumer {self._client} in {self._callback}, {state}>"


def view_of(
    consumer: Any, offered: Iterable[str], *, callback: str, client: str
) -> RebalanceConsumer:
    """A fresh view of ``consumer`` for one call of ``callback``: those of ``offered`` that
    the consumer has, each its own bound method (the step the attribute-based bindings share)."""
    operations = {name: getattr(consumer, name) for name in offered if hasattr(consumer, name)}
    return RebalanceConsumer(operations, callback=callback, client=client)
