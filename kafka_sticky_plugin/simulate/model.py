"""Plain values the simulator reads and writes: scenarios, events and per-event results.

Invariants:

- a :class:`Scenario` is immutable and fully determines a simulation run for one strategy
  (its ``seed`` drives every random choice; the same scenario gives the same trace of
  membership and topic changes for every strategy, so strategies are compared on equal
  footing);
- an :class:`Event` is either generated (``members`` empty: the victims are drawn at run time
  from the scenario seed and the event index) or recorded (``members`` names them);
- an :class:`EventResult` holds only scalars, so a list of them is one table row each.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = [
    "EVENT_KINDS",
    "SHAPES",
    "STATUS_BASELINE_ERROR",
    "STATUS_OK",
    "STATUS_TIME_CAP",
    "Event",
    "EventResult",
    "Scenario",
]

#: Every event kind the simulator understands, with what ``count`` means for it.
EVENT_KINDS: dict[str, str] = {
    "join": "count new members join (no history)",
    "leave": "count members leave cleanly (LeaveGroup)",
    "crash": "count members die without leaving; removed after the session timeout",
    "pause": "count members stall past the session timeout, then return claiming their old "
    "partitions with their stale generation (KIP-341)",
    "rolling_restart": "every member restarts, count batches of members one after the other "
    "(each batch leaves, then rejoins as new members)",
    "scale_out": "count new members join at once",
    "scale_in": "count members leave at once",
    "partitions_added": "one topic grows by count partitions",
    "topic_added": "a new topic with count partitions (0: the scenario's partitions per topic)",
    "topic_deleted": "one topic is deleted (skipped when it is the last one)",
    "subscription_change": "count members change their subscription",
}

#: Subscription shapes of a scenario's initial group (and of members joining later).
SHAPES = ("homogeneous", "disjoint", "nested", "random")

STATUS_OK = "ok"
STATUS_TIME_CAP = "time_cap_exceeded"
#: A baseline (third-party code) raised: the row names the exception; later rows are cut.
STATUS_BASELINE_ERROR = "baseline_error"


@dataclass(frozen=True)
class Event:
    """One change to the group or its topics, followed by the rebalance(s) it causes."""

    kind: str
    count: int = 1
    members: tuple[str, ...] = ()
    topic: str | None = None
    topics: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "count": self.count}
        if self.members:
            out["members"] = list(self.members)
        if self.topic is not None:
            out["topic"] = self.topic
        if self.topics:
            out["topics"] = list(self.topics)
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Event:
        return cls(
            kind=str(data["kind"]),
            count=int(data.get("count", 1)),
            members=tuple(str(m) for m in data.get("members", ())),
            topic=None if data.get("topic") is None else str(data["topic"]),
            topics=tuple(str(t) for t in data.get("topics", ())),
        )


@dataclass(frozen=True)
class Scenario:
    """A group, its topics and a trace of events.

    ``initial_members`` (when given, e.g. from a recorded trace) maps member ids to their
    topics and overrides ``members``/``shape``; ``topics`` maps topic names to partition
    counts.
    """

    scenario_id: str
    seed: int
    members: int
    topics: tuple[tuple[str, int], ...]
    shape: str
    events: tuple[Event, ...]
    family: str = ""
    initial_members: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def partitions(self) -> int:
        return sum(count for _, count in self.topics)

    def to_json(self) -> dict[str, Any]:
        return {
            "scenario_id": self.scenario_id,
            "seed": self.seed,
            "members": self.members,
            "topics": [[name, count] for name, count in self.topics],
            "shape": self.shape,
            "events": [event.to_json() for event in self.events],
            "family": self.family,
            "initial_members": [[m, list(ts)] for m, ts in self.initial_members],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Scenario:
        return cls(
            scenario_id=str(data["scenario_id"]),
            seed=int(data["seed"]),
            members=int(data["members"]),
            topics=tuple((str(name), int(count)) for name, count in data["topics"]),
            shape=str(data["shape"]),
            events=tuple(Event.from_json(e) for e in data["events"]),
            family=str(data.get("family", "")),
            initial_members=tuple(
                (str(m), tuple(str(t) for t in ts)) for m, ts in data.get("initial_members", ())
            ),
        )


@dataclass
class EventResult:
    """What one event cost the group under one strategy (one output row).

    ``moved`` counts, summed over the event's rebalances, partitions consumed by a group member
    when a rebalance started and by another member when it ended (a revoke here, a restart
    of fetching there); ``fresh_assigned`` counts partitions nobody consumed at the start and
    someone consumes at the end (orphans of departed members, new partitions).
    ``paused_partition_rounds`` sums, over the protocol rounds, the partitions nobody
    consumed during that round. ``violations`` must be zero for this project's strategies.
    """

    scenario_id: str
    strategy: str
    event_index: int
    event_kind: str
    members: int
    partitions: int
    rebalances: int = 0
    rounds: int = 0
    moved: int = 0
    fresh_assigned: int = 0
    revoked: int = 0
    paused_partition_rounds: int = 0
    orphaned_during_timeout: int = 0
    max_min_load: int = 0
    topic_spread: int = 0
    compute_s: float = 0.0
    max_compute_s: float = 0.0
    violations: int = 0
    first_violation: str = ""
    error: str = ""
    converged: bool = True
    status: str = STATUS_OK
