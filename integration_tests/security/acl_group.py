"""Consumers of one group for the ACL scenarios, each user its own consumer over SCRAM, all
polled in turn from the test's thread (or event loop), with what each consumed, what each
poll raised or returned as an error, and a check after every round that no partition has
two owners.

Shared by the three clients' ACL tests: :func:`consumer_kwargs` and :func:`confluent_config`
(a user's consumer settings: the fast-group timings, the client id, SCRAM as that user),
:class:`PolledMember` (a consumer and what it saw) and :class:`PolledGroup` (the members, the
per-round ownership check, :meth:`~PolledGroup.consumed`). :class:`AclGroup` is the
kafka-python group (hooked members); the aiokafka and confluent-kafka tests poll their own
way on the same base. :class:`LogLines` keeps the WARNING-or-worse lines;
:func:`acl_topic` makes a filled topic.

Invariants: :meth:`PolledGroup.check_round` runs after every round of polls (the members are
polled from one thread, so a round's assignments are one consistent sample); every consumer
is closed by the group's ``close``.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from kafka_sticky_plugin.client_security import (
    SecurityLike,
    confluent_settings,
    kafka_python_settings,
)
from kafka_sticky_plugin.groups.admin import create_topic, unique_name
from kafka_sticky_plugin.groups.producer import KeyedProducer
from testlab.kafka_security import SecuredKafka

#: The fast-group settings every member uses (BROKER_NOTES.md).
GROUP_TIMING = {
    "session_timeout_ms": 6000,
    "heartbeat_interval_ms": 1000,
    "max_poll_interval_ms": 10000,
}


def consumer_kwargs(
    kafka: SecuredKafka,
    group_id: str,
    user: str,
    security_settings: Callable[[SecurityLike], dict[str, Any]] = kafka_python_settings,
) -> dict[str, Any]:
    """The keywords kafka-python's ``KafkaConsumer`` and aiokafka's ``AIOKafkaConsumer``
    share for ``user``'s member of ``group_id`` over SCRAM (``security_settings``: the
    client's own, ``aiokafka_settings`` for aiokafka)."""
    return {
        "bootstrap_servers": kafka.bootstrap("scram"),
        "group_id": group_id,
        "client_id": f"{group_id}-{user}",
        "auto_offset_reset": "earliest",
        **GROUP_TIMING,
        **security_settings(kafka.client(user)),
    }


def confluent_config(kafka: SecuredKafka, group_id: str, user: str) -> dict[str, Any]:
    """librdkafka's configuration for ``user``'s member of ``group_id`` over SCRAM."""
    return {
        "bootstrap.servers": kafka.bootstrap("scram"),
        "group.id": group_id,
        "client.id": f"{group_id}-{user}",
        "auto.offset.reset": "earliest",
        "session.timeout.ms": GROUP_TIMING["session_timeout_ms"],
        "heartbeat.interval.ms": GROUP_TIMING["heartbeat_interval_ms"],
        **confluent_settings(kafka.client(user)),
    }


@dataclass
class PolledMember:
    """One user's consumer, its hooks (None without), and what it saw: records consumed
    (topic, partition, offset) and errors counted by name or code."""

    user: str
    consumer: Any
    hooks: Any = None
    consumed: set[tuple[str, int, int]] = field(default_factory=set)
    errors: Counter[Any] = field(default_factory=Counter)

    def owned(self) -> set[tuple[str, int]]:
        return {(tp.topic, tp.partition) for tp in self.consumer.assignment()}


class PolledGroup:
    """Members of one group on a :class:`SecuredKafka` node (see the module docstring)."""

    def __init__(self, kafka: SecuredKafka, group_id: str) -> None:
        self.kafka = kafka
        self.group_id = group_id
        self.members: dict[str, PolledMember] = {}
        #: Partitions seen with two owners in one round (empty: the invariant held).
        self.double_owned: list[tuple[str, int]] = []
        #: Rounds in which a member's assignment changed, per member.
        self.changes: Counter[str] = Counter()
        self._last: dict[str, set[tuple[str, int]]] = {}

    def check_round(self) -> None:
        """After a round of polls: record partitions with two owners and assignment changes."""
        owners: Counter[tuple[str, int]] = Counter()
        for user, member in self.members.items():
            owned = member.owned()
            owners.update(owned)
            if owned != self._last.get(user, set()):
                self.changes[user] += 1
                self._last[user] = owned
        self.double_owned.extend(tp for tp, n in owners.items() if n > 1)

    def consumed(self, topic: str) -> set[tuple[int, int]]:
        """(partition, offset) of ``topic`` consumed by any member."""
        return {(p, o) for m in self.members.values() for t, p, o in m.consumed if t == topic}


class AclGroup(PolledGroup):
    """Hooked kafka-python members (see the module docstring)."""

    def add(
        self, user: str, topics: Iterable[str], protocol: str = "cooperative", **settings: Any
    ) -> PolledMember:
        """``user``'s hooked consumer subscribed to ``topics``; ``settings``: more consumer
        settings (``group_instance_id``...)."""
        from kafka import KafkaConsumer

        from kafka_sticky_plugin.kafka_python import (
            CooperativeStickyAssignor,
            StickyAssignor,
            install_hooks,
        )

        assignor = CooperativeStickyAssignor if protocol == "cooperative" else StickyAssignor
        consumer = KafkaConsumer(
            auto_commit_interval_ms=500,
            partition_assignment_strategy=[assignor],
            **consumer_kwargs(self.kafka, self.group_id, user),
            **settings,
        )
        hooks = install_hooks(consumer)
        consumer.subscribe(list(topics))
        member = PolledMember(user, consumer, hooks)
        self.members[user] = member
        return member

    def _poll(self, member: PolledMember, timeout_ms: int = 100) -> None:
        try:
            batches = member.consumer.poll(timeout_ms=timeout_ms)
        except Exception as exc:  # what poll() raised is part of what a test checks
            member.errors[type(exc).__name__] += 1
            return
        for tp, records in batches.items():
            member.consumed.update((tp.topic, tp.partition, r.offset) for r in records)

    def drive(self, seconds: float) -> None:
        """Poll every member in turn for ``seconds``, checking ownership after each round."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            for member in self.members.values():
                self._poll(member)
            self.check_round()

    def drive_until(self, done: Callable[[], bool], timeout_s: float) -> bool:
        """Drive until ``done()`` is true (checked every second) or ``timeout_s`` passed."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            self.drive(1.0)
            if done():
                return True
        return False

    def close(self) -> None:
        for member in self.members.values():
            member.consumer.close()


class LogLines(logging.Handler):
    """Every WARNING-or-worse line the process logs while attached (the message text)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[tuple[str, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append((record.name, record.getMessage()))

    def ours(self, needle: str) -> list[str]:
        """Our hooks' lines containing ``needle``."""
        return [m for n, m in self.lines if n.startswith("kafka_sticky_plugin") and needle in m]

    def __enter__(self) -> LogLines:
        logging.getLogger().addHandler(self)
        return self

    def __exit__(self, *exc: object) -> None:
        logging.getLogger().removeHandler(self)


def acl_topic(kafka: SecuredKafka, prefix: str, partitions: int, records: int = 0) -> str:
    """A fresh topic made by the super user over SCRAM, filled with ``records`` keyed
    records."""
    name = create_topic(
        kafka.bootstrap("scram"), unique_name(prefix), partitions, security=kafka.admin()
    )
    if records:
        producer = KeyedProducer(kafka.bootstrap("scram"), name, security=kafka.admin())
        producer.send_burst(records)
        producer.close()
    return name
