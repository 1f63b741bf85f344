"""A commit that gives up in time (aiokafka): for ``on_partitions_revoked`` and for the
periodic commit of a poll loop.

aiokafka's ``consumer.commit()`` retries every retriable error without a bound: while the
group coordinator's broker is down and no other broker has taken the group over yet, it waits
for a coordinator that is not there. In ``on_partitions_revoked`` that holds up the rebalance;
in a poll loop it holds up ``getmany``, and once the loop has not called ``getmany`` for
``max_poll_interval_ms`` aiokafka's heartbeat task leaves the group: every partition is given
up uncommitted and read again from the last commit. The faults tier measured it (issue 29): the
coordinator's broker SIGKILLed, a new coordinator ready ~9 s later, a 10 s poll interval, and
all four members left and rejoined with new member ids, re-delivering 600-900 records per run
where Java, whose ``commitSync`` is bounded, re-delivered about 130.

:func:`commit_on_revoke` bounds the commit by the revocation deadline (``request_timeout_ms``,
at most half of ``max_poll_interval_ms``: the same bound the kafka-python hooks give their
revoke-time commit), so the loop or the rebalance goes on; a failure is one WARNING line and
``False``, never an exception (the records are then delivered again, which is safe).

Invariant: it commits exactly ``offsets``, never the consumer's other positions.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any

__all__ = ["commit_deadline_ms", "commit_on_revoke"]

log = logging.getLogger("kafka_sticky_plugin.aiokafka")


def commit_deadline_ms(consumer: Any) -> int:
    """The revocation deadline of ``consumer`` (an ``AIOKafkaConsumer``): its
    ``request_timeout_ms``, at most half of its ``max_poll_interval_ms``."""
    return min(int(consumer._request_timeout_ms), int(consumer._max_poll_interval_ms) // 2)


async def commit_on_revoke(
    consumer: Any, offsets: Mapping[Any, Any], timeout_ms: int | None = None
) -> bool:
    """Commit ``offsets`` (``{TopicPartition: offset or OffsetAndMetadata}``) with
    ``consumer.commit``, retried by aiokafka until ``timeout_ms`` (default:
    :func:`commit_deadline_ms`). True when committed; False, with one WARNING line, when it
    was not (module docstring)."""
    if not offsets:
        return True
    import aiokafka.errors as errors

    budget = timeout_ms if timeout_ms is not None else commit_deadline_ms(consumer)
    try:
        await asyncio.wait_for(consumer.commit(dict(offsets)), budget / 1000)
    except asyncio.TimeoutError:
        reason = f"no group coordinator answered within {budget} ms"
    except errors.KafkaError as exc:
        reason = f"{type(exc).__name__}: {exc}"
    else:
        return True
    log.warning(
        "group %s: commit of %d partitions failed (%s); records consumed since their last"
        " commit will be delivered again",
        getattr(consumer, "_group_id", "?"),
        len(offsets),
        reason,
    )
    return False
