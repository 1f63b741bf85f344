"""The leader's wire seam: the one narrow interface between the leader and the bytes.

Two functions with stable signatures, which a compiled twin implements too (equal values,
equal bytes, equal errors): :func:`read_subscriptions` (every member's JoinGroup metadata
as a :class:`~.consumer_protocol.SubscriptionRead`, its user data's claim included) and
:func:`write_assignments` (every member's plan). The leader builds the engine's specs from
the runs read (``MemberSpec.from_runs``), runs the engine and writes the plans; everything
between is the engine's, on typed values.

Claims cross the seam as runs (:data:`~.topic_partitions.TopicRuns`, the engine's
``OwnedRuns``: their partitions one ``array("i")``), never as an object per partition; plans
as ascending dense indices. Readers return what was sent in wire order (sorting and
de-duplicating are the engine's policy, ``core.spec.canonical_runs``); writers write the
canonical form (:mod:`.topic_partitions`).

Invariants every implementation keeps:

- **Sharing.** Within one call, equal topic names are one ``str`` and equal topic tuples
  one ``tuple`` (the engine steps' twin reads each distinct tuple once), and a member's
  claim whose user data starts with its owned array's bytes, when that array holds a
  partition, is the owned runs' object (ours and librdkafka's members write the list
  twice; the copy is not read again); values never depend on it.
- **Errors.** A malformed message is a :class:`~kafka_sticky_plugin.errors.CodecError`
  (see :mod:`._wire`), returned in the member's place instead of raised, so one member
  never stops the group.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import CodecError
from .consumer_protocol import ASSIGNMENT, SubscriptionRead, read_subscription, version_bytes
from .topic_partitions import ArrayWriter, DenseTopics, Interned

__all__ = ["SEAM", "SubscriptionRead", "read_subscriptions", "write_assignments"]

#: The seam's functions, by name: what a compiled twin provides.
SEAM = ("read_subscriptions", "write_assignments")

_NULL = b"\xff\xff\xff\xff"  # null user data


def read_subscriptions(
    payloads: Sequence[bytes], cooperative: bool
) -> list[SubscriptionRead | CodecError]:
    """Every payload read as a subscription (:mod:`.consumer_protocol`), in order: a
    :class:`SubscriptionRead` with its user data's ``claim`` read under ``cooperative``, or
    the :class:`CodecError` reading it raised."""
    shared = Interned()
    out: list[SubscriptionRead | CodecError] = []
    for payload in payloads:
        try:
            out.append(read_subscription(payload, cooperative, shared))
        except CodecError as exc:
            out.append(exc)
    return out


def write_assignments(
    version: int, topics: Sequence[str], counts: Sequence[int], plans: Sequence[Sequence[int]]
) -> list[bytes]:
    """Every plan written as a consumer protocol assignment of ``version``, null user data.

    The dense space: ``topics`` (strictly increasing names) and ``counts`` (their partition
    counts) number every partition; topic ``t``'s partition ``p`` is the global index
    ``sum(counts[:t]) + p``. ``plans[i]`` is one member's strictly increasing global
    indices; the result's item ``i`` is the assignment of those partitions, the same bytes
    as :func:`~.consumer_protocol.encode_assignment` of their ``(topic, partition)`` pairs.

    Raises :class:`CodecError` for a version outside ``[0, 32767]`` (offset 0) or a topic
    name that cannot be written (offset 2, where the array starts), and ``ValueError`` when
    a plan is not strictly increasing indices of the dense space.
    """
    head = version_bytes(version, ASSIGNMENT)
    space = DenseTopics(topics, counts)
    array = ArrayWriter(topics, ASSIGNMENT, "assigned partitions", 2)
    return [head + array.write(space.runs(plan)) + _NULL for plan in plans]
