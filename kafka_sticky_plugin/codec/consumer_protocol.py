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

Writing rules: topics and owned/assigned partitions are written sorted and de-duplicated,
so equal values always give equal bytes; fields the chosen version lacks are dropped.
"""

from __future__ import annotations

import operator
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import islice

from ..errors import CodecError
from ._dense_partitions import DenseTopics, encode_canonical_runs, encode_dense_topic_partitions
from ._topic_partitions import (
    ArrayMemos,
    OneEachLayouts,
    RunStructs,
    TopicHeaders,
    TopicPartitionPair,
    TopicRuns,
    encode_topic_partitions,
    read_topic_partition_runs,
    read_topic_partitions,
    read_topic_partitions_block,
    write_topic_partitions,
)
from ._wire import Reader, Writer

__all__ = [
    "CONSUMER_PROTOCOL_LATEST_VERSION",
    "Assignment",
    "AssignmentEncoder",
    "DenseTopics",
    "Subscription",
    "SubscriptionDecoder",
    "decode_assignment",
    "decode_subscription",
    "encode_assignment",
    "encode_subscription",
    "subscription_of",
]

#: The highest consumer-protocol version this codec knows (rack id, KIP-881).
CONSUMER_PROTOCOL_LATEST_VERSION = 3

#: Distinct topic arrays a :class:`SubscriptionDecoder` remembers (a group rarely has more
#: distinct subscriptions; more only costs a few failed prefix compares).
_TOPIC_MEMO_SIZE = 8

_NULL_BYTES = b"\xff\xff\xff\xff"  # a null ``bytes`` field: length -1
_SUBSCRIPTION = "consumer protocol subscription"
_ASSIGNMENT = "consumer protocol assignment"


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


def _check_version(version: int, what: str) -> None:
    if isinstance(version, bool) or not isinstance(version, int) or not 0 <= version <= 2**15 - 1:
        raise CodecError(what, f"a version in [0, 32767], got {version!r}", 0)


def encode_subscription(subscription: Subscription) -> bytes:
    """Encode ``subscription`` at ``subscription.version`` (a version above 3 writes v3 fields)."""
    version = subscription.version
    _check_version(version, _SUBSCRIPTION)
    writer = Writer(_SUBSCRIPTION)
    writer.int16(version, "version")
    try:
        topics = sorted(set(subscription.topics))
    except TypeError:
        raise CodecError(_SUBSCRIPTION, "topics as str", writer.size) from None
    writer.array_count(len(topics), "topics")
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


def _read_topics(
    reader: Reader,
    memo: list[tuple[bytes, tuple[str, ...]]] | None,
    names: dict[bytes, str] | None,
    uniform: dict[tuple[int, int], struct.Struct] | None = None,
) -> tuple[str, ...]:
    if memo is not None:
        for block, topics in memo:
            if reader.take_prefix(block):
                return topics
    start = reader.offset
    topics = tuple(reader.string_array("topics", names, uniform))
    if memo is not None:
        memo.insert(0, (reader.bytes_since(start), topics))
        del memo[_TOPIC_MEMO_SIZE:]
    return topics


def _decode_subscription(
    data: bytes | bytearray | memoryview,
    memo: list[tuple[bytes, tuple[str, ...]]] | None,
    names: dict[bytes, str] | None,
    layouts: OneEachLayouts | None = None,
) -> tuple[Subscription, bytes | None]:
    subscription, _, owned_block = _decode_fields(data, memo, names, layouts, as_runs=False)
    return subscription, owned_block


def _decode_fields(
    data: bytes | bytearray | memoryview,
    memo: list[tuple[bytes, tuple[str, ...]]] | None,
    names: dict[bytes, str] | None,
    layouts: OneEachLayouts | None,
    *,
    as_runs: bool,
    structs: RunStructs | None = None,
) -> tuple[Subscription, TopicRuns | None, bytes | None]:
    """The subscription, its owned partitions as runs when ``as_runs`` (then the
    subscription's ``owned_partitions`` is left empty; ``None`` when the field is absent) and
    its canonical owned block."""
    reader = Reader(data, _SUBSCRIPTION)
    start = reader.offset
    version = reader.int16("version")
    if version < 0:
        raise CodecError(_SUBSCRIPTION, f"version >= 0, got {version}", start)
    topics = _read_topics(reader, memo, names, None if structs is None else structs.strings)
    user_data = reader.nullable_bytes("user data")
    owned: list[TopicPartitionPair] = []
    runs: TopicRuns | None = None
    owned_block: bytes | None = None
    generation_id = -1
    rack_id: str | None = None
    if version >= 1 and not reader.at_end():
        if as_runs:
            runs, owned_block = read_topic_partition_runs(
                reader, "owned partitions", names, layouts, structs
            )
        else:
            owned, owned_block = read_topic_partitions_block(
                reader, "owned partitions", names, layouts
            )
        if version >= 2 and not reader.at_end():
            generation_id = reader.int32("generation id")
            if version >= 3 and not reader.at_end():
                rack_id = reader.nullable_string("rack id")
    subscription = Subscription(
        version=version,
        topics=topics,
        user_data=user_data,
        owned_partitions=tuple(owned),
        generation_id=generation_id,
        rack_id=rack_id,
    )
    return subscription, runs, owned_block


def decode_subscription(data: bytes | bytearray | memoryview) -> Subscription:
    """Decode a subscription of any version (see the module's reading rules)."""
    return _decode_subscription(data, None, None)[0]


class SubscriptionDecoder:
    """Decodes the subscriptions of one group, sharing work between its members.

    Create one per leader assignment (state is per instance, never module-wide). It keeps the
    raw bytes of the last few distinct topic arrays, so members that subscribe to the same
    topics decode that list once (a prefix compare instead of a parse), interns topic names,
    reads an owned-partitions array whose layout repeats an earlier member's (one partition of
    each of the same topics) in one ``struct`` call, and
    :meth:`decode_with_owned_block` also returns the raw bytes of the owned-partitions array
    when the sender wrote it canonically (sorted, grouped): equal bytes, equal claims, which
    lets the leader skip decoding sticky user data that repeats it. Results are exactly those
    of :func:`decode_subscription`.
    """

    __slots__ = ("_headers", "_layouts", "_memo", "_names", "arrays")

    def __init__(self) -> None:
        self._memo: list[tuple[bytes, tuple[str, ...]]] = []
        self.arrays = ArrayMemos()
        """This batch's array memos, for the user data reader
        (:func:`~kafka_sticky_plugin.codec.read_user_data_claim`)."""
        self._names: dict[bytes, str] = self.arrays.names
        self._headers = TopicHeaders()
        self._layouts: OneEachLayouts = self.arrays.layouts

    def decode(self, data: bytes | bytearray | memoryview) -> Subscription:
        """Same as :func:`decode_subscription`."""
        return _decode_subscription(data, self._memo, self._names, self._layouts)[0]

    def decode_with_owned_block(
        self, data: bytes | bytearray | memoryview
    ) -> tuple[Subscription, bytes | None]:
        """The subscription and its canonical owned-partitions bytes (count included), or
        ``None`` when the message has no owned partitions field or wrote it non-canonically."""
        return _decode_subscription(data, self._memo, self._names, self._layouts)

    def decode_with_owned_runs(
        self, data: bytes | bytearray | memoryview
    ) -> tuple[Subscription, TopicRuns | None, bytes | None]:
        """:meth:`decode_with_owned_block` with the owned partitions as runs (wire order, see
        :data:`~._topic_partitions.TopicRuns`; ``None`` when the message has no owned
        partitions field), not in the returned subscription, whose ``owned_partitions`` is
        left empty: the leader's bulk path, which never needs them as tuples."""
        return _decode_fields(
            data,
            self._memo,
            self._names,
            self._layouts,
            as_runs=True,
            structs=self.arrays.structs,
        )

    def owned_block(self, subscription: Subscription) -> bytes | None:
        """The canonical owned-partitions bytes of an already decoded ``subscription`` (for
        one read from a client's objects), or ``None`` when it has no owned partitions field
        or they are not strictly increasing; same contract as
        :meth:`decode_with_owned_block`."""
        owned = subscription.owned_partitions
        if subscription.version < 1:
            return None
        try:
            if len(owned) > 1 and not all(map(operator.lt, owned, islice(owned, 1, None))):
                return None
            return encode_topic_partitions(owned, _SUBSCRIPTION, "owned partitions", self._headers)
        except (CodecError, TypeError):
            return None


def _encode_assignment(assignment: Assignment, headers: TopicHeaders | None) -> bytes:
    _check_version(assignment.version, _ASSIGNMENT)
    writer = Writer(_ASSIGNMENT)
    writer.int16(assignment.version, "version")
    write_topic_partitions(writer, assignment.partitions, "assigned partitions", headers)
    writer.nullable_bytes(assignment.user_data, "user data")
    return writer.getvalue()


def encode_assignment(assignment: Assignment) -> bytes:
    """Encode ``assignment``; every version 0-3 has the same layout."""
    return _encode_assignment(assignment, None)


class AssignmentEncoder:
    """Encodes the assignments of one group, sharing each topic's encoded header.

    Create one per leader assignment (state is per instance). Bytes are exactly those of
    :func:`encode_assignment`.
    """

    __slots__ = ("_headers",)

    def __init__(self) -> None:
        self._headers = TopicHeaders()

    def encode(self, assignment: Assignment) -> bytes:
        """Same as :func:`encode_assignment`."""
        return _encode_assignment(assignment, self._headers)

    def encode_dense(self, version: int, indices: Sequence[int], topics: DenseTopics) -> bytes:
        """The assignment of the partitions at ``indices`` (strictly increasing global
        indices of ``topics``: a list or a ``range``) with null user data: same bytes as
        :meth:`encode` of their ``(topic, partition)`` pairs, without a tuple per partition.
        A ``ValueError`` when ``indices`` are not strictly increasing indices of ``topics``."""
        _check_version(version, _ASSIGNMENT)
        try:
            body = encode_dense_topic_partitions(
                indices, topics, _ASSIGNMENT, "assigned partitions"
            )
        except CodecError as exc:
            raise CodecError(exc.what, exc.expected, 2) from None
        return version.to_bytes(2, "big") + body + _NULL_BYTES

    def encode_canonical_runs(
        self,
        version: int,
        names: Sequence[str],
        lengths: Sequence[int] | None,
        flat: Sequence[int],
        topics: DenseTopics,
    ) -> bytes | None:
        """The assignment of canonical runs (see :func:`.encode_canonical_runs`: topics of
        ``topics``, partitions in them) with null user data: the bytes of :meth:`encode_dense`
        of their indices, or ``None`` when a topic name cannot be written (let
        :meth:`encode_dense` report it)."""
        _check_version(version, _ASSIGNMENT)
        try:
            body = encode_canonical_runs(names, lengths, flat, topics)
        except TypeError:
            return None
        return version.to_bytes(2, "big") + body + _NULL_BYTES

    @staticmethod
    def encode_owned_block(version: int, owned_block: bytes) -> bytes:
        """The assignment of exactly the partitions a subscription's canonical owned block
        (from :meth:`SubscriptionDecoder.decode_with_owned_block`) lists, with null user
        data: those bytes spliced between the version and the null user data. Same bytes as
        :meth:`encode` of those partitions (the two arrays share one layout)."""
        _check_version(version, _ASSIGNMENT)
        return version.to_bytes(2, "big") + owned_block + _NULL_BYTES


def decode_assignment(data: bytes | bytearray | memoryview) -> Assignment:
    """Decode an assignment of any version; trailing bytes (newer fields) are ignored."""
    reader = Reader(data, _ASSIGNMENT)
    start = reader.offset
    version = reader.int16("version")
    if version < 0:
        raise CodecError(_ASSIGNMENT, f"version >= 0, got {version}", start)
    partitions = read_topic_partitions(reader, "assigned partitions")
    user_data = reader.nullable_bytes("user data")
    return Assignment(version=version, partitions=tuple(partitions), user_data=user_data)


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
