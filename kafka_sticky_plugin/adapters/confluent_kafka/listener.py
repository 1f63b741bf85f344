"""Translate librdkafka's rebalance callbacks into a kafka-python-style rebalance listener.

librdkafka calls ``on_assign`` / ``on_revoke`` / ``on_lost`` from inside ``poll()``; each call
must end with exactly one assignment change of the kind the group's protocol demands:
``assign`` / ``unassign`` under EAGER, ``incremental_assign`` / ``incremental_unassign`` under
COOPERATIVE (the wrong kind fails, and confluent-kafka then skips its own fallback, leaving
the assignment stale). :class:`RebalanceBridge` makes that call itself, in a ``finally``, so a
listener that raises still leaves librdkafka consistent; the listener's exception then comes
out of ``poll()``.

Listener contract (Java's ``ConsumerRebalanceListener`` semantics, kafka-python's names):

- ``on_partitions_revoked(revoked)`` runs while the member still owns ``revoked``; with
  ``commit_on_revoke`` the bridge then commits their positions synchronously (not when the
  listener raised: its processing state is unknown, so at-least-once wins). EAGER: called at
  every rebalance with the whole assignment (possibly empty). COOPERATIVE: called only when
  something is revoked, with just those partitions.
- ``on_partitions_assigned(assigned)`` runs after the partitions are added to the consumer's
  assignment, at every completed rebalance (possibly with an empty set). EAGER: the whole new
  assignment; COOPERATIVE: only the added partitions.
- ``on_partitions_lost(lost)`` runs when the membership was lost (session timeout, poll
  interval exceeded, fenced): another member may already own ``lost``, so nothing is ever
  committed for them. A listener without this method gets ``on_partitions_revoked`` instead
  (the Java and kafka-python default) - do not commit there yourself if you rely on that.

Values are :class:`TopicPartition` named tuples, equal to kafka-python's ``TopicPartition``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import NamedTuple, Protocol

import confluent_kafka

from ...metrics.recorder import RebalanceMetrics
from .config import RebalanceProtocol
from .ownership import losing

__all__ = ["RebalanceBridge", "RebalanceListener", "TopicPartition"]


class TopicPartition(NamedTuple):
    """A partition as the listener sees it; compares equal to kafka-python's namedtuple."""

    topic: str
    partition: int


class RebalanceListener(Protocol):
    """The two required listener methods; ``on_partitions_lost`` is optional (see module doc)."""

    def on_partitions_revoked(self, revoked: set[TopicPartition]) -> object:
        """The member is about to give up ``revoked``; it still owns them."""

    def on_partitions_assigned(self, assigned: set[TopicPartition]) -> object:
        """The member now owns ``assigned`` (added to its assignment already)."""


def _as_set(partitions: Iterable[confluent_kafka.TopicPartition]) -> set[TopicPartition]:
    return {TopicPartition(tp.topic, tp.partition) for tp in partitions}


_Callback = Callable[
    ["RebalanceBridge", confluent_kafka.Consumer, list[confluent_kafka.TopicPartition]], None
]


def _raising_real_exceptions(callback: _Callback) -> _Callback:
    """Make an exception leaving ``callback`` come out of ``poll()`` as itself.

    confluent-kafka 2.16 on Python < 3.12 stores a callback's exception with ``PyErr_Fetch``
    and re-raises the *value*. When the exception was set by confluent-kafka's own C code
    (``commit()`` failing inside ``on_revoke``, say) and nothing in Python caught it, that
    value is the bare ``KafkaError``, which is not an exception: ``poll()`` then raises an
    object no ``except`` clause can catch, and the program dies. Catching the exception here
    turns it into a real instance; the bare ``raise`` passes that instance on unchanged.
    """

    @functools.wraps(callback)
    def guarded(
        bridge: RebalanceBridge,
        consumer: confluent_kafka.Consumer,
        partitions: list[confluent_kafka.TopicPartition],
    ) -> None:
        try:
            callback(bridge, consumer, partitions)
        except BaseException:
            raise

    return guarded


class RebalanceBridge:
    """One subscription's callbacks. State: the listener, the protocol and the commit choice.

    Invariant: every callback ends with one assignment change of the protocol's kind, also when
    the listener or the commit raises; lost partitions are never committed. ``_owned`` is the
    assignment the callbacks have built (what ``assigned-partitions`` reports).

    Metrics (:attr:`metrics`): librdkafka runs the JoinGroup/SyncGroup itself and shows only
    these callbacks, so a rebalance ends at ``on_assign`` and starts at ``subscribe`` (the
    first) or, under EAGER, at the ``on_revoke`` that precedes every later one (its latency is
    then measured); later COOPERATIVE rounds show no start (counted, no latency sample);
    failed attempts and the generation are not visible (0 and -1).
    """

    def __init__(
        self,
        listener: RebalanceListener,
        protocol: RebalanceProtocol,
        *,
        commit_on_revoke: bool,
        group_id: str = "",
        client_id: str = "",
    ) -> None:
        self._listener = listener
        self._protocol = protocol
        self._commit_on_revoke = commit_on_revoke
        self._owned: set[TopicPartition] = set()
        self.metrics = RebalanceMetrics(group_id, client_id, assigned=lambda: len(self._owned))

    @property
    def protocol(self) -> RebalanceProtocol:
        """The rebalance protocol whose assignment calls this bridge makes."""
        return self._protocol

    @_raising_real_exceptions
    def on_assign(
        self, consumer: confluent_kafka.Consumer, partitions: list[confluent_kafka.TopicPartition]
    ) -> None:
        """librdkafka's ``on_assign``: add the partitions, then tell the listener."""
        added = _as_set(partitions)
        if self._protocol is RebalanceProtocol.COOPERATIVE:
            consumer.incremental_assign(partitions)
        else:
            consumer.assign(partitions)
            self._owned.clear()
        self._owned |= added
        self.metrics.join_succeeded(-1, added=len(added))
        with self.metrics.timed_callback("assigned", len(added)):
            self._listener.on_partitions_assigned(added)

    @_raising_real_exceptions
    def on_revoke(
        self, consumer: confluent_kafka.Consumer, partitions: list[confluent_kafka.TopicPartition]
    ) -> None:
        """librdkafka's ``on_revoke``: listener, then commit (if asked and it succeeded)."""
        revoked = _as_set(partitions)
        if self._protocol is RebalanceProtocol.EAGER:
            self.metrics.join_attempt()  # librdkafka revokes before every EAGER JoinGroup
        try:
            if revoked or self._protocol is RebalanceProtocol.EAGER:
                with self.metrics.timed_callback("revoked", len(revoked)):
                    self._listener.on_partitions_revoked(revoked)
            if self._commit_on_revoke and revoked:
                commit_positions(consumer, partitions)
        finally:
            self._remove(consumer, partitions)

    @_raising_real_exceptions
    def on_lost(
        self, consumer: confluent_kafka.Consumer, partitions: list[confluent_kafka.TopicPartition]
    ) -> None:
        """librdkafka's ``on_lost``: tell the listener, never commit, drop the partitions."""
        lost = _as_set(partitions)
        with losing(consumer, partitions):  # the commit guard refuses them from now on
            try:
                if lost or self._protocol is RebalanceProtocol.EAGER:
                    handler: Callable[[set[TopicPartition]], object] = getattr(
                        self._listener, "on_partitions_lost", self._listener.on_partitions_revoked
                    )
                    with self.metrics.timed_callback("lost", len(lost)):
                        handler(lost)
            finally:
                self._remove(consumer, partitions)

    def _remove(
        self, consumer: confluent_kafka.Consumer, partitions: list[confluent_kafka.TopicPartition]
    ) -> None:
        self._owned -= _as_set(partitions)
        if self._protocol is RebalanceProtocol.COOPERATIVE:
            consumer.incremental_unassign(partitions)
        else:
            consumer.unassign()
            self._owned.clear()


def commit_positions(
    consumer: confluent_kafka.Consumer, partitions: list[confluent_kafka.TopicPartition]
) -> list[confluent_kafka.TopicPartition]:
    """Commit, synchronously, the next offset to read of each partition that has one.

    Partitions with no position yet (nothing consumed since assignment) are skipped: there is
    nothing new to commit. Raises ``confluent_kafka.KafkaException`` if the commit or any
    partition's commit fails. Returns the committed offsets.
    """
    positions = consumer.position(
        [confluent_kafka.TopicPartition(tp.topic, tp.partition) for tp in partitions]
    )
    to_commit = [tp for tp in positions if tp.offset >= 0]
    if not to_commit:
        return []
    committed = consumer.commit(offsets=to_commit, asynchronous=False)
    for tp in committed or []:
        if tp.error is not None:
            raise confluent_kafka.KafkaException(tp.error)
    return to_commit
