"""Bytes <-> values for the consumer protocol and the sticky assignors' user data.

Pure and stdlib-only: no algorithm, no logging, no client imports. :mod:`.consumer_protocol`
(subscription and assignment v0-v3) and :mod:`.sticky_user_data` (sticky v0/v1, cooperative
v0) each state their version history; :mod:`.topic_partitions` is the ``[topic
[partition]]`` array they share, :mod:`._wire` the primitives (and the error rules).
:mod:`.seam` is the leader's one interface to all of it, in plain Python (the reference and
the specification); :mod:`.implementation` picks the compiled twin of the seam where it is
installed, else :mod:`.seam`.
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
