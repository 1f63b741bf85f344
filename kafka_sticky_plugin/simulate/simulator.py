"""Replay a scenario's events against one strategy: the pure simulator (no Spark).

:func:`simulate` builds the group (every member joins at once: row ``initial``), then, for
each event, changes the group or its topics as the event says and runs the rebalance(s) it
causes, producing one :class:`EventResult` per event.

Determinism: the victims of a generated event are drawn from ``Random(f"{seed}:{index}")``
over the sorted member ids, and membership never depends on the assignment, so every
strategy sees the same trace of membership and topic changes.

Time cap: a baseline strategy whose cumulative leader compute time in a scenario passes
``time_cap_s``, or whose scenario is larger than its ``size_cap`` (members x partitions,
estimated from a calibration), is cut off: the remaining rows have status
``time_cap_exceeded`` and no metrics. Our strategies are never capped.

Baseline errors: an exception raised inside a kafka-python assignor is recorded on its row
(status ``baseline_error``, the exception in ``error``) and ends that strategy's run of the
scenario; an exception from our own code propagates.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from ..errors import InvalidSpecError
from .checks import loads_by_topic
from .group import GroupState, Member, initial_topics_for
from .model import STATUS_BASELINE_ERROR, STATUS_TIME_CAP, Event, EventResult, Scenario
from .rebalance import RebalanceOutcome, rebalance
from .strategies import Strategy

__all__ = ["build_group", "simulate"]


def build_group(scenario: Scenario) -> GroupState:
    """The group before anyone has joined a generation: members, subscriptions, topics."""
    rng = random.Random(f"{scenario.seed}:members")
    group = GroupState(topics=dict(scenario.topics), members={}, shape=scenario.shape)
    group.next_topic = len(group.topics)
    names = sorted(group.topics)
    if scenario.initial_members:
        for member_id, topics in scenario.initial_members:
            group.members[member_id] = Member(member_id, tuple(sorted(topics)))
        group.next_member = len(group.members)
        return group
    for index in range(scenario.members):
        member_id = group.new_member_id()
        topics = initial_topics_for(scenario.shape, index, scenario.members, names, rng)
        group.members[member_id] = Member(member_id, topics)
    return group


def _pick(group: GroupState, event: Event, rng: random.Random, keep: int = 1) -> list[str]:
    """The members an event acts on: the recorded ones, or ``count`` drawn at random
    (never so many that fewer than ``keep`` members remain)."""
    if event.members:
        return [m for m in event.members if m in group.members]
    ids = sorted(group.members)
    count = max(0, min(event.count, len(ids) - keep))
    return sorted(rng.sample(ids, count))


def _join(group: GroupState, count: int, rng: random.Random, names: tuple[str, ...] = ()) -> None:
    topics = sorted(group.topics)
    for i in range(count):
        member_id = names[i] if i < len(names) else group.new_member_id()
        subscription = initial_topics_for(group.shape, rng.randrange(1 << 30), 4, topics, rng)
        group.members[member_id] = Member(member_id, subscription)


class _EventRunner:
    """Applies one event to a group and runs the rebalances it causes."""

    def __init__(self, group: GroupState, strategy: Strategy, result: EventResult) -> None:
        self.group = group
        self.strategy = strategy
        self.result = result

    def rebalance(self) -> None:
        before = self.group.owner_map()
        outcome: RebalanceOutcome = rebalance(self.group, self.strategy)
        r = self.result
        for tp, new in self.group.owner_map().items():
            old = before.get(tp)
            if old is None:
                r.fresh_assigned += 1
            elif old != new:
                r.moved += 1
        r.rebalances += 1 if outcome.rounds else 0  # an empty group has no rebalance
        r.rounds += outcome.rounds
        r.revoked += outcome.revoked
        r.paused_partition_rounds += outcome.paused_partition_rounds
        r.compute_s += outcome.compute_s
        r.max_compute_s = max(r.max_compute_s, outcome.max_compute_s)
        r.violations += outcome.violations
        r.converged = r.converged and outcome.converged
        if outcome.messages and not r.first_violation:
            r.first_violation = outcome.messages[0][:500]

    def run(self, event: Event, rng: random.Random) -> None:
        handler = self._handlers().get(event.kind)
        if handler is None:
            raise InvalidSpecError(f"unknown event kind {event.kind!r}")
        handler(event, rng)

    def _handlers(self) -> dict[str, Callable[[Event, random.Random], None]]:
        return {
            "initial": lambda e, rng: self.rebalance(),
            "join": self._join,
            "scale_out": self._join,
            "leave": self._leave,
            "scale_in": self._leave,
            "crash": self._crash,
            "pause": self._pause,
            "rolling_restart": self._rolling_restart,
            "partitions_added": self._partitions_added,
            "topic_added": self._topic_added,
            "topic_deleted": self._topic_deleted,
            "subscription_change": self._subscription_change,
        }

    def _join(self, event: Event, rng: random.Random) -> None:
        _join(self.group, len(event.members) or event.count, rng, event.members)
        self.rebalance()

    def _leave(self, event: Event, rng: random.Random) -> None:
        for member_id in _pick(self.group, event, rng):
            self.group.remove_member(member_id)
        self.rebalance()

    def _crash(self, event: Event, rng: random.Random) -> None:
        for member_id in _pick(self.group, event, rng):
            self.result.orphaned_during_timeout += len(self.group.remove_member(member_id))
        self.rebalance()

    def _pause(self, event: Event, rng: random.Random) -> None:
        stalled = [self.group.members[m] for m in _pick(self.group, event, rng)]
        for member in stalled:
            self.result.orphaned_during_timeout += len(self.group.remove_member(member.member_id))
        self.rebalance()
        # Back after the session timeout, still claiming what it had, at its old generation.
        for member in stalled:
            member.topics = tuple(t for t in member.topics if t in self.group.topics)
            member.owned = frozenset(tp for tp in member.owned if tp[0] in self.group.topics)
            if member.topics:
                self.group.members[member.member_id] = member
        self.rebalance()

    def _rolling_restart(self, event: Event, rng: random.Random) -> None:
        ids = sorted(self.group.members)
        batches = max(1, min(event.count, len(ids)))
        for b in range(batches):
            batch = [self.group.members[m] for m in ids[b::batches]]
            for member in batch:
                self.group.remove_member(member.member_id)
            self.rebalance()
            for member in batch:  # a restarted consumer comes back with a new id, no history
                new_id = self.group.new_member_id()
                self.group.members[new_id] = Member(new_id, member.topics)
            self.rebalance()

    def _partitions_added(self, event: Event, rng: random.Random) -> None:
        topic = event.topic or rng.choice(sorted(self.group.topics))
        if topic in self.group.topics:
            self.group.topics[topic] += max(1, event.count)
        self.rebalance()

    def _topic_added(self, event: Event, rng: random.Random) -> None:
        topic = event.topic or self.group.new_topic_name()
        count = event.count if event.count > 0 else max(self.group.topics.values(), default=1)
        self.group.topics[topic] = count
        for index, member_id in enumerate(sorted(self.group.members)):
            member = self.group.members[member_id]
            subscribe = self.group.shape == "homogeneous" or (
                self.group.shape == "nested" and index % 2 == 0
            )
            if subscribe or (self.group.shape in ("random", "disjoint") and rng.random() < 0.5):
                member.topics = tuple(sorted({*member.topics, topic}))
        self.rebalance()

    def _topic_deleted(self, event: Event, rng: random.Random) -> None:
        names = sorted(self.group.topics)
        if len(names) > 1:
            topic = event.topic if event.topic in self.group.topics else rng.choice(names)
            self.group.delete_topic(str(topic), rng)
        self.rebalance()

    def _subscription_change(self, event: Event, rng: random.Random) -> None:
        topics = sorted(self.group.topics)
        for member_id in _pick(self.group, event, rng, keep=0):
            member = self.group.members[member_id]
            if event.topics:
                member.topics = tuple(sorted(t for t in event.topics if t in self.group.topics))
            else:
                member.topics = initial_topics_for("random", 0, 1, topics, rng)
            self.result.revoked += self.group.drop_unsubscribed(member)
        self.rebalance()


def _fill_shape_metrics(group: GroupState, result: EventResult) -> None:
    plan = {m: sorted(tps) for m, tps in group.consuming.items() if m in group.members}
    loads = [len(plan.get(m, ())) for m in group.members]
    result.members = len(group.members)
    result.partitions = sum(group.topics.values())
    result.max_min_load = max(loads) - min(loads) if loads else 0
    members = [group.members[m] for m in sorted(group.members)]
    spread = 0
    for per_member in loads_by_topic(members, plan).values():
        if per_member:
            spread = max(spread, max(per_member.values()) - min(per_member.values()))
    result.topic_spread = spread


def simulate(
    scenario: Scenario,
    strategy: Strategy,
    *,
    time_cap_s: float | None = None,
    size_cap: float | None = None,
) -> list[EventResult]:
    """One row per event (the first row, ``initial``, is everyone joining at once)."""
    group = build_group(scenario)
    events = (Event("initial"), *scenario.events)
    rows: list[EventResult] = []
    capped = (
        strategy.baseline
        and size_cap is not None
        and (float(scenario.members) * float(scenario.partitions) > size_cap)
    )
    spent = 0.0
    stopped = ""
    for index, event in enumerate(events):
        result = EventResult(
            scenario_id=scenario.scenario_id,
            strategy=strategy.name,
            event_index=index,
            event_kind=event.kind,
            members=len(group.members),
            partitions=sum(group.topics.values()),
        )
        rows.append(result)
        if capped:
            result.status = STATUS_TIME_CAP
            continue
        if stopped:
            result.status, result.error = STATUS_BASELINE_ERROR, stopped
            continue
        runner = _EventRunner(group, strategy, result)
        rng = random.Random(f"{scenario.seed}:{index}")
        if strategy.baseline:
            try:
                runner.run(event, rng)
            except Exception as exc:  # third-party assignor code: report, never hide
                stopped = f"{type(exc).__name__}: {exc}"[:500]
                result.status, result.error = STATUS_BASELINE_ERROR, stopped
                continue
        else:
            runner.run(event, rng)
        _fill_shape_metrics(group, result)
        spent += result.compute_s
        if strategy.baseline and time_cap_s is not None and spent > time_cap_s:
            capped = True
    return rows
