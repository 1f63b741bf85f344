"""In-process kafka-python members for the ACL scenarios: each user its own hooked consumer
over SCRAM, all polled in turn from the test's thread, with what each consumed, what each
``poll()`` raised, and a check at every turn that no partition has two owners.

Invariants: :meth:`AclGroup.drive` polls every member once per round and checks ownership
after every round (the members are polled from one thread, so a round's assignments are one
consistent sample); every consumer is closed by :meth:`AclGroup.close`.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from kafka_sticky_plugin.testing.admin import create_topic, unique_name
from kafka_sticky_plugin.testing.client_security import kafka_python_settings
from kafka_sticky_plugin.testing.kafka_security import SecuredKafka
from kafka_sticky_plugin.testing.producer import KeyedProducer

#: The fast-group settings every member uses (BROKER_NOTES.md).
GROUP_TIMING = {
    "session_timeout_ms": 6000,
    "heartbeat_interval_ms": 1000,
    "max_poll_interval_ms": 10000,
}


@dataclass
class AclMember:
    """One user's hooked consumer and what it saw."""

    user: str
    consumer: Any
    hooks: Any
    consumed: set[tuple[str, int, int]] = field(default_factory=set)
    errors: Counter[str] = field(default_factory=Counter)

    def owned(self) -> set[tuple[str, int]]:
        return {(tp.topic, tp.partition) for tp in self.consumer.assignment()}

    def poll_once(self, timeout_ms: int = 100) -> None:
        try:
            batches = self.consumer.poll(timeout_ms=timeout_ms)
        except Exception as exc:  # what poll() raised is part of what a test checks
            self.errors[type(exc).__name__] += 1
            return
        for tp, records in batches.items():
            self.consumed.update((tp.topic, tp.partition, r.offset) for r in records)


class AclGroup:
    """Members of one group on a :class:`SecuredKafka` node (see the module docstring)."""

    def __init__(self, kafka: SecuredKafka, group_id: str) -> None:
        self.kafka = kafka
        self.group_id = group_id
        self.members: dict[str, AclMember] = {}
        self.double_owned: list[tuple[str, int]] = []

    def add(
        self, user: str, topics: Iterable[str], protocol: str = "cooperative", **settings: Any
    ) -> AclMember:
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
            bootstrap_servers=self.kafka.bootstrap("scram"),
            group_id=self.group_id,
            client_id=f"{self.group_id}-{user}",
            auto_offset_reset="earliest",
            auto_commit_interval_ms=500,
            partition_assignment_strategy=[assignor],
            **GROUP_TIMING,
            **kafka_python_settings(self.kafka.client(user)),
            **settings,
        )
        hooks = install_hooks(consumer)
        consumer.subscribe(list(topics))
        member = AclMember(user, consumer, hooks)
        self.members[user] = member
        return member

    def drive(self, seconds: float) -> None:
        """Poll every member in turn for ``seconds``, checking ownership after each round."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            for member in self.members.values():
                member.poll_once()
            owners: Counter[tuple[str, int]] = Counter()
            for member in self.members.values():
                owners.update(member.owned())
            self.double_owned.extend(tp for tp, n in owners.items() if n > 1)

    def drive_until(self, done: Any, timeout_s: float) -> bool:
        """Drive until ``done()`` is true (checked every second) or ``timeout_s`` passed."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            self.drive(1.0)
            if done():
                return True
        return False

    def consumed(self, topic: str) -> set[tuple[int, int]]:
        """(partition, offset) of ``topic`` consumed by any member."""
        return {(p, o) for m in self.members.values() for t, p, o in m.consumed if t == topic}

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
