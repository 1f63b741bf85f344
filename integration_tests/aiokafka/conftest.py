"""Fixtures of the aiokafka hooks' real-broker tests (run once per aiokafka matrix venv).

``group(partitions)`` creates fresh topics and a fresh group id with a producer sending to
every partition; ``.aio(name, ...)`` starts an aiokafka member, ``.kp(name, ...)`` a hooked
kafka-python member (the kafka-python hooks' harness, for mixed groups); all are stopped at
teardown.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "hooks"))

from aio_harness import AioMember
from hooks_harness import Member, Producer, create_topics, unique

from kafka_sticky_plugin.aiokafka import CooperativeStickyAssignor


@pytest.fixture
def group(broker: Any) -> Iterator[Any]:
    created: list[Any] = []
    producers: list[Producer] = []

    class Group:
        bootstrap = broker.bootstrap
        group_id = unique("g-aio")

        def __init__(self, partitions: dict[str, int], produce: bool = True) -> None:
            self.partitions = {unique(name): count for name, count in partitions.items()}
            self.names = dict(zip(partitions, self.partitions, strict=True))
            create_topics(broker.bootstrap, self.partitions)
            self.producer = None
            if produce:
                self.producer = Producer(broker.bootstrap, self.partitions, rate_per_s=60)
                producers.append(self.producer)

        def all_partitions(self) -> set[tuple[str, int]]:
            return {(t, p) for t, n in self.partitions.items() for p in range(n)}

        def _topics(self, topics: list[str] | None) -> list[str]:
            return [self.names[t] for t in (topics or list(self.names))]

        def aio(self, name: str, topics: list[str] | None = None, **kw: Any) -> AioMember:
            member = AioMember(
                name,
                broker.bootstrap,
                self.group_id,
                self._topics(topics),
                kw.pop("strategy", [CooperativeStickyAssignor]),
                **kw,
            )
            created.append(member)
            return member.start()

        def kp(self, name: str, strategy: list[Any], topics: list[str] | None = None) -> Member:
            member = Member(name, broker.bootstrap, self.group_id, self._topics(topics), strategy)
            created.append(member)
            return member.start()

    yield Group
    for producer in producers:
        producer.close()
    for member in created:
        member.stop()
