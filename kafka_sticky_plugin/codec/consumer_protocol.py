"""The consumer protocol's subscription and assignment, versions 0-3.

Each message starts with its int16 version. Version history (Apache Kafka's
``ConsumerProtocolSubscription.json`` / ``ConsumerProtocolAssignment.json``)::

    Subscription
      v0  topics [string], user_data nullable bytes
      v1  + owned_partitions [topic string, partitions [int32]]   (KIP-429, Kafka 2.4)
      v2  + generation_id int32, default -1                        (KIP-792, Kafka 3.4)
      v3  + rack_id nullable string, default null                  (KIP-881, Kafka 3.5)

    Assignment
      v0  assigned_partitions [topic string, partitions [int32]], user_data nullable bytes
      v1-v3  the same fields (the versions only follow the subscription's; a v1 error code
             that existed in a pre-release of Kafka 2.4 is tolerated as trailing bytes)

Reading rules (the same as the Java client's, plus one leniency):

- a version newer than 3 is read with the v3 layout and trailing bytes are ignored
  (future versions only append fields);
- a negative version is a :class:`~kafka_sticky_plugin.errors.CodecError`;
- a v1+ message that ends cleanly right before an appended field (some clients send a v1
  header with only the v0 fields) reads that field and the later ones as their defaults:
  no owned partitions, generation -1, no rack. A message that ends *inside* a field is an
  error.

Writing rules: topics and owned/assigned partitions are written in canonical form (sorted,
de-duplicated: equal values give equal bytes); fields the chosen version lacks are dropped.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

from ..errors import CodecError
from ._wire import INT16_MAX, Reader, Writer
from .sticky_user_data import UserDataClaim, read_user_data_runs
from .topic_partitions import (
    EMPTY_RUNS,
    Interned,
    TopicPartitionPair,
    TopicRuns,
    read_topic_runs,
    runs_pairs,
    write_topic_partitions,
)

__all__ = [
    "ASSIGNMENT",
    "CONSUMER_PROTOCOL_LATEST_VERSION",
    "Assignment",
    "Subscription",
    "SubscriptionRead",
    "decode_assignment",
    "decode_subscription",
    "encode_assignment",
    "encode_subscription",
    "read_subscription",
    "subscription_of",
    "version_bytes",
]

#: The highest consumer-protocol version this codec knows (rack id, KIP-881).
CONSUMER_PROTOCOL_LATEST_VERSION = 3

_SUBSCRIPTION = "consumer protocol subscription"
ASSIGNMENT = "consumer protocol assignment"


@dataclass(frozen=True)
class Subscription:
    """A member's JoinGroup metadata.

    ``version`` is the version read from (or to write to) the wire, ``0 <= version``; on
    decode a version above 3 is kept as sent while the fields follow the v3 layout.
    ``owned_partitions`` holds flat ``(topic, partition)`` pairs; ``generation_id`` is -1 when
    absent (v0, v1) and ``rack_id`` is ``None`` when absent (v0-v2).
    """

    version: int
    topics: tuple[str, ...]
    user_data: bytes | None = None
    owned_partitions: tuple[TopicPartitionPair, ...] = ()
    generation_id: int = -1
    rack_id: str | None = None


@dataclass(frozen=True)
class Assignment:
    """The leader's SyncGroup payload for one member: its partitions and user data."""

    version: int
    partitions: tuple[TopicPartitionPair, ...]
    user_data: bytes | None = None


def version_bytes(version: int, what: str) -> bytes:
    """The int16 ``version`` that starts a message; a :class:`CodecError` at offset 0 for a
    version outside ``[0, 32767]``."""
    if isinstance(version, bool) or not isinstance(version, int) or not 0 <= version <= INT16_MAX:
        raise CodecError(what, f"a version in [0, 32767], got {version!r}", 0)
    return version.to_bytes(2, "big")


def _read_version(reader: Reader) -> int:
    version = reader.int16("version")
    if version < 0:
        raise CodecError(reader.what, f"version >= 0, got {version}", 0)
    return version


def encode_subscription(subscription: Subscription) -> bytes:
    """Encode ``subscription`` at ``subscription.version`` (a version above 3 writes v3 fields)."""
    version = subscription.version
    writer = Writer(_SUBSCRIPTION)
    writer.raw(version_bytes(version, _SUBSCRIPTION))
    try:
        topics = sorted(set(subscription.topics))
    except TypeError:
        raise CodecError(_SUBSCRIPTION, "topics as str", writer.size) from None
    writer.int32(len(topics), "topics count")
    for topic in topics:
        writer.string(topic, "topic")
    writer.nullable_bytes(subscription.user_data, "user data")
    if version >= 1:
        write_topic_partitions(writer, subscription.owned_partitions, "owned partitions")
    if version >= 2:
        writer.int32(subscription.generation_id, "generation id")
    if version >= 3:
        writer.nullable_string(subscription.rack_id, "rack id")
    return writer.getvalue()


class SubscriptionRead(NamedTuple):
    """One member's subscription as the leader reads it: the fields of :class:`Subscription`,
    the owned partitions as runs (wire order), ``owned_array`` (the owned array's bytes, count
    included, when they are canonical, see :mod:`.topic_partitions`: an assignment of those
    pairs is that array between the version and the null user data; else ``None``, as when
    the field is absent) and ``claim``."""

    version: int
    topics: tuple[str, ...]
    user_data: bytes | None
    owned: TopicRuns
    generation_id: int
    rack_id: str | None
    owned_array: bytes | None
    #: The user data's :data:`~.sticky_user_data.UserDataClaim`, or the :class:`CodecError`
    #: reading it raised; ``None``: not read.
    claim: UserDataClaim | CodecError | None = None

    def subscription(self) -> Subscription:
        """The :class:`Subscription` read (owned partitions as pairs, built here)."""
        return Subscription(
            version=self.version,
            topics=self.topics,
            user_data=self.user_data,
            owned_partitions=runs_pairs(self.owned),
            generation_id=self.generation_id,
            rack_id=self.rack_id,
        )


def read_subscription(
    data: bytes | bytearray | memoryview,
    cooperative: bool | None = None,
    shared: Interned | None = None,
) -> SubscriptionRead:
    """The subscription (see the module's reading rules), with the ``claim`` of its user data
    read under ``cooperative`` unless that is ``None``. ``shared`` (one per batch): see
    :class:`~.topic_partitions.Interned`."""
    reader = Reader(data, _SUBSCRIPTION)
    version = _read_version(reader)
    names = reader.string_array("topics")
    topics = tuple(names) if shared is None else shared.topics(names)
    user_data = reader.nullable_bytes("user data")
    end = len(reader.data)
    owned: TopicRuns = EMPTY_RUNS
    owned_array: bytes | None = None
    owned_raw = b""
    generation_id = -1
    rack_id: str | None = None
    if version >= 1 and reader.pos < end:
        start = reader.pos
        owned, owned_array = read_topic_runs(reader, "owned partitions", shared)
        owned_raw = reader.data[start : reader.pos]
        if version >= 2 and reader.pos < end:
            generation_id = reader.int32("generation id")
            if version >= 3 and reader.pos < end:
                rack_id = reader.nullable_string("rack id")
    claim: UserDataClaim | CodecError | None = None
    if cooperative is not None:
        known = (owned, owned_array, owned_raw) if owned[2] else None  # the seam's Sharing
        try:
            claim = read_user_data_runs(
                user_data, cooperative=cooperative, shared=shared, owned=known
            )
        except CodecError as exc:
            claim = exc
    return SubscriptionRead(
        version, topics, user_data, owned, generation_id, rack_id, owned_array, claim
    )


def decode_subscription(data: bytes | bytearray | memoryview) -> Subscription:
    """Decode a subscription of any version (see the module's reading rules)."""
    return read_subscription(data).subscription()


def encode_assignment(assignment: Assignment) -> bytes:
    """Encode ``assignment``; every version 0-3 has the same layout."""
    writer = Writer(ASSIGNMENT)
    writer.raw(version_bytes(assignment.version, ASSIGNMENT))
    write_topic_partitions(writer, assignment.partitions, "assigned partitions")
    writer.nullable_bytes(assignment.user_data, "user data")
    return writer.getvalue()


def decode_assignment(data: bytes | bytearray | memoryview) -> Assignment:
    """Decode an assignment of any version; trailing bytes (newer fields) are ignored."""
    reader = Reader(data, ASSIGNMENT)
    version = _read_version(reader)
    runs, _ = read_topic_runs(reader, "assigned partitions")
    user_data = reader.nullable_bytes("user data")
    return Assignment(version=version, partitions=runs_pairs(runs), user_data=user_data)


def subscription_of(
    topics: Iterable[str],
    *,
    version: int = CONSUMER_PROTOCOL_LATEST_VERSION,
    user_data: bytes | None = None,
    owned_partitions: Iterable[TopicPartitionPair] = (),
    generation_id: int = -1,
    rack_id: str | None = None,
) -> Subscription:
    """Build a :class:`Subscription` with sorted topics and sorted distinct owned partitions."""
    return Subscription(
        version=version,
        topics=tuple(sorted(set(topics))),
        user_data=user_data,
        owned_partitions=tuple(sorted(set(owned_partitions))),
        generation_id=generation_id,
        rack_id=rack_id,
    )
