"""A consumer group over a topic that receives records before and throughout the scenario.

The group tests share one shape: a fresh topic, a keyed producer that fills it and then keeps
sending at a steady rate, a consumer group subscribed to it, the scenario itself, and at the
end the same whole-run guarantees. :class:`FlowingGroup` holds the set-up's parts and those
closing checks; the ``flowing_group`` fixture of ``conftest.py`` builds one (a
:class:`FlowingGroupFactory`), so a test states only its assignors, partition count, rate,
member settings and scenario.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Protocol

from kafka_sticky_plugin.groups.analysis import DeliveryReport, analyse_deliveries
from kafka_sticky_plugin.groups.producer import KeyedProducer
from kafka_sticky_plugin.groups.runner import ConsumerGroupRunner
from testlab.checks import check_deliveries, check_exclusive_ownership

__all__ = ["DRAIN_TIMEOUT_S", "FlowingGroup", "FlowingGroupFactory"]

DRAIN_TIMEOUT_S = 30.0


@dataclass
class FlowingGroup:
    """A group whose topic is being produced to (see the module docstring).

    As built by the ``flowing_group`` fixture: ``topic`` is a fresh topic to which
    ``producer`` sent ``partitions * 10`` records and flushed them (waited for the broker's
    answers) before the fixture returned, and keeps sending from a background thread until
    :meth:`stop`; ``group`` subscribes to ``topic`` and to every one of ``idle_topics``
    (fresh topics with as many partitions, never produced to) and has no member started yet.
    Producer and group are closed at the test's teardown whether or not :meth:`stop` ran.
    """

    topic: str
    producer: KeyedProducer
    group: ConsumerGroupRunner
    idle_topics: tuple[str, ...] = ()
    drained: bool = False

    def stop(self) -> None:
        """Stop producing (waiting for every acknowledgement), wait up to
        :data:`DRAIN_TIMEOUT_S` for every acknowledged record to be delivered (``drained``
        says whether they were), then close every member of the group."""
        self.producer.stop()
        self.drained = self.group.wait_delivered(
            self.producer.acknowledged(), timeout_s=DRAIN_TIMEOUT_S
        )
        self.group.close()

    def check_guarantees(self, label: str | None = None) -> DeliveryReport:
        """After :meth:`stop`, assert the whole run's guarantees: no partition ever had two
        owners at once, no acknowledged record was lost, records were delivered again only
        above the committed offset (in flight), and every acknowledged record was delivered
        within :meth:`stop`'s wait. With ``label``, print the acknowledged and duplicate counts
        under it first. Returns the delivery report."""
        events = self.group.log.events()
        check_exclusive_ownership(events, time.monotonic())
        report = analyse_deliveries(
            self.producer.acknowledged(), self.group.log.deliveries(), events
        )
        if label is not None:
            print(f"{label}: acknowledged {report.acknowledged}, duplicates {report.duplicates}")
        check_deliveries(report)
        assert self.drained, (
            f"not every acknowledged record was delivered within {DRAIN_TIMEOUT_S:g}s"
        )
        return report

    def finish(self, label: str | None = None) -> DeliveryReport:
        """:meth:`stop`, then :meth:`check_guarantees` (``label`` as there)."""
        self.stop()
        return self.check_guarantees(label)


class FlowingGroupFactory(Protocol):
    """The ``flowing_group`` fixture: builds a :class:`FlowingGroup` for the current test."""

    def __call__(
        self,
        assignors: list[str],
        partitions: int,
        *,
        rate_per_s: float,
        idle_topics: int = 0,
        **member_settings: object,
    ) -> FlowingGroup:
        """A fresh ``partitions``-partition topic (plus ``idle_topics`` fresh ones of the same
        size, created after it), ``partitions * 10`` records sent to it and flushed, then
        ``rate_per_s`` records a second from a background thread; a group with the test's
        ``group_id``, these ``assignors`` and ``member_settings`` (extra
        :class:`~kafka_sticky_plugin.groups.member_config.MemberConfig` fields), subscribed
        to every one of those topics, no member started."""
        ...
