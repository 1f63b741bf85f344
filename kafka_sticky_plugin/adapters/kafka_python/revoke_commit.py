"""Commit-on-revoke that survives a group coordinator move (kafka-python 3.0.x).

The usual pattern, ``await consumer.commit_async(offsets)`` in an
``AsyncConsumerRebalanceListener.on_partitions_revoked``, sends one OffsetCommit and gives up
at the first failure. When the group coordinator's broker has just died, that failure is
``NotCoordinatorError`` or a refused connection, the partitions leave uncommitted, and their
next owner re-delivers everything consumed since the last periodic commit (34-196 records per
run in issue 29's trials). Java's ``commitSync`` in ``onPartitionsRevoked`` retries retriable
errors instead (re-finding the coordinator) and re-delivers nothing.

:func:`commit_on_revoke` is that retrying commit: retriable errors (coordinator moved or
unreachable, request timed out) are retried with the client's backoff until the revocation
deadline (:func:`~.hooks.common.pre_rebalance_commit_timeout_ms`: ``request_timeout_ms``, at
most half of ``max_poll_interval_ms``, the same bound the hooks give their own pre-rebalance
commit), so the revocation never holds up the rebalance longer than the group allows; a
final failure is one WARNING line and ``False`` (nothing is raised into the rebalance: the
records are then delivered again, which is safe).

Invariant: it commits exactly ``offsets`` (the caller's positions for the revoked partitions),
never the consumer's other positions.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .hooks.common import log_commit_failure, pre_rebalance_commit_timeout_ms

__all__ = ["commit_on_revoke"]


async def commit_on_revoke(
    consumer: Any, offsets: Mapping[Any, Any], timeout_ms: int | None = None
) -> bool:
    """Await inside ``on_partitions_revoked`` of an ``AsyncConsumerRebalanceListener``
    (kafka-python 3.0.x): commit ``offsets`` (``{TopicPartition: OffsetAndMetadata}``),
    retrying until ``timeout_ms`` (default: the revocation deadline, module docstring).
    True when committed; False, with one WARNING line, when it could not be."""
    if not offsets:
        return True
    coordinator = consumer._coordinator
    budget = (
        timeout_ms
        if timeout_ms is not None
        else pre_rebalance_commit_timeout_ms(consumer.config, None)
    )
    try:
        await coordinator._commit_offsets_sync_async(dict(offsets), timeout_ms=budget)
    except Exception as exc:  # reported in one line; the rebalance goes on
        log_commit_failure(str(coordinator.group_id), len(offsets), exc, budget)
        return False
    return True
