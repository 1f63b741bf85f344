"""TOPIC_AUTHORIZATION_FAILED for a hooked aiokafka consumer's own topics: the member asks
the group only for the topics it may describe, says so once, and rejoins with the others
when they are granted.

What aiokafka (0.13, 0.14) does alone: ``start()`` raises ``TopicAuthorizationFailedError``
when a topic given to the constructor may not be described (the consumer is left half
started); subscribed later, the topic is only logged by its metadata code (``Topic ... is not
authorized for this client``, at every refresh), its JoinGroup still names the topic, so a
leader that may describe it assigns this member some of its partitions, and every Fetch of
them is refused: ``getmany``/``getone`` raise ``TopicAuthorizationFailedError`` and those
records stay unconsumed while the member holds them (other members that may read the topic
are not given them). The hooked ``start()`` goes on without the topic
(:func:`.install._wait_topics`).

Here, as for kafka-python (:class:`~kafka_sticky_plugin.adapters.kafka_python.hooks.
authorization.TopicAuthorization`, point 2), a listener on the cluster metadata keeps
:attr:`AioTopicAuthorization.refused_own`; the JoinGroup names the subscription without those
topics (:meth:`AioTopicAuthorization.joinable`), and a change requests a rejoin. aiokafka
refreshes metadata only every ``metadata_max_age_ms`` (5 minutes by default), so while a
topic is refused the metadata is asked for again every :data:`RECHECK_S` seconds, so that a
grant is seen soon.

Invariants: ``refused_own`` is the set of subscribed topics the last Metadata response
refused; a change of it is one WARNING line (topics refused) or one INFO line (granted
again), never one per refresh; nothing here runs a request unless a subscribed topic is
refused; no line carries credentials.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import Any

from ...assignor.missing_topics import MissingTopics
from ...authorization_advice import own_topics_change_lines
from .authorization import _principal

__all__ = ["RECHECK_S", "AioTopicAuthorization", "missing_topics_of"]

log = logging.getLogger("kafka_sticky_plugin.aiokafka")

#: Seconds between two metadata requests while a subscribed topic is refused.
RECHECK_S = 5.0


_MISSING = "_kafka_sticky_plugin_missing_topics"


def missing_topics_of(consumer: Any) -> MissingTopics:
    """The consumer's :class:`MissingTopics` (one per hooked consumer; ``start()`` says which
    subscribed topics the cluster lacks, the metadata listener when they exist)."""
    found = consumer.__dict__.get(_MISSING)
    if not isinstance(found, MissingTopics):
        found = consumer.__dict__[_MISSING] = MissingTopics(str(consumer._group_id))
    return found


class AioTopicAuthorization:
    """One consumer's refused own topics (see the module docstring)."""

    def __init__(self, consumer: Any, group_id: str) -> None:
        self._consumer = consumer
        self._group_id = group_id
        self._principal = _principal(consumer)
        self.refused_own: frozenset[str] = frozenset()
        #: ``refused_own`` when the last JoinGroup was built (``None``: none yet)
        self._joined_refused: frozenset[str] | None = None
        self._coordinator: Any = None
        self._recheck: asyncio.TimerHandle | None = None

    def attach(self, coordinator: Any) -> None:
        """Listen to the metadata of ``coordinator``'s cluster (the consumer's client's)."""
        if self._coordinator is not None:
            self._coordinator._cluster.remove_listener(self.on_metadata)
        self._coordinator = coordinator
        coordinator._cluster.add_listener(self.on_metadata)
        self.on_metadata(coordinator._cluster)  # start() has already read the metadata

    def on_metadata(self, cluster: Any) -> None:
        """aiokafka's metadata listener: note what changed, keep rechecking while refused."""
        subscription = self._consumer._subscription
        refused = frozenset(getattr(cluster, "unauthorized_topics", ()) or ())
        own = refused & frozenset(subscription.topics) if refused else frozenset()
        missing = missing_topics_of(self._consumer)
        if missing.missing:  # said by start(); here: when they exist
            for level, line in missing.observe(missing.missing, cluster.topics(), refused):
                log.log(level, "%s", line)
        if own != self.refused_own:
            self._note(own, subscription)
        if own and self._recheck is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # not called from aiokafka's loop: its own refresh decides
                return
            self._recheck = loop.call_later(RECHECK_S, self._ask_metadata)

    def _note(self, own: frozenset[str], subscription: Any) -> None:
        for level, line in own_topics_change_lines(
            self._group_id, self.refused_own, own, self._principal
        ):
            log.log(level, "%s", line)
        self.refused_own = own
        if subscription.partitions_auto_assigned() and self._coordinator is not None:
            self._coordinator.request_rejoin()

    def _ask_metadata(self) -> None:
        self._recheck = None
        coordinator = self._coordinator
        if not self.refused_own or coordinator is None or coordinator._closing.done():
            return
        pending = self._consumer._client.force_metadata_update()
        # Read the outcome so a failed refresh is no "exception never retrieved" warning; a
        # failed one is retried by the next listener call or by aiokafka's own schedule.
        pending.add_done_callback(lambda done: done.cancelled() or done.exception())

    def joinable(self, topics: Iterable[str]) -> set[str]:
        """The topics to ask the group for: ``topics`` without those refused to this member;
        never empty when ``topics`` is not (a member refused everything joins with its whole
        subscription, so the group sees it and the leader decides). Remembers what was
        refused, for :meth:`stale`."""
        wanted = set(topics)
        self._joined_refused = self.refused_own
        return (wanted - self.refused_own) or wanted

    def stale(self) -> bool:
        """Whether the refused topics changed since the last JoinGroup was built (a change
        that arrived during the join, whose rejoin request aiokafka's SyncGroup forgot)."""
        return self._joined_refused is not None and self._joined_refused != self.refused_own
