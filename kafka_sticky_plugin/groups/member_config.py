"""What every member loop shares, whatever its client: its configuration, where it reports,
subscription changes asked while it runs, the sequence numbers that records carry, and its
bookkeeping of what it owns and where it has read.

Each client's loop (:mod:`.kafka_python_member` on kafka-python, :mod:`.aiokafka_member`,
:mod:`.confluent_member`) builds on this module and on no other loop (the kafka-python and
aiokafka loops also on :mod:`.python_clients`, what those two clients share);
:func:`~.member_process.member_loop` picks the loop for a configuration, in one place.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from .events import Delivery, OwnershipEvent, Partition

__all__ = [
    "DEBUG_LOGGERS",
    "LIBRDKAFKA_DEBUG",
    "LIBRDKAFKA_LOGGER",
    "EventSink",
    "LoopControl",
    "MemberConfig",
    "SubscriptionChange",
    "decode_sequence",
    "encode_sequence",
    "forget_moved",
    "member_event",
    "reporting",
]


#: The Python logger a confluent member with :attr:`MemberConfig.debug_logs` hands librdkafka's
#: own log lines to (``logger`` in its configuration: served from ``consume()``).
LIBRDKAFKA_LOGGER = "librdkafka"
#: librdkafka's debug contexts for :attr:`MemberConfig.debug_logs`: the ones that touch
#: credentials (``security``: SASL and TLS; ``conf``: the configuration dump at start),
#: connections (``broker``) and every request and response (``protocol``).
LIBRDKAFKA_DEBUG = "security,conf,broker,protocol"
#: The loggers a member with :attr:`MemberConfig.debug_logs` logs to at DEBUG (and a child
#: process forwards to its parent): this package's, kafka-python's, aiokafka's and
#: :data:`LIBRDKAFKA_LOGGER`.
DEBUG_LOGGERS = ("kafka_sticky_plugin", "kafka", "aiokafka", LIBRDKAFKA_LOGGER)


class EventSink(Protocol):
    """Where a member reports (an :class:`~.events.EventLog` or a JSON-lines pipe)."""

    def add(self, event: OwnershipEvent) -> None: ...

    def add_deliveries(self, deliveries: list[Delivery]) -> None: ...


@dataclass(frozen=True)
class MemberConfig:
    """Everything a member needs; plain data so it can be sent to a child process as JSON.

    The timeouts default to values that keep groups fast on the embedded broker and are also
    valid on Apache Kafka (see BROKER_NOTES.md).
    """

    bootstrap: str
    group_id: str
    topics: tuple[str, ...]
    member: str
    incarnation: int = 0
    assignors: tuple[str, ...] = ("cooperative-sticky",)
    group_instance_id: str | None = None
    session_timeout_ms: int = 6000
    heartbeat_interval_ms: int = 1000
    max_poll_interval_ms: int = 10000
    poll_timeout_ms: int = 100
    commit_interval_s: float = 1.0
    #: The coordinator hooks, as README recommends for kafka-python 3.x, whenever the member
    #: runs one of this package's assignors (a member on ``range`` alone, as before an
    #: upgrade, has nothing for them to drive). Plain 3.0.12 members (False) sometimes wedge
    #: on Apache Kafka: a JoinGroup still in flight when ``poll()`` times out is never
    #: completed (README, "What each version gains", note 6), the member stops heartbeating
    #: and is evicted. Tests of the plain client ask for False explicitly.
    install_hooks: bool = True
    #: The hooks' prompt heartbeats after a cooperative SyncGroup (on by default, as in
    #: ``install_hooks``); False: ``install_hooks(consumer, prompt_heartbeats=None)``.
    prompt_heartbeats: bool = True
    client_id: str = field(default="")
    #: ``client_rack`` of the consumer (KIP-881); None: not set (kafka-python 2.0.2 has none).
    client_rack: str | None = None
    #: Which client runs this member: ``kafka-python`` (:mod:`.kafka_python_member`), ``confluent``
    #: (:mod:`.confluent_member`), ``aiokafka`` (:mod:`.aiokafka_member`, a hooked
    #: AIOKafkaConsumer) or ``java-<kafka-clients version>`` (:mod:`testlab.java_member`, always a
    #: child process).
    client: str = "kafka-python"
    #: ``group.protocol`` of a confluent or Java member: ``classic`` (JoinGroup/SyncGroup,
    #: ``assignors`` and the session settings apply) or ``consumer`` (KIP-848: the broker
    #: assigns, so ``assignors``, ``session_timeout_ms`` and ``heartbeat_interval_ms`` are
    #: not sent; when ``assignors[0]`` is ``uniform`` or ``range`` it is the broker assignor
    #: asked for, ``group.remote.assignor``). kafka-python and aiokafka members have only
    #: ``classic``.
    group_protocol: str = "classic"
    #: Subscribe to this regular expression instead of ``topics`` (a pattern
    #: subscription: topics created later that match are picked up at the next metadata
    #: refresh, every ``metadata_max_age_ms``); kafka-python and aiokafka members only.
    topic_pattern: str | None = None
    #: ``metadata_max_age_ms`` of kafka-python and aiokafka members (how soon a new topic that
    #: matches ``topic_pattern`` is seen).
    metadata_max_age_ms: int = 5000
    #: The interpreter of a child-process member (``process=True``): empty for this one; a
    #: client-version venv's python (``.venvs/kafka-python-2.2/bin/python``) runs the member
    #: on that client version, with this checkout on its ``PYTHONPATH``.
    python: str = ""
    #: How the member authenticates
    #: (:meth:`~kafka_sticky_plugin.client_security.ClientSecurity.as_dict`; None: PLAINTEXT).
    #: Each loop turns it into its client's settings.
    security: dict[str, str] | None = None
    #: Everything at DEBUG, for a test that scans the logs (the security tier): a confluent
    #: member turns on librdkafka's :data:`LIBRDKAFKA_DEBUG` contexts and logs them to
    #: :data:`LIBRDKAFKA_LOGGER`; a child-process member forwards every record of
    #: :data:`DEBUG_LOGGERS` to its parent, not only this package's warnings. (A thread
    #: member's Python client logs to this process's loggers already.)
    debug_logs: bool = False

    def to_json(self) -> str:
        """This configuration as one JSON object."""
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> MemberConfig:
        """Inverse of :meth:`to_json`."""
        raw: dict[str, Any] = json.loads(text)
        raw["topics"] = tuple(raw["topics"])
        raw["assignors"] = tuple(raw["assignors"])
        return cls(**raw)


class SubscriptionChange:
    """A subscription change asked of a running thread member (KIP-70): the test thread
    asks for new topics (:meth:`request`), the poll loop takes them (:meth:`take`) and calls
    ``subscribe`` again (with the same listener) between two polls. Thread-safe; only the
    latest request counts."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: tuple[str, ...] | None = None

    def request(self, topics: Sequence[str]) -> None:
        """Ask the member to subscribe to ``topics`` (replacing what it subscribes to)."""
        with self._lock:
            self._pending = tuple(topics)

    def take(self) -> tuple[str, ...] | None:
        """The topics asked for since the last call (None: no change asked)."""
        with self._lock:
            pending, self._pending = self._pending, None
        return pending


@dataclass(frozen=True)
class LoopControl:
    """How a member loop is driven: it runs until ``should_stop()``, sets ``ready`` once its
    consumer is subscribed, and between two polls takes the subscription asked of it through
    ``changes`` (reported as a ``subscribed`` event naming the topics)."""

    should_stop: Callable[[], bool]
    ready: threading.Event | None = None
    changes: SubscriptionChange | None = None

    def subscribed(self) -> None:
        """Tell the waiting test thread, if any, that the consumer is subscribed."""
        if self.ready is not None:
            self.ready.set()

    def new_topics(self) -> tuple[str, ...] | None:
        """The topics asked for since the last call, or ``None``."""
        return self.changes.take() if self.changes is not None else None

    def follow_changes(
        self, resubscribe: Callable[[list[str]], object], event: Callable[..., None]
    ) -> None:
        """Between two polls: ``resubscribe`` to the topics asked for, if any, and report a
        ``subscribed`` event naming them."""
        wanted = self.new_topics()
        if wanted is not None:
            resubscribe(list(wanted))
            event("subscribed", detail=",".join(wanted))


def encode_sequence(sequence: int) -> bytes:
    """The record value the test producer writes: the sequence number in ASCII."""
    return str(sequence).encode("ascii")


def decode_sequence(value: bytes | None) -> int:
    """Inverse of :func:`encode_sequence`; -1 for a value that is not one."""
    try:
        return int((value or b"").decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        return -1


def forget_moved(
    kind: str,
    keys: Iterable[Any],
    parts: Iterable[Partition],
    positions: dict[Any, int],
    owned: set[Partition],
) -> None:
    """A rebalance callback of ``kind`` (``assigned``, ``revoked`` or ``lost``) moved
    ``parts``: their ``positions`` (keyed by ``keys``, the same partitions as the loop keys
    them) are forgotten, so that a partition that comes back starts from the committed
    offset; ``owned`` gains them (``assigned``) or loses them (``revoked``, ``lost``)."""
    for key in keys:
        positions.pop(key, None)
    if kind == "assigned":
        owned.update(parts)
    else:
        owned.difference_update(parts)


def member_event(config: MemberConfig, kind: str, **fields: Any) -> OwnershipEvent:
    """An event of ``config``'s member incarnation, stamped now (monotonic clock)."""
    return OwnershipEvent(
        t=time.monotonic(),
        member=config.member,
        incarnation=config.incarnation,
        kind=kind,
        **fields,
    )


@contextlib.contextmanager
def reporting(
    config: MemberConfig,
    sink: EventSink,
    close: Callable[[], object],
    closed: Callable[[], object] | None = None,
) -> Iterator[None]:
    """Run a member's loop body: an exception is reported as an ``error`` event and re-raised;
    whatever happens, ``close()`` (the consumer) runs, then ``closed()`` if given (the last
    metrics snapshot, :mod:`.metrics_events`), then a ``stopped`` event is reported, so every
    incarnation's ownership intervals close."""
    try:
        yield
    except Exception as exc:
        sink.add(member_event(config, "error", detail=repr(exc)))
        raise
    finally:
        try:
            close()
            if closed is not None:
                closed()
        finally:
            sink.add(member_event(config, "stopped"))
