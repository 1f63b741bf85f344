"""Fixtures shared by the hooks' real-broker tests (run on every client version).

``group(partitions)`` creates fresh topics (names made unique) and a fresh group id, with a
producer sending to every partition, and starts hooked members with ``.member(name, ...)``;
everything is stopped at teardown.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hooks_harness import Member, Producer, create_topics, unique

from kafka_sticky_plugin import CooperativeStickyAssignor


@pytest.fixture
def group(broker: Any) -> Iterator[Any]:
    """``group(partitions)`` -> a context with the topics created, members and a producer."""
    created: list[Member] = []
    producers: list[Producer] = []

    class Group:
        bootstrap = broker.bootstrap
        group_id = unique("g-hooks")

        def __init__(self, partitions: dict[str, int], produce: bool = True) -> None:
            self.partitions = {unique(name): count for name, count in partitions.items()}
            self.names = {
                name: real for name, real in zip(partitions, self.partitions, strict=True)
            }
            create_topics(broker.bootstrap, self.partitions)
            if produce:
                producers.append(Producer(broker.bootstrap, self.partitions, rate_per_s=60))

        def all_partitions(self, *names: str) -> set[tuple[str, int]]:
            chosen = [self.names[n] for n in names] if names else list(self.partitions)
            return {(t, p) for t in chosen for p in range(self.partitions[t])}

        def member(self, name: str, topics: list[str] | None = None, **kw: Any) -> Member:
            real = [self.names[t] for t in (topics or list(self.names))]
            member = Member(
                name,
                broker.bootstrap,
                self.group_id,
                real,
                kw.pop("strategy", [CooperativeStickyAssignor]),
                **kw,
            )
            created.append(member)
            return member.start()

    yield Group
    for producer in producers:
        producer.close()
    for member in created:
        member.stop()
