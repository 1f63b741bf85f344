"""``install_hooks`` for aiokafka: one consumer's assignors bound, its class swapped for a
hooked subclass whose ``_coordinator`` slot attaches :class:`~.hooks.AioHooks` to the
``GroupCoordinator`` that ``start()`` creates, whose ``getone``/``getmany`` run the hooks'
session check first, and whose ``start()`` does not fail on a subscribed topic it may not
describe, and says our one line when no bootstrap address answers
(:mod:`...bootstrap_check`; aiokafka itself raises at once). Public face:
:mod:`kafka_sticky_plugin.aiokafka`.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

from ...assignor.contract import JoinReadouts
from ...assignor.prompt_heartbeats import DEFAULT_PROMPT_HEARTBEATS, PromptHeartbeats
from ...assignor.rebalance import RebalanceProtocol
from ...bootstrap_check import BootstrapCheck
from ...errors import ConfigurationError
from ...listener.contract import RebalanceListener, check_rebalance_listener
from ...metrics.recorder import RebalanceMetrics
from .hooks import AioHooks
from .rebalance_consumer import refuse_second_listener, set_rebalance_listener
from .topic_authorization import missing_topics_of
from .versions import check_version

log = logging.getLogger("kafka_sticky_plugin.aiokafka")

__all__ = ["AioKafkaHooks", "install_hooks"]

_HANDLE = "_kafka_sticky_plugin_aiokafka_hooks"


@dataclass(frozen=True)
class AioKafkaHooks(JoinReadouts):
    """The hooks installed on one consumer: the aiokafka ``version``, the rebalance
    ``protocol`` the group runs, and the ``assignors`` its coordinator uses (ours hold no
    member state here: an instance may be shared by several hooked consumers); :attr:`joined`
    (and its :attr:`generation`) is this member's last completed join, the one state its
    JoinGroup metadata is written from."""

    version: str
    protocol: RebalanceProtocol
    assignors: tuple[Any, ...]
    _impl: AioHooks

    @property
    def metrics(self) -> RebalanceMetrics:
        """This consumer's rebalance metrics (:mod:`kafka_sticky_plugin.metrics`)."""
        return self._impl.metrics

    @property
    def owned(self) -> frozenset[Any]:
        """The partitions this member owns in the group's eyes (aiokafka ``TopicPartition``)."""
        return self._impl.owned


class _CoordinatorSlot:
    """A data descriptor for ``_coordinator`` on a hooked consumer's class: when ``start()``
    stores the new ``GroupCoordinator``, the hooks are attached to it at once (before its
    coordination task first runs, which is at ``start()``'s first ``await``)."""

    def __get__(self, consumer: Any, owner: Any = None) -> Any:
        if consumer is None:
            return self
        return consumer.__dict__.get("_coordinator")

    def __set__(self, consumer: Any, value: Any) -> None:
        consumer.__dict__["_coordinator"] = value
        handle = consumer.__dict__.get(_HANDLE)
        if value is not None and isinstance(handle, AioKafkaHooks):
            handle._impl.attach(value)


async def _getone(self: Any, *partitions: Any) -> Any:
    """``getone`` after the hooks' session check (see ``AioHooks.check_session``)."""
    await self.__dict__[_HANDLE]._impl.check_session()
    return await type(self)._kafka_sticky_plugin_unhooked.getone(self, *partitions)


async def _getmany(
    self: Any, *partitions: Any, timeout_ms: int = 0, max_records: Any = None
) -> Any:
    """``getmany`` after the hooks' session check (see ``AioHooks.check_session``)."""
    await self.__dict__[_HANDLE]._impl.check_session()
    unhooked = type(self)._kafka_sticky_plugin_unhooked
    return await unhooked.getmany(self, *partitions, timeout_ms=timeout_ms, max_records=max_records)


async def _wait_topics(self: Any) -> None:
    """``start()``'s wait for the metadata of the subscribed topics, without failing on a topic
    this consumer may not describe: aiokafka raises ``TopicAuthorizationFailedError`` out of
    ``start()`` then (the consumer half started); here the hooks say it once and leave the
    topic out of the JoinGroup until it is granted (:mod:`.topic_authorization`).

    Nor on a topic the cluster does not have: aiokafka waits ``request_timeout_ms`` (40 s by
    default) for it, then raises an ``UnknownTopicOrPartitionError`` naming nothing. Here one
    metadata request that lacks it, then a second one, and the member says so at once in one
    line (:mod:`...assignor.missing_topics`) and starts without waiting: it gets that topic's
    partitions once it exists (aiokafka's next metadata refresh sees it)."""
    import aiokafka.errors as errors

    subscription = self._subscription.subscription
    if subscription is None:
        return
    client = self._client
    absent = [t for t in subscription.topics if client.cluster.partitions_for_topic(t) is None]
    if getattr(client, "_sync_task", None) is None:
        absent = []  # not bootstrapped: no metadata request can be answered; the wait decides
    for topic in absent:
        client.add_topic(topic)
    budget_s = int(self._client._request_timeout_ms) / 1000
    for _ in range(2 if absent else 0):  # a topic being auto-created may miss one response
        try:
            answered = await asyncio.wait_for(client.force_metadata_update(), budget_s)
        except asyncio.TimeoutError:
            answered = False
        if not answered:  # no response: nothing is known to be missing
            absent = []
            break
        absent = [t for t in absent if client.cluster.partitions_for_topic(t) is None]
        if not absent:
            break
    refused = frozenset(client.cluster.unauthorized_topics or ())
    missing = missing_topics_of(self)
    for level, line in missing.observe(absent, (), refused, confirmed=True):
        log.log(level, "%s", line)
    for topic in subscription.topics:
        if topic in missing.missing:
            continue
        try:
            await client._wait_on_metadata(topic)
        except errors.TopicAuthorizationFailedError:
            continue  # in the cluster's unauthorized topics, which the hooks read


async def _start(self: Any) -> None:
    """aiokafka's ``start()``; when it cannot bootstrap (it raises at once, naming no group),
    the line every hooked client says (:mod:`...bootstrap_check`) comes first, then its
    error."""
    from aiokafka.errors import KafkaConnectionError

    try:
        await type(self)._kafka_sticky_plugin_unhooked.start(self)
    except KafkaConnectionError:
        client = self._client
        check = BootstrapCheck(
            f"group {self._group_id} client {client._client_id}", client._bootstrap_servers
        )
        await asyncio.get_running_loop().run_in_executor(None, check.run)
        raise


def _subscribe(self: Any, *args: Any, **kwargs: Any) -> Any:
    """``subscribe`` refusing a listener beside a registered RebalanceListener (one slot,
    :mod:`.rebalance_consumer`)."""
    given = kwargs.get("listener", args[2] if len(args) > 2 else None)
    if given is not None:
        refuse_second_listener(self, given)
    return type(self)._kafka_sticky_plugin_unhooked.subscribe(self, *args, **kwargs)


_HOOKED_CLASSES: dict[type, type] = {}


def _hooked_class(cls: type) -> type:
    """``cls`` with the coordinator slot, the session check before ``getone``/``getmany``
    (``async for`` goes through ``getone``) and :func:`_wait_topics`; one subclass per
    consumer class, same name."""
    hooked = _HOOKED_CLASSES.get(cls)
    if hooked is None:
        hooked = type(
            cls.__name__,
            (cls,),
            {
                "_coordinator": _CoordinatorSlot(),
                "_kafka_sticky_plugin_unhooked": cls,
                "getone": _getone,
                "getmany": _getmany,
                "_wait_topics": _wait_topics,
                "start": _start,
                "subscribe": _subscribe,
                "__module__": cls.__module__,
                "__qualname__": cls.__qualname__,
                "__doc__": cls.__doc__,
            },
        )
        _HOOKED_CLASSES[cls] = hooked
    return hooked


def install_hooks(
    consumer: Any,
    *,
    prompt_heartbeats: PromptHeartbeats | None = DEFAULT_PROMPT_HEARTBEATS,
    listener: RebalanceListener | None = None,
) -> AioKafkaHooks:
    """Enable the plugin's coordinator hooks on ``consumer`` (an ``AIOKafkaConsumer``).

    ``prompt_heartbeats``: after each cooperative SyncGroup, heartbeat at this quicker rate
    for a short window so a follow-up round starts sooner
    (:mod:`kafka_sticky_plugin.assignor.prompt_heartbeats`); ``None`` turns it off.
    ``listener``: a :class:`~kafka_sticky_plugin.listener.RebalanceListener` (Java 4.5's
    shape, KIP-1306), registered as :func:`.rebalance_consumer.set_rebalance_listener` does.

    Call before ``await consumer.start()``. Idempotent: a second call returns the first
    handle. Raises :class:`UnsupportedClientError` for an aiokafka outside
    :data:`SUPPORTED_MINORS` and :class:`ConfigurationError` when the consumer has no
    ``group_id``, was already started, uses none of this module's assignors, or configures
    assignors with no rebalance
    protocol in common (``range`` with ``cooperative-sticky`` is fine: EAGER, the upgrade's
    first bounce).
    """
    existing = consumer.__dict__.get(_HANDLE) if hasattr(consumer, "__dict__") else None
    if isinstance(existing, AioKafkaHooks):
        if listener is not None:
            set_rebalance_listener(consumer, listener)
        return existing
    import aiokafka
    from aiokafka import AIOKafkaConsumer

    version = str(aiokafka.__version__)
    check_version(version)
    if not isinstance(consumer, AIOKafkaConsumer):
        raise ConfigurationError(f"{consumer!r} is not an aiokafka AIOKafkaConsumer")
    if consumer._group_id is None:
        raise ConfigurationError("the consumer has no group_id: there is no group to hook into")
    if consumer.__dict__.get("_coordinator") is not None or consumer._closed:
        raise ConfigurationError(
            "install_hooks must run before `await consumer.start()` (start() creates the "
            "group coordinator and begins the first join)"
        )
    if listener is not None:
        check_rebalance_listener(listener, coroutines=True)
        refuse_second_listener(consumer)
    impl = AioHooks(consumer, prompt_heartbeats)
    handle = AioKafkaHooks(
        version=version, protocol=impl.protocol, assignors=tuple(impl.assignors), _impl=impl
    )
    consumer.__dict__[_HANDLE] = handle
    consumer.__class__ = _hooked_class(type(consumer))
    impl.rebalance_listener = listener
    return handle
