"""Which implementation of the wire seam runs: the compiled twin or the plain-Python reference.

The reference (:mod:`.consumer_protocol`, :mod:`.sticky_user_data`) is the specification:
every value, byte and error is defined there. The twin is the separate distribution
``kafka-sticky-plugin-twin`` (Rust, in this repository's ``twin/`` folder; installed by the
``fast`` extra or ``make twin``): the module ``kafka_sticky_plugin_twin`` with one function per
seam function below, returning exactly the reference's result for input it vouches for and
``None`` for anything else. This module is the only place that chooses:

- the twin is used when it is importable, its ``SEAM_VERSION`` equals :data:`SEAM_VERSION`
  (a twin built for another seam is ignored whole, never half-used), and the environment
  variable :data:`PURE_PYTHON_ENV` (``KAFKA_STICKY_PURE_PYTHON``) is unset, empty or ``0``;
- every seam function here calls the twin first and the reference whenever the twin returns
  ``None``, so error texts and offsets live in the reference alone;
- :data:`IMPLEMENTATION` (``"compiled"`` or ``"reference"``) names the choice, fixed at
  import; ``python -m kafka_sticky_plugin --version`` prints it.

Invariant (checked by ``tests/test_twin_differential.py`` when the twin is installed): for
every input, each function here returns what the reference returns, or raises what it raises.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterable
from typing import Any, Literal, Protocol, cast

from . import consumer_protocol as _protocol
from . import sticky_user_data as _user_data
from ._topic_partitions import TopicPartitionPair
from .consumer_protocol import Assignment, Subscription

__all__ = [
    "IMPLEMENTATION",
    "PURE_PYTHON_ENV",
    "SEAM_VERSION",
    "TWIN_DISTRIBUTION",
    "TWIN_MODULE",
    "Twin",
    "decode_assignment",
    "decode_sticky_user_data",
    "decode_subscription",
    "describe",
    "encode_assignment",
    "encode_sticky_user_data",
    "encode_subscription",
    "twin",
]

#: The seam's contract version: the twin's ``SEAM_VERSION`` must equal it (bump both when a
#: seam function is added, removed or changes its arguments or results).
SEAM_VERSION = 1
#: Set to anything but empty or ``0`` to run the reference even where the twin is installed.
PURE_PYTHON_ENV = "KAFKA_STICKY_PURE_PYTHON"
#: The twin's import name and distribution name (the ``fast`` extra installs it).
TWIN_MODULE = "kafka_sticky_plugin_twin"
TWIN_DISTRIBUTION = "kafka-sticky-plugin-twin"

_SubscriptionValues = tuple[
    int, tuple[str, ...], bytes | None, list[TopicPartitionPair], int, str | None
]


class Twin(Protocol):
    """The twin module's functions (``twin/src/lib.rs``); each returns ``None`` where the
    reference must decide."""

    SEAM_VERSION: int
    __version__: str

    def decode_subscription(self, data: bytes) -> _SubscriptionValues | None: ...

    def decode_assignment(
        self, data: bytes
    ) -> tuple[int, list[TopicPartitionPair], bytes | None] | None: ...

    def decode_sticky_user_data(
        self, data: bytes
    ) -> tuple[list[TopicPartitionPair], int | None] | None: ...

    def encode_subscription(
        self,
        version: object,
        topics: object,
        user_data: object,
        owned_partitions: object,
        generation_id: object,
        rack_id: object,
    ) -> bytes | None: ...

    def encode_assignment(
        self, version: object, partitions: object, user_data: object
    ) -> bytes | None: ...

    def encode_sticky_user_data(self, partitions: object, generation: object) -> bytes | None: ...


def _pure_python_forced() -> bool:
    return os.environ.get(PURE_PYTHON_ENV, "") not in ("", "0")


def _load_twin() -> Twin | None:
    """The twin module when it may be used (see the module docstring), else ``None``."""
    if _pure_python_forced():
        return None
    try:
        module: Any = importlib.import_module(TWIN_MODULE)
    except ImportError:
        return None
    if getattr(module, "SEAM_VERSION", None) != SEAM_VERSION:
        return None
    return cast(Twin, module)


#: The twin in use, or ``None`` when the reference runs alone.
twin: Twin | None = _load_twin()
#: ``"compiled"`` when :data:`twin` is in use, else ``"reference"``.
IMPLEMENTATION: Literal["compiled", "reference"] = "reference" if twin is None else "compiled"


def describe() -> str:
    """One line naming the implementation in use and why (for ``--version``)."""
    if twin is not None:
        return f"wire seam: compiled ({TWIN_DISTRIBUTION} {twin.__version__})"
    if _pure_python_forced():
        return f"wire seam: reference ({PURE_PYTHON_ENV} is set)"
    try:
        module: Any = importlib.import_module(TWIN_MODULE)
    except ImportError:
        return f"wire seam: reference ({TWIN_DISTRIBUTION} is not installed)"
    found = getattr(module, "SEAM_VERSION", None)
    return (
        f"wire seam: reference ({TWIN_DISTRIBUTION} {getattr(module, '__version__', '?')} "
        f"implements seam {found}, this package seam {SEAM_VERSION})"
    )


def decode_subscription(data: bytes | bytearray | memoryview) -> Subscription:
    """:func:`.consumer_protocol.decode_subscription`."""
    if twin is not None and type(data) is bytes:
        got = twin.decode_subscription(data)
        if got is not None:
            version, topics, user_data, owned, generation_id, rack_id = got
            return Subscription(version, topics, user_data, tuple(owned), generation_id, rack_id)
    return _protocol.decode_subscription(data)


def decode_assignment(data: bytes | bytearray | memoryview) -> Assignment:
    """:func:`.consumer_protocol.decode_assignment`."""
    if twin is not None and type(data) is bytes:
        got = twin.decode_assignment(data)
        if got is not None:
            version, partitions, user_data = got
            return Assignment(version, tuple(partitions), user_data)
    return _protocol.decode_assignment(data)


def decode_sticky_user_data(
    data: bytes | bytearray | memoryview,
) -> tuple[list[TopicPartitionPair], int | None]:
    """:func:`.sticky_user_data.decode_sticky_user_data`."""
    if twin is not None and type(data) is bytes:
        got = twin.decode_sticky_user_data(data)
        if got is not None:
            return got
    return _user_data.decode_sticky_user_data(data)


def encode_subscription(subscription: Subscription) -> bytes:
    """:func:`.consumer_protocol.encode_subscription`."""
    if twin is not None:
        s = subscription
        got = twin.encode_subscription(
            s.version, s.topics, s.user_data, s.owned_partitions, s.generation_id, s.rack_id
        )
        if got is not None:
            return got
    return _protocol.encode_subscription(subscription)


def encode_assignment(assignment: Assignment) -> bytes:
    """:func:`.consumer_protocol.encode_assignment`."""
    if twin is not None:
        a = assignment
        got = twin.encode_assignment(a.version, a.partitions, a.user_data)
        if got is not None:
            return got
    return _protocol.encode_assignment(assignment)


def encode_sticky_user_data(
    partitions: Iterable[TopicPartitionPair], generation: int | None
) -> bytes:
    """:func:`.sticky_user_data.encode_sticky_user_data`."""
    if twin is not None:
        got = twin.encode_sticky_user_data(partitions, generation)
        if got is not None:
            return got
    return _user_data.encode_sticky_user_data(partitions, generation)
