"""Build and subscribe confluent-kafka consumers whose rebalance protocol is known.

confluent-kafka exposes no ``rebalance_protocol()``; the protocol follows from the
configuration (see :mod:`.config`), so :func:`create_consumer` checks the configuration and
returns a consumer that carries its protocol. For a consumer built elsewhere, pass the
protocol (``rebalance_protocol(config)``) to :func:`subscribe`.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Iterable, Mapping
from typing import Any

import confluent_kafka

from ...authorization_advice import (
    group_refused_line,
    member_topics_refused_line,
    principal_text,
)
from ...bootstrap_check import BootstrapCheck
from ...errors import ConfigurationError
from ...listener.contract import RebalanceListener as Kip1306Listener
from ...migration_advice import refusal_line
from .config import RebalanceProtocol, check_config
from .fencing import self_fencing_line
from .listener import RebalanceBridge, RebalanceListener
from .rebalance_consumer import one_argument
from .statistics import StatisticsFeed, chain_stats_cb, statistics_enabled

__all__ = [
    "CheckedConsumer",
    "ConsumerProtocolConsumer",
    "check_listener",
    "create_consumer",
    "rebalance_protocol",
    "subscribe",
]

_log = logging.getLogger("kafka_sticky_plugin.confluent")

_REQUIRED_METHODS = ("on_partitions_revoked", "on_partitions_assigned")
_OPTIONAL_METHODS = ("on_partitions_lost",)


class CheckedConsumer(confluent_kafka.Consumer):
    """A ``confluent_kafka.Consumer`` whose configuration passed :func:`check_config`.

    Invariant: :attr:`rebalance_protocol` is the protocol librdkafka uses for this consumer.
    Only the protocol, ``group.id``, ``client.id``, ``group.instance.id`` and
    ``session.timeout.ms`` are kept, not the configuration (which may hold credentials). With
    ``statistics.interval.ms`` set, librdkafka's statistics also feed the rebalance metrics
    of :func:`subscribe`'s bridge (:mod:`.statistics`; the configuration's own ``stats_cb`` is
    still called). A static member that librdkafka fences with a fatal error says so once,
    with the cause and the remedy (:mod:`.fencing`).
    """

    def __init__(self, config: Mapping[str, Any]) -> None:
        protocol = check_config(config)
        given = dict(config)
        #: librdkafka's statistics for the metrics (None: statistics.interval.ms not set)
        self.statistics: StatisticsFeed | None = None
        if statistics_enabled(config):
            self.statistics = StatisticsFeed()
            given["stats_cb"] = chain_stats_cb(self.statistics, config.get("stats_cb"))
        super().__init__(given)
        self._rebalance_protocol = protocol
        #: the labels of its rebalance metrics (never credentials)
        self.group_id = str(config.get("group.id") or "")
        self.client_id = str(config.get("client.id") or "rdkafka")
        self._principal = principal_text(config)
        self._refusals_said: set[str] = set()
        #: what a fencing of this static member is told with (:mod:`.fencing`)
        instance_id = config.get("group.instance.id")
        self._instance_id = str(instance_id) if instance_id else None
        self._session_timeout_ms = int(config.get("session.timeout.ms") or 45000)
        self._fatal_said = False
        #: no bootstrap address answering is said once, soon after the first poll, unless
        #: the group gave this consumer a member id meanwhile (read in the polling thread:
        #: librdkafka's calls from the check's own thread wait behind a running poll)
        self._joined = False
        self.bootstrap_check = BootstrapCheck(
            f"group {self.group_id} client {self.client_id}",
            str(config.get("bootstrap.servers") or ""),
            reached=lambda: self._joined,
        )

    def _look_for_member_id(self) -> None:
        if not self._joined and not self.bootstrap_check.decided:
            self._joined = bool(self.memberid())

    def _look_authorization(self, message: Any) -> None:
        """Say once, in one line naming the grant (ERROR for the group, WARNING for a topic, as
        the kafka-python hooks do), each authorization refusal librdkafka
        returns from ``poll()`` (GROUP_AUTHORIZATION_FAILED once per refused FindCoordinator
        round, TOPIC_AUTHORIZATION_FAILED per subscribed topic it may not describe). The
        message itself is returned unchanged."""
        error = message.error() if message is not None else None
        if error is None:
            return
        code = error.code()
        if code == confluent_kafka.KafkaError.GROUP_AUTHORIZATION_FAILED:
            key, level = "group", logging.ERROR
            line = group_refused_line(self.group_id, self._principal, "FindCoordinator", None)
        elif code == confluent_kafka.KafkaError.TOPIC_AUTHORIZATION_FAILED:
            topic = message.topic() or _refused_topic(error.str())
            key, level = f"topic {topic}", logging.WARNING
            line = member_topics_refused_line(
                self.group_id, [topic], self._principal, client_rejoins=True
            )
        else:
            return
        if key not in self._refusals_said:
            self._refusals_said.add(key)
            _log.log(level, "%s", line)

    def _look_fatal(self, message: Any) -> None:
        """Say once, in one ERROR line with the cause and the remedy, that librdkafka fenced
        this static member with a fatal error (:func:`.fencing.self_fencing_line`; librdkafka
        reports it only as a ``_FATAL`` message and a level-0 log line). The message itself is
        returned unchanged."""
        error = message.error() if message is not None else None
        if self._fatal_said or error is None or error.code() != confluent_kafka.KafkaError._FATAL:
            return
        line = self_fencing_line(
            self.group_id,
            self.client_id,
            self._instance_id,
            self._session_timeout_ms,
            str(error.str()),
        )
        if line is not None:
            self._fatal_said = True
            _log.error("%s", line)

    def _look(self, message: Any) -> None:
        """What the consumer checks on every message ``poll()``/``consume()`` return."""
        self._look_authorization(message)
        self._look_fatal(message)

    def poll(self, *args: Any, **kwargs: Any) -> Any:
        self.bootstrap_check.start()
        message = super().poll(*args, **kwargs)
        self._look_for_member_id()
        self._look(message)
        return message

    def consume(self, *args: Any, **kwargs: Any) -> Any:
        self.bootstrap_check.start()
        messages = super().consume(*args, **kwargs)
        self._look_for_member_id()
        for message in messages:
            self._look(message)
        return messages

    @property
    def rebalance_protocol(self) -> RebalanceProtocol:
        """EAGER or COOPERATIVE, fixed by the configuration."""
        return self._rebalance_protocol


class ConsumerProtocolConsumer(CheckedConsumer):
    """A :class:`CheckedConsumer` with ``group.protocol=consumer`` (KIP-848) that says, in one
    WARNING line and once, what to change when the broker refuses to convert a classic group
    for it (librdkafka reports only a fatal "group id does not exist"; see
    :func:`~kafka_sticky_plugin.migration_advice.refusal_line`). Messages and errors are
    returned unchanged."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        super().__init__(config)
        self._group_id = str(config.get("group.id"))
        self._refusal_said = False

    def _look(self, message: Any) -> None:
        super()._look(message)
        error = message.error() if message is not None else None
        if error is None or self._refusal_said:
            return
        if error.code() == confluent_kafka.KafkaError._FATAL and (
            "group id does not exist" in error.str()
        ):
            line = refusal_line(self._group_id, "GROUP_ID_NOT_FOUND", classic=False, offered=())
            if line is not None:
                self._refusal_said = True
                _log.warning("%s", line)


def _refused_topic(text: str) -> str:
    """The topic of librdkafka's "Subscribed topic not available: <topic>: Broker: Topic
    authorization failed" (the whole text when it is not of that form)."""
    _, found, rest = text.partition("not available: ")
    return rest.split(": ", 1)[0] if found else text


def create_consumer(config: Mapping[str, Any]) -> CheckedConsumer:
    """Check ``config`` (raising :class:`ConfigurationError` with the fix) and build a consumer
    (a :class:`ConsumerProtocolConsumer` under ``group.protocol=consumer``)."""
    if config.get("group.protocol") == "consumer":
        return ConsumerProtocolConsumer(config)
    return CheckedConsumer(config)


def rebalance_protocol(
    consumer_or_config: confluent_kafka.Consumer | Mapping[str, Any],
) -> RebalanceProtocol:
    """The rebalance protocol of a configuration or of a consumer from :func:`create_consumer`.

    A configuration is checked first (:func:`check_config`). A plain ``confluent_kafka.Consumer``
    does not reveal its configuration, so it is refused with the two ways around that.
    """
    if isinstance(consumer_or_config, CheckedConsumer):
        return consumer_or_config.rebalance_protocol
    if isinstance(consumer_or_config, Mapping):
        return check_config(consumer_or_config)
    raise ConfigurationError(
        f"cannot tell the rebalance protocol of {type(consumer_or_config).__name__}: "
        "confluent-kafka does not expose it. Pass the consumer's configuration dict to "
        "rebalance_protocol(), or build the consumer with "
        "kafka_sticky_plugin.confluent.create_consumer(config)"
    )


def subscribe(
    consumer: confluent_kafka.Consumer,
    topics: Iterable[str],
    listener: RebalanceListener | Kip1306Listener,
    *,
    commit_on_revoke: bool = False,
    protocol: RebalanceProtocol | None = None,
) -> RebalanceBridge:
    """Subscribe ``consumer`` to ``topics`` with a kafka-python-style rebalance ``listener``,
    or a :class:`kafka_sticky_plugin.RebalanceListener` (Java 4.5's shape, KIP-1306: each
    method also gets a ``RebalanceConsumer``, see :mod:`.rebalance_consumer`).

    ``protocol`` is needed only for a consumer not built by :func:`create_consumer` (and must
    then match its configuration); for a :class:`CheckedConsumer` it must be omitted or equal.
    With ``commit_on_revoke`` the positions of revoked partitions are committed synchronously
    after ``on_partitions_revoked`` returns; lost partitions are never committed. Returns the
    bridge whose methods are the consumer's ``on_assign``/``on_revoke``/``on_lost``.
    """
    known = consumer.rebalance_protocol if isinstance(consumer, CheckedConsumer) else None
    if known is not None and protocol is not None and protocol is not known:
        raise ConfigurationError(
            f"protocol={protocol.name} contradicts the consumer's configuration, which gives "
            f"{known.name}; omit protocol= for consumers from create_consumer()"
        )
    chosen = known if known is not None else protocol
    if chosen is None:
        raise ConfigurationError(
            "subscribe() needs the rebalance protocol of a plain confluent_kafka.Consumer: pass "
            "protocol=rebalance_protocol(config) with the dict the consumer was built from, or "
            "build it with kafka_sticky_plugin.confluent.create_consumer(config)"
        )
    topic_list = [topics] if isinstance(topics, str) else list(topics)
    if not topic_list or any(not isinstance(t, str) or not t for t in topic_list):
        raise ConfigurationError(f"topics must be non-empty topic names, got {topic_list!r}")
    # a RebalanceListener (KIP-1306) is called with its view (.rebalance_consumer)
    bridged: RebalanceListener = one_argument(consumer, listener)
    check_listener(bridged)
    bridge = RebalanceBridge(
        bridged,
        chosen,
        commit_on_revoke=commit_on_revoke,
        group_id=str(getattr(consumer, "group_id", "")),
        client_id=str(getattr(consumer, "client_id", "")),
    )
    consumer.subscribe(
        topic_list, on_assign=bridge.on_assign, on_revoke=bridge.on_revoke, on_lost=bridge.on_lost
    )
    if isinstance(consumer, CheckedConsumer) and consumer.statistics is not None:
        consumer.statistics.attach(bridge.metrics)
    bridge.metrics.join_attempt()  # the first rebalance starts here (JoinGroup at next poll)
    return bridge


def check_listener(listener: object) -> None:
    """Refuse, before anything is subscribed, a listener the bridge could not call.

    ``on_partitions_revoked`` and ``on_partitions_assigned`` must be callable; an
    ``on_partitions_lost`` attribute, when present, must be callable too. librdkafka calls the
    callbacks synchronously inside ``poll()``, so coroutine functions (``async def``) are
    refused as well: they would return a coroutine that never runs.
    """
    problems: list[str] = []
    for name in _REQUIRED_METHODS + _OPTIONAL_METHODS:
        if not hasattr(listener, name):
            if name in _REQUIRED_METHODS:
                problems.append(f"has no {name}()")
            continue
        method = getattr(listener, name)
        if not callable(method):
            problems.append(f"{name} is not callable ({type(method).__name__})")
        elif inspect.iscoroutinefunction(method):
            problems.append(f"{name} is a coroutine function (librdkafka calls it synchronously)")
    if problems:
        raise ConfigurationError(
            f"listener {type(listener).__name__} cannot be used: {'; '.join(problems)}. A "
            "listener needs on_partitions_revoked(revoked) and on_partitions_assigned(assigned), "
            "optionally on_partitions_lost(lost), each a plain method taking a set of "
            "TopicPartition"
        )
