"""Translate kafka-python's protocol objects into this package's codec values.

kafka-python 3.x decodes each member's JoinGroup metadata with its own
``ConsumerProtocolSubscription.decode`` before calling ``assign()``, and hands
``on_assignment()`` a decoded ``ConsumerProtocolAssignment``; kafka-python 2.x uses older
classes with the same attribute names. These helpers read the attributes (never the
classes, so no kafka import is needed) and validate every value as strictly as the byte
decoder does: a value of the wrong type or outside int32 raises
:class:`~kafka_sticky_plugin.errors.CodecError` (offset -1: there are no bytes to point at).
Raw ``bytes`` go straight to the byte decoders.
"""

from __future__ import annotations

from itertools import chain, repeat
from operator import attrgetter, itemgetter
from typing import Any

from ...codec import (
    INT32_MAX,
    INT32_MIN,
    Assignment,
    Subscription,
    decode_assignment,
    decode_subscription,
)
from ...errors import CodecError

__all__ = ["assigned_partitions", "to_subscription"]

_SUBSCRIPTION = "kafka-python subscription object"
_ASSIGNMENT = "kafka-python assignment object"
_NO_OFFSET = -1
_FIRST = itemgetter(0)
_SECOND = itemgetter(1)
_TOPIC = attrgetter("topic")
_PARTITIONS = attrgetter("partitions")


def _int32(value: Any, what: str, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not INT32_MIN <= value <= INT32_MAX:
        raise CodecError(what, f"{field} as an int32, got {value!r}", _NO_OFFSET)
    return value


def _text(value: Any, what: str, field: str) -> str:
    if not isinstance(value, str):
        raise CodecError(what, f"{field} as a str, got {value!r}", _NO_OFFSET)
    return value


def _texts(values: Any, what: str, field: str) -> tuple[str, ...]:
    """``values`` as a tuple of str (type checked in C)."""
    items = tuple(values or ())
    if items and not set(map(type, items)) <= {str}:
        for value in items:
            if not isinstance(value, str):
                raise CodecError(what, f"{field} as a str, got {value!r}", _NO_OFFSET)
    return items


def _grouped_pairs(groups: Any, what: str, field: str) -> tuple[tuple[str, int], ...]:
    """Flatten ``[obj(topic=..., partitions=[...])]`` or ``[(topic, [partitions])]``.

    Objects are flattened in C (:func:`_flatten_objects`), tuples in one light pass per
    topic; then the types and ranges of all pairs are checked at once with
    C-level ``map``/``set``/``min``/``max`` (a leader may read a million of them).
    """
    out = _flatten_objects(groups) if isinstance(groups, (list, tuple)) else []
    extend = out.extend
    for group in () if out else groups or ():
        try:
            topic, partitions = group.topic, group.partitions
        except AttributeError:
            try:
                topic, partitions = group
            except (TypeError, ValueError):
                raise CodecError(what, f"{field} as (topic, partitions)", _NO_OFFSET) from None
        try:
            extend(zip(repeat(topic), partitions or ()))
        except TypeError:
            raise CodecError(
                what, f"{field} partitions of {topic!r} as a sequence", _NO_OFFSET
            ) from None
    if out:
        if not set(map(type, map(_FIRST, out))) <= {str}:
            bad = next(t for t, _ in out if not isinstance(t, str))
            raise CodecError(what, f"{field} topic as a str, got {bad!r}", _NO_OFFSET)
        partitions = list(map(_SECOND, out))
        if (
            not set(map(type, partitions)) <= {int}
            or min(partitions) < INT32_MIN
            or max(partitions) > INT32_MAX
        ):
            bad = next(
                p for p in partitions if type(p) is not int or not INT32_MIN <= p <= INT32_MAX
            )
            raise CodecError(what, f"{field} partition as int32, got {bad!r}", _NO_OFFSET)
    return tuple(out)


def _flatten_objects(groups: Any) -> list[tuple[str, int]]:
    """Pairs of a list of ``obj(topic=..., partitions=[...])`` with every step in C (``map``,
    ``zip``, ``chain``); ``[]`` when ``groups`` is not a sequence of such objects or a
    ``partitions`` value is not a sequence (the caller's per-group loop then reports it)."""
    try:
        topics = list(map(_TOPIC, groups))
        partitions = list(map(_PARTITIONS, groups))
        if set(map(len, partitions)) == {1}:  # one partition per topic: the common case
            return list(zip(topics, map(_FIRST, partitions), strict=True))
        return list(chain.from_iterable(map(zip, map(repeat, topics), partitions)))
    except (AttributeError, TypeError):
        return []


def to_subscription(metadata: Any) -> Subscription:
    """A :class:`Subscription` from raw bytes, one of ours, or a kafka-python object."""
    if isinstance(metadata, Subscription):
        return metadata
    if isinstance(metadata, (bytes, bytearray, memoryview)):
        return decode_subscription(metadata)
    try:
        version = getattr(metadata, "version", None)
        topics = metadata.topics
        user_data = getattr(metadata, "user_data", None)
        owned = getattr(metadata, "owned_partitions", None)
        generation = getattr(metadata, "generation_id", -1)
        rack = getattr(metadata, "rack_id", None)
    except AttributeError as exc:
        raise CodecError(_SUBSCRIPTION, f"an attribute ({exc})", _NO_OFFSET) from None
    if version is None:
        version = 0
    if isinstance(version, bool) or not isinstance(version, int) or version < 0:
        raise CodecError(_SUBSCRIPTION, f"version >= 0, got {version!r}", _NO_OFFSET)
    if user_data is not None and not isinstance(user_data, (bytes, bytearray, memoryview)):
        raise CodecError(_SUBSCRIPTION, f"user data as bytes, got {user_data!r}", _NO_OFFSET)
    if rack is not None:
        rack = _text(rack, _SUBSCRIPTION, "rack id")
    return Subscription(
        version=version,
        topics=_texts(topics, _SUBSCRIPTION, "topic"),
        user_data=None if user_data is None else bytes(user_data),
        owned_partitions=_grouped_pairs(owned, _SUBSCRIPTION, "owned partitions"),
        generation_id=-1 if generation is None else _int32(generation, _SUBSCRIPTION, "generation"),
        rack_id=rack,
    )


def assigned_partitions(assignment: Any) -> tuple[tuple[str, int], ...]:
    """The ``(topic, partition)`` pairs of an assignment in any of the accepted forms."""
    if isinstance(assignment, Assignment):
        return assignment.partitions
    if isinstance(assignment, (bytes, bytearray, memoryview)):
        return decode_assignment(assignment).partitions
    partitions = getattr(assignment, "partitions", None)
    if callable(partitions):
        return tuple(
            (_text(tp.topic, _ASSIGNMENT, "topic"), _int32(tp.partition, _ASSIGNMENT, "partition"))
            for tp in partitions()
        )
    groups = getattr(assignment, "assigned_partitions", None)
    if groups is None:
        groups = getattr(assignment, "assignment", None)
    if groups is None:
        raise CodecError(_ASSIGNMENT, "partitions() or assigned_partitions", _NO_OFFSET)
    return _grouped_pairs(groups, _ASSIGNMENT, "assigned partitions")
