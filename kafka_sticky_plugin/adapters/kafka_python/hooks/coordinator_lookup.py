"""Finding the group coordinator on kafka-python 3.0.x without raising a broker outage out of
``poll()`` and without a FindCoordinator storm: the hooks' replacement for the coordinator's
``ensure_coordinator_ready_async``.

What 3.0.12 does wrong (seen on a 3-broker cluster whose coordinator's broker was killed):

1. **A connection failure escapes.** When the lookup fails with an ``InvalidMetadataError``
   (``KafkaConnectionError`` is one), it awaits a metadata refresh and does not catch *its*
   failure: ``KafkaConnectionError('111 ECONNREFUSED')`` comes out of ``consumer.poll()``.
   This is the only path in 3.0.12's lookup that lets a connection failure out (read from
   its source; issue 29 saw it 1-4 times per run from hooked eager members). Why eager hooked
   members met it more is not established: a likely reason is that between its revoke and
   its next assignment an eager member's every ``poll()`` drives ``join_group_async``, whose
   every turn looks the coordinator up (the hooks keep ``need_rejoin()`` true while a join is
   in flight). Whatever the caller, the replacement below catches it.
2. **No backoff after a lookup that found a dead coordinator.** Until the controller fences
   the dead broker (``broker.session.timeout.ms``), FindCoordinator names it; the connection
   fails at once, the coordinator is marked unknown and looked up again immediately. The
   heartbeat loop of a member that stays stable (cooperative: it keeps its partitions) does
   exactly that in a tight loop (``await lookup_coordinator()``, a backoff only on an error):
   about 200 FindCoordinator requests a second per member (54/s measured on a loaded
   machine). Java backs off (``retry.backoff.ms``, growing to ``retry.backoff.max.ms``).

:class:`CoordinatorLookup` gates ``lookup_coordinator`` itself, whoever calls it (the poll
path, the heartbeat loop, an async commit): a lookup sent while the previous one is less than
the backoff old is not sent; the caller gets a future that completes (with no coordinator)
when the backoff has passed, and looks again. The backoff starts at ``retry_backoff_ms``,
doubles with each lookup up to ``retry_backoff_max_ms`` (1000 ms when the client has no
such setting), and restarts once the consumer is connected to a known coordinator. In
``ensure_coordinator_ready_async`` every retriable error (the metadata refresh's included)
means "not ready yet": it returns False when its timer runs out, as for a timeout;
non-retriable errors (authorization) still raise.
"""

from __future__ import annotations

import time
from typing import Any

__all__ = ["CoordinatorLookup"]

_DEFAULT_BACKOFF_MAX_MS = 1000


class CoordinatorLookup:
    """Per-consumer state of the coordinator lookup (see the module docstring).

    Invariants: ``_next_lookup_at`` is a ``time.monotonic()`` instant before which no
    FindCoordinator is sent; the backoff restarts from ``retry_backoff_ms`` only when the
    consumer is connected to a known coordinator.
    """

    def __init__(self, coordinator: Any, original_lookup: Any) -> None:
        self._coordinator = coordinator
        self._original_lookup = original_lookup
        config = coordinator.config
        self._base_ms = max(float(config.get("retry_backoff_ms", 100)), 1.0)
        self._max_ms = max(
            float(config.get("retry_backoff_max_ms", _DEFAULT_BACKOFF_MAX_MS)), self._base_ms
        )
        self._backoff_ms = self._base_ms
        self._next_lookup_at = 0.0
        #: How many FindCoordinator rounds this consumer started (read by tests).
        self.lookups = 0

    def _reset_if_connected(self) -> None:
        coordinator = self._coordinator
        node = coordinator.coordinator_id
        if node is not None and coordinator._client.connected(node):
            self._backoff_ms = self._base_ms
            self._next_lookup_at = 0.0

    def lookup_coordinator(self) -> Any:
        """The client's lookup, at most once per backoff interval (module docstring)."""
        from kafka.future import Future

        wait_s = self._next_lookup_at - time.monotonic()
        if wait_s > 0:
            later: Any = Future()

            def release() -> None:
                if not later.is_done:
                    later.success(None)

            self._coordinator._manager._net.call_later(wait_s, release)
            return later
        self._next_lookup_at = time.monotonic() + self._backoff_ms / 1000
        self._backoff_ms = min(self._backoff_ms * 2, self._max_ms)
        self.lookups += 1
        return self._original_lookup()

    async def ensure_coordinator_ready_async(self, timeout_ms: int | None = None) -> bool:
        """True once the coordinator is known; False when ``timeout_ms`` ran out first.
        Raises only non-retriable errors."""
        import kafka.errors as kafka_errors
        from kafka.util import Timer

        coordinator = self._coordinator
        manager = coordinator._manager
        timer = Timer(timeout_ms)
        while coordinator.coordinator_unknown():
            try:
                await manager.wait_for(coordinator.lookup_coordinator(), timer.timeout_ms)
            except kafka_errors.KafkaTimeoutError:
                return False
            except kafka_errors.InvalidMetadataError:
                try:
                    await manager.wait_for(coordinator._cluster.request_update(), timer.timeout_ms)
                except kafka_errors.KafkaTimeoutError:
                    return False
                except kafka_errors.KafkaError as exc:
                    if not exc.retriable:
                        raise
            except kafka_errors.KafkaError as exc:
                if not exc.retriable:
                    raise
            if timer.expired:
                return not coordinator.coordinator_unknown()
        self._reset_if_connected()
        return True
