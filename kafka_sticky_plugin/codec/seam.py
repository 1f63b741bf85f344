"""The leader's wire seam: the one narrow interface between the leader and the bytes.

The seam (stable signatures; a compiled twin implements exactly these three functions and
the one result type, and must give equal values, equal bytes and equal errors)::

    read_subscriptions(payloads: Sequence[bytes]) -> list[SubscriptionRead | CodecError]
    read_user_data_claim(user_data: bytes | None, cooperative: bool)
        -> tuple[tuple[tuple[str, int], ...], int]
    write_assignments(version: int, topics: Sequence[str], counts: Sequence[int],
                      plans: Sequence[Sequence[int]]) -> list[bytes]

    class SubscriptionRead(NamedTuple):
        subscription: Subscription
        owned_array: bytes | None

Everything the leader does between them is the engine's, on typed values: the leader reads
every member's JoinGroup metadata with :func:`read_subscriptions`, reads each member's user
data claim through its strategy's ``read_claim`` (which is :func:`read_user_data_claim`),
builds the engine's specs, runs the engine, and writes every member's plan (ascending dense
indices) with :func:`write_assignments`.

Invariants every implementation keeps:

- **Canonical order.** Writers emit topics sorted (Python ``str`` order: code points), each
  once, each with its partitions strictly increasing, no empty topic: equal sets give equal
  bytes. Readers return what was sent in wire order (no sorting, no de-duplication: that is
  the engine's policy, :class:`~kafka_sticky_plugin.core.MemberSpec`).
- **Null arrays.** An array count of -1 (a null array; Kafka's generated writers never send
  one for these non-nullable arrays, but some clients do) reads as empty, and is decided in
  one place (:meth:`~._wire.Reader.array_count`); every writer writes count 0 for no
  elements, never -1. A null array is therefore never canonical: ``owned_array`` is ``None``
  for it, so it is never handed back as an assignment.
- **Errors.** A malformed message is a :class:`~kafka_sticky_plugin.errors.CodecError`
  naming the message, what was expected and the byte offset where the offending field
  starts (offset 0 is the message's first byte). :func:`read_subscriptions` returns it in
  the member's place instead of raising, so one member never stops the group.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from ..errors import CodecError
from .consumer_protocol import Subscription, read_subscription_with_owned_array
from .sticky_user_data import read_user_data_claim as _read_user_data_claim
from .topic_partitions import DenseTopics, TopicPartitionPair

__all__ = [
    "SEAM",
    "SubscriptionRead",
    "read_subscriptions",
    "read_user_data_claim",
    "write_assignments",
]

#: The seam's functions, by name: what a compiled twin provides.
SEAM = ("read_subscriptions", "read_user_data_claim", "write_assignments")

_NULL_USER_DATA = b"\xff\xff\xff\xff"


class SubscriptionRead(NamedTuple):
    """One member's subscription as read, with its owned partitions array's raw bytes.

    ``subscription`` is exactly :func:`~.consumer_protocol.decode_subscription` of the
    payload (owned partitions as flat ``(topic, partition)`` pairs in wire order).
    ``owned_array`` is the bytes of the owned partitions array (its count included) exactly
    as sent when they are *canonical*, that is exactly the bytes the canonical writer writes
    for those pairs (topics strictly increasing, partitions strictly increasing within each
    topic, no empty topic, count not -1); ``None`` otherwise, and when the message has no
    owned partitions field (v0, or a v1+ message that ends before it). An assignment of
    exactly those pairs is that array between the version and the null user data.
    """

    subscription: Subscription
    owned_array: bytes | None


def read_subscriptions(payloads: Sequence[bytes]) -> list[SubscriptionRead | CodecError]:
    """Every payload read as a consumer protocol subscription of any version (reading rules:
    :mod:`.consumer_protocol`), in payload order: a :class:`SubscriptionRead`, or the
    :class:`CodecError` that reading it raised (returned, not raised)."""
    out: list[SubscriptionRead | CodecError] = []
    for payload in payloads:
        try:
            out.append(SubscriptionRead(*read_subscription_with_owned_array(payload)))
        except CodecError as exc:
            out.append(exc)
    return out


def read_user_data_claim(
    user_data: bytes | None, cooperative: bool
) -> tuple[tuple[TopicPartitionPair, ...], int]:
    """``(previous partitions in wire order, generation or -1)`` claimed by a member's
    subscription user data (the rules: :func:`.sticky_user_data.read_user_data_claim`).

    Null or empty user data claims nothing: ``((), -1)``. Under ``cooperative``, exactly 4
    bytes are Java's cooperative user data (the int32 generation, no partitions); anything
    else is sticky user data (v1: the array then the int32 generation, which must end the
    bytes; else v0: the array alone, which must end the bytes). A negative generation reads
    as -1. Raises :class:`CodecError` when the bytes are neither (the caller treats the
    member as having no history).
    """
    return _read_user_data_claim(user_data, cooperative=cooperative)


def write_assignments(
    version: int,
    topics: Sequence[str],
    counts: Sequence[int],
    plans: Sequence[Sequence[int]],
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
    head = version_head(version)
    space = DenseTopics(topics, counts)
    try:
        return [head + space.write(plan) + _NULL_USER_DATA for plan in plans]
    except CodecError as exc:
        raise CodecError(exc.what, exc.expected, 2) from None


def version_head(version: int) -> bytes:
    """The int16 version that starts an assignment; :class:`CodecError` at offset 0 for a
    version outside ``[0, 32767]``."""
    if isinstance(version, bool) or not isinstance(version, int) or not 0 <= version <= 32767:
        raise CodecError(
            "consumer protocol assignment", f"a version in [0, 32767], got {version!r}", 0
        )
    return version.to_bytes(2, "big")
