"""Authorization failures on kafka-python consumers: one clear line each, no retry storm, no
partitions kept without the group's permission, and a leader that never raises out of
``poll()`` because of another member's permissions.

What the clients do without this (read from kafka-python 3.0.12 and 2.x, seen on Apache
Kafka 4.4 with ``StandardAuthorizer``):

1. **Topic metadata.** The coordinator's metadata listener (``_handle_metadata_update``)
   raises ``TopicAuthorizationFailedError`` whenever the last Metadata response refused any
   topic of the *group's* subscription, before it looks for partition changes. A leader
   subscribes to every member's topics, so one member's topic that the leader may not describe
   (a) on 2.x comes out of the leader's ``poll()`` (the listener runs inside the client's
   poll), (b) on 3.0 is swallowed by the metadata refresh loop, but the leader stops seeing
   partition-count changes of every topic for good (no rebalance when a topic grows).
   Java's classic leader throws TopicAuthorizationException out of ``poll()`` here
   (``Metadata.maybeThrowAnyException`` after ``ensureFreshMetadata`` in
   ``ConsumerCoordinator.onLeaderElected``); its assignors then skip a topic with no metadata
   ("Skipping assignment for topic ... since no metadata is available").
   :class:`TopicAuthorization` replaces the listener: refused topics are reported once and the
   client's own logic runs on a view of the cluster without them. As in Java's assignors, the
   leader assigns no partitions of a topic it cannot describe (it cannot know how many there
   are) and says so once; unlike Java's leader it does not raise, so the rest of the group is
   assigned and keeps consuming. With the hooks (3.0 and 2.x) the refused topics go to
   :class:`.leader_refusal.LeaderRefusal` instead of that line: the leader steps aside once
   so that a member that can describe them leads, and the member whose topic nobody holds
   is told.
2. **A member's own topic.** A member that may not describe a topic it subscribes to would
   still be given that topic's partitions by a leader that may, and then fail every Fetch on
   them (the records stay unconsumed while it holds them). Here the member leaves the refused
   topics out of the topics it sends in JoinGroup (:meth:`TopicAuthorization.joinable`), says
   so once, and rejoins with them when a Metadata response lists them again.
3. **Group authorization.** GROUP_AUTHORIZATION_FAILED (FindCoordinator needs Describe on the
   group, JoinGroup/SyncGroup/Heartbeat need Read) is logged by the client on every attempt
   and retried at every ``poll()`` (about once a second). :class:`GroupAuthorization` says it
   once in one line naming the group, the grant and the principal, spaces the attempts out
   (doubling from 1 s to :data:`MAX_GROUP_RETRY_S`), and on a refused heartbeat (the ACL was
   revoked while the member ran) drops the membership, so the partitions are given up at once
   (``on_partitions_lost``) instead of being fetched on while the broker hands them to others.
   The error still comes out of ``poll()`` once per refused attempt (the client's contract, and
   Java's); it starts over when an attempt succeeds.

Invariants: every refusal is one WARNING/ERROR line per change of what is refused (not per
attempt); no line carries credentials; the original listener is restored by ``uninstall``.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Iterable
from typing import Any

from ....assignor.missing_topics import MissingTopics
from ....authorization_advice import (
    group_refused_line,
    leader_topics_refused_line,
    own_topics_change_lines,
    principal_text,
)

__all__ = [
    "MAX_GROUP_RETRY_S",
    "GroupAuthorization",
    "TopicAuthorization",
    "is_group_refusal",
]

log = logging.getLogger("kafka_sticky_plugin.hooks")

#: The longest wait between two attempts of a member the group refuses.
MAX_GROUP_RETRY_S = 30.0
_FIRST_GROUP_RETRY_S = 1.0


def _principal(consumer: Any) -> str:
    config = getattr(consumer, "config", None)
    return principal_text(config if isinstance(config, dict) else None)


class _AuthorizedView:
    """A cluster metadata object that reports no refused topics (everything else delegated)."""

    unauthorized_topics: frozenset[str] = frozenset()

    def __init__(self, cluster: Any) -> None:
        self._cluster = cluster

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cluster, name)


class TopicAuthorization:
    """The coordinator's metadata listener, without the raise (module docstring, 1 and 2).

    Invariants: ``refused_own`` is the set of this consumer's subscribed topics the last
    Metadata response refused; ``joinable(topics)`` is ``topics`` without them; a change of
    ``refused_own`` requests a rejoin (so the group hears the corrected topic list) and is
    reported once.
    """

    def __init__(
        self,
        consumer: Any,
        group_id: str,
        on_refused: Callable[[frozenset[str]], None] | None = None,
    ) -> None:
        self._coordinator = consumer._coordinator
        #: Given every Metadata response's refused topics instead of the leader line below
        #: (the hooks: :class:`.leader_refusal.LeaderRefusal`, whose leader steps aside).
        self._on_refused = on_refused
        self._subscription = consumer._subscription
        self._group_id = group_id
        self._principal = _principal(consumer)
        self.refused_own: frozenset[str] = frozenset()
        #: subscribed topics the cluster lacks, said once (:mod:`...assignor.missing_topics`)
        self.missing_topics = MissingTopics(group_id)
        self._refused_others: frozenset[str] = frozenset()
        self._registered: Any = None
        self._original: Any = None

    # -- installation ---------------------------------------------------------------------
    def install(self) -> None:
        """Swap the client's listener (a weak reference to the class method) for ours. Ours
        is also the coordinator's ``_handle_metadata_update`` instance attribute, so the
        client's own ``remove_listener(WeakMethod(self._handle_metadata_update))`` (2.x
        ``__del__``, 3.0 ``close``) finds and removes it."""
        from kafka.util import WeakMethod

        coordinator = self._coordinator
        cluster = coordinator._cluster
        self._original = WeakMethod(coordinator._handle_metadata_update)
        cluster.remove_listener(self._original)
        vars(coordinator)["_handle_metadata_update"] = self.on_metadata
        self._registered = WeakMethod(coordinator._handle_metadata_update)
        cluster.add_listener(self._registered)

    def uninstall(self) -> None:
        if self._registered is None:
            return
        coordinator = self._coordinator
        with contextlib.suppress(KeyError):
            coordinator._cluster.remove_listener(self._registered)
        vars(coordinator).pop("_handle_metadata_update", None)
        coordinator._cluster.add_listener(self._original)
        self._registered = None

    # -- the listener ---------------------------------------------------------------------
    def on_metadata(self, cluster: Any) -> None:
        """Report what changed, then the client's listener on a view without refusals."""
        refused = frozenset(getattr(cluster, "unauthorized_topics", ()) or ())
        own = refused & frozenset(self._subscription.subscription or ())
        self._note_own(own)
        self._note_missing(cluster, refused)
        if self._on_refused is not None:
            self._on_refused(refused)
        else:
            self._note_others(refused - own)
        handle = type(self._coordinator)._handle_metadata_update
        handle(self._coordinator, _AuthorizedView(cluster) if refused else cluster)

    def _note_missing(self, cluster: Any, refused: frozenset[str]) -> None:
        """Subscribed topics this response was asked for and lacked: one line per change.
        The topics asked for are the metadata's (3.x: the cluster's, 2.x: the client's)."""
        asked_for = getattr(cluster, "_topics", None)
        if asked_for is None:
            asked_for = getattr(getattr(self._coordinator, "_client", None), "_topics", ())
        asked = frozenset(self._subscription.subscription or ()) & frozenset(asked_for or ())
        present = cluster.topics(exclude_internal_topics=False)
        for level, line in self.missing_topics.observe(asked, present, refused):
            log.log(level, "%s", line)

    def _note_own(self, own: frozenset[str]) -> None:
        if own == self.refused_own:
            return
        for level, line in own_topics_change_lines(
            self._group_id, self.refused_own, own, self._principal
        ):
            log.log(level, "%s", line)
        self.refused_own = own
        if self._subscription.partitions_auto_assigned():
            self._coordinator.request_rejoin()

    def _note_others(self, others: frozenset[str]) -> None:
        if others == self._refused_others:
            return
        self._refused_others = others
        if others and getattr(self._coordinator, "_is_leader", False):
            log.warning("%s", leader_topics_refused_line(self._group_id, others, self._principal))

    def joinable(self, topics: Iterable[str]) -> set[str]:
        """The topics to ask the group for: ``topics`` without those refused to this member.
        Never empty when ``topics`` is not (a member refused everything still joins with its
        whole subscription, so the group sees it and the leader decides)."""
        wanted = set(topics)
        allowed = wanted - self.refused_own
        return allowed or wanted


class GroupAuthorization:
    """Per-consumer state of group refusals (module docstring, 3).

    Invariants: ``refused_at`` is None while the group accepts this member; otherwise no
    group request is started before ``next_attempt_at`` (``time.monotonic()``), and the wait
    doubles with each refusal up to :data:`MAX_GROUP_RETRY_S`.
    """

    def __init__(self, consumer: Any, group_id: str, on_refused: Callable[[], None]) -> None:
        self._group_id = group_id
        self._principal = _principal(consumer)
        self._on_refused = on_refused
        self.refused_at: float | None = None
        self.next_attempt_at = 0.0
        self._wait_s = _FIRST_GROUP_RETRY_S
        #: Refusals seen (read by tests).
        self.refusals = 0

    def wait_s(self) -> float:
        """Seconds before the next group request may be sent (0: now)."""
        return max(0.0, self.next_attempt_at - time.monotonic())

    def refused(self, request: str) -> None:
        """A group request was refused: report (first refusal only), drop the membership,
        wait longer before the next attempt."""
        self.refusals += 1
        first = self.refused_at is None
        if first:
            self.refused_at = time.monotonic()
            log.error(
                "%s", group_refused_line(self._group_id, self._principal, request, self._wait_s)
            )
        else:
            log.debug(
                "group %s: %s refused again (GROUP_AUTHORIZATION_FAILED)", self._group_id, request
            )
        self.next_attempt_at = time.monotonic() + self._wait_s
        self._wait_s = min(self._wait_s * 2, MAX_GROUP_RETRY_S)
        self._on_refused()

    def accepted(self) -> None:
        """A group request succeeded: the next refusal is reported again."""
        if self.refused_at is not None:
            log.info("group %s: the group accepts this consumer again", self._group_id)
        self.refused_at = None
        self.next_attempt_at = 0.0
        self._wait_s = _FIRST_GROUP_RETRY_S


def is_group_refusal(error: BaseException) -> bool:
    """Whether ``error`` is kafka-python's GROUP_AUTHORIZATION_FAILED."""
    import kafka.errors as kafka_errors

    return isinstance(error, kafka_errors.GroupAuthorizationFailedError)
