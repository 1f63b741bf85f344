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
revoke-time commit), so the loop or the rebalance goes on; a failure is ``False``, never an
exception, and one WARNING line: a failure for want of a coordinator says the records
consumed since the last commit will be delivered again (which is safe).

A periodic commit refused because the group is rebalancing (aiokafka's ``CommitFailedError``
after REBALANCE_IN_PROGRESS, ILLEGAL_GENERATION or UNKNOWN_MEMBER_ID; its
``IllegalStateError`` for a partition revoked since the loop read the assignment; the commit
guard's ``CommitRefusedError``) loses nothing by itself:
the partitions the member keeps are committed by its next commit after the rebalance, and the
revoked ones by ``commit_on_revoke`` in ``on_partitions_revoked``; only the records of
partitions the member loses before either commit are delivered again. That is said once per
rebalance (the first refusal); further refusals until a commit succeeds again are DEBUG lines.

Invariant: it commits exactly ``offsets``, never the consumer's other positions.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any

from ...errors import CommitRefusedError

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
    group = getattr(consumer, "_group_id", "?")
    try:
        await asyncio.wait_for(consumer.commit(dict(offsets)), budget / 1000)
    except asyncio.TimeoutError:
        reason = f"no group coordinator answered within {budget} ms"
    except (errors.KafkaError, CommitRefusedError) as exc:
        if _refused_by_a_rebalance(exc, errors):
            _rebalance_refusal(consumer, group, len(offsets), exc)
            return False
        reason = f"{type(exc).__name__}: {exc}"
    else:
        vars(consumer).pop(_WARNED, None)  # the rebalance is over: warn again at the next
        return True
    log.warning(
        "group %s: commit of %d partitions failed (%s); records consumed since their last"
        " commit will be delivered again",
        group,
        len(offsets),
        reason,
    )
    return False


#: Set on the consumer from a rebalance's first refused commit to the next commit that lands.
_WARNED = "_kafka_sticky_plugin_rebalance_commit_warned"


def _refused_by_a_rebalance(exc: BaseException, errors: Any) -> bool:
    """The group refused the commit (its generation is over), or the partitions left this
    member in the rebalance between reading the assignment and committing (aiokafka's
    ``IllegalStateError: Partition ... is not assigned``; the commit guard's refusal)."""
    group_errors = (
        errors.CommitFailedError,
        errors.RebalanceInProgressError,
        errors.IllegalGenerationError,
        errors.UnknownMemberIdError,
    )
    if isinstance(exc, group_errors) or isinstance(exc.__cause__, group_errors):
        return True
    if isinstance(exc, CommitRefusedError):
        return True
    return isinstance(exc, errors.IllegalStateError) and "is not assigned" in str(exc)


def _rebalance_refusal(consumer: Any, group: str, count: int, exc: BaseException) -> None:
    cause = exc.__cause__ if exc.__cause__ is not None else exc
    if vars(consumer).get(_WARNED):
        log.debug(
            "group %s: commit of %d partitions refused again during the rebalance (%s)",
            group,
            count,
            type(cause).__name__,
        )
        return
    vars(consumer)[_WARNED] = True
    log.warning(
        "group %s: commits refused while the group rebalances (%s); nothing is lost by it:"
        " kept partitions are committed by the next commit after the rebalance, revoked ones"
        " by commit_on_revoke in on_partitions_revoked; only records of partitions lost"
        " before either commit are delivered again (further refusals in this rebalance: DEBUG)",
        group,
        type(cause).__name__,
    )
