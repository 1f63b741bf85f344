"""Bytes <-> values for the consumer protocol and the sticky assignors' user data.

Pure and stdlib-only: no algorithm, no logging, no client imports. Every decoder raises
:class:`~kafka_sticky_plugin.errors.CodecError` (with what was expected and the byte
offset) on malformed input and never a bare ``struct``/``Index``/``Unicode`` error; every
encoder writes topics and partitions sorted so equal values give equal bytes.

Modules: :mod:`.consumer_protocol` (subscription and assignment v0-v3) and
:mod:`.sticky_user_data` (sticky v0/v1, cooperative v0), the reference, each stating its
version history; :mod:`.implementation` runs the compiled twin of their functions where it is
installed (the same values, bytes and errors) and is what the names below come from.
"""

from __future__ import annotations

from ._topic_partitions import ArrayMemos
from ._wire import INT32_MAX, INT32_MIN
from .consumer_protocol import (
    CONSUMER_PROTOCOL_LATEST_VERSION,
    Assignment,
    AssignmentEncoder,
    DenseTopics,
    Subscription,
    SubscriptionDecoder,
    subscription_of,
)
from .implementation import (
    decode_assignment,
    decode_sticky_user_data,
    decode_subscription,
    encode_assignment,
    encode_sticky_user_data,
    encode_subscription,
)
from .sticky_user_data import (
    decode_cooperative_user_data,
    encode_cooperative_user_data,
    read_user_data_claim,
)

__all__ = [
    "CONSUMER_PROTOCOL_LATEST_VERSION",
    "INT32_MAX",
    "INT32_MIN",
    "ArrayMemos",
    "Assignment",
    "AssignmentEncoder",
    "DenseTopics",
    "Subscription",
    "SubscriptionDecoder",
    "decode_assignment",
    "decode_cooperative_user_data",
    "decode_sticky_user_data",
    "decode_subscription",
    "encode_assignment",
    "encode_cooperative_user_data",
    "encode_sticky_user_data",
    "encode_subscription",
    "read_user_data_claim",
    "subscription_of",
]
