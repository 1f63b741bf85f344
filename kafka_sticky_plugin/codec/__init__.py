"""Bytes <-> values for the consumer protocol and the sticky assignors' user data.

Pure and stdlib-only: no algorithm, no logging, no client imports. Every decoder raises
:class:`~kafka_sticky_plugin.errors.CodecError` (with what was expected and the byte
offset) on malformed input and never a bare ``struct``/``Index``/``Unicode`` error; every
encoder writes topics and partitions sorted so equal values give equal bytes.

Modules: :mod:`.consumer_protocol` (subscription and assignment v0-v3) and
:mod:`.sticky_user_data` (sticky v0/v1, cooperative v0); each states its version history.
:mod:`.topic_partitions` is the ``[topic [partition]]`` array they share, :mod:`._wire` the
primitives. :mod:`.seam` is the leader's one interface to all of it, in plain Python (the
reference and the specification); :mod:`.implementation` picks what the leader calls: the
compiled twin of the seam where it is installed, else :mod:`.seam` itself.
"""

from __future__ import annotations

from ._wire import INT32_MAX, INT32_MIN
from .consumer_protocol import (
    CONSUMER_PROTOCOL_LATEST_VERSION,
    Assignment,
    Subscription,
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
    subscription_of,
)
from .sticky_user_data import (
    decode_cooperative_user_data,
    decode_sticky_user_data,
    encode_cooperative_user_data,
    encode_sticky_user_data,
    read_user_data_claim,
)

__all__ = [
    "CONSUMER_PROTOCOL_LATEST_VERSION",
    "INT32_MAX",
    "INT32_MIN",
    "Assignment",
    "Subscription",
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
