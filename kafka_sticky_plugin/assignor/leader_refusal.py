"""A classic group whose leader may not describe a topic another member subscribes to: the
two pure decisions behind what the hooks do about it (no client objects, no I/O).

On the classic protocol the leader assigns the whole group from its own cluster metadata, and
Kafka's Metadata API lists a topic only to a principal with ``Describe`` on it, so a leader
refused such a topic cannot know its partitions and leaves them unassigned, while the member
that subscribed (and may read it) waits for partitions that never come. SyncGroup gives the
leader no channel to tell it (assignment user data would: but the broker refuses non-empty
user data in a KIP-848 online migration, and Java/librdkafka members ignore it).

1. **The refused leader steps aside** (:class:`StepAside`). When a dynamic member leaves,
   Apache Kafka's group coordinator makes another member the leader (``ClassicGroup.remove``:
   the first remaining member; ``maybeElectNewJoinedLeader`` then prefers one that rejoined),
   so a leader refused topics that others subscribe to leaves once and rejoins, and a member
   that can describe them may lead. Bounded: at most once per distinct set of refused topics
   (a grant of one of them starts over); elected again with the same refusal it
   stays, assigns what it can and says so once. A static member (``group.instance.id``)
   never steps aside: the coordinator hands a rejoining static member its old identity,
   leadership included (``replaceStaticMember``), so leaving would only cost a rebalance.
2. **The member is told** (:func:`topics_to_check`, :func:`unheld_topics`,
   :class:`ToldTopics`). A member that subscribes to a topic it can describe but holds none
   of its partitions after an assignment asks the coordinator (DescribeGroups, at most once
   per generation) whether anybody holds it; the topics nobody holds are reported once per
   change of that set.

Invariants: :meth:`StepAside.decide` answers STEP_ASIDE at most once per distinct non-empty
refused set (a grant of one of its topics forgets that set); :func:`unheld_topics` never
reports a topic some decodable assignment holds, and reports nothing when an assignment
cannot be read (it cannot tell).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..codec.consumer_protocol import decode_assignment
from ..errors import CodecError

__all__ = [
    "DescribedMember",
    "LeaderAction",
    "StepAside",
    "ToldTopics",
    "leader_of",
    "topics_to_check",
    "unheld_topics",
]


class LeaderAction(enum.Enum):
    """What a leader refused topics of other members does after its assignment."""

    #: Nothing is refused (or this member does not lead).
    NONE = "none"
    #: Leave the group once (after giving its partitions up) and rejoin.
    STEP_ASIDE = "step aside"
    #: Stay leader, the refused topics unassigned (already stepped aside for them, or static).
    STAY = "stay"


@dataclass
class StepAside:
    """One member's step-aside memory (module docstring, 1).

    Invariants: ``stepped_for`` holds every refused set this member stepped aside for (a
    grant of one of a set's topics forgets that set); ``stayed_for`` is the set it last
    decided to stay leader with (so that decision is reported once).
    """

    stepped_for: set[frozenset[str]] = field(default_factory=set)
    stayed_for: frozenset[str] | None = None

    def decide(
        self, refused: Iterable[str], *, static: bool, granted: Iterable[str] = ()
    ) -> tuple[LeaderAction, bool]:
        """The leader's move, given the topics other members subscribe to that it may not
        describe (``refused``), whether it is a static member and the topics it may describe
        now (``granted``: one of the topics it stepped aside for among them resets the
        memory), and whether to report it (every STEP_ASIDE; a STAY only the first time for
        its set). An empty ``refused`` is NONE and keeps the memory: a leader's metadata may
        not list another member's topic yet, which is no grant."""
        granted_set = frozenset(granted)
        forgotten = {s for s in self.stepped_for if s & granted_set}
        if forgotten:
            self.stepped_for -= forgotten
            self.stayed_for = None
        refused_set = frozenset(refused)
        if not refused_set:
            return LeaderAction.NONE, False
        if not static and refused_set not in self.stepped_for:
            self.stepped_for.add(refused_set)
            self.stayed_for = None
            return LeaderAction.STEP_ASIDE, True
        report = self.stayed_for != refused_set
        self.stayed_for = refused_set
        return LeaderAction.STAY, report


def topics_to_check(
    subscribed: Iterable[str], describable: Iterable[str], held: Iterable[str]
) -> frozenset[str]:
    """The subscribed topics this member may describe (its metadata lists their partitions)
    of which it holds no partition: the ones that might be assigned to nobody."""
    return (frozenset(subscribed) & frozenset(describable)) - frozenset(held)


def unheld_topics(
    topics: Iterable[str], assignments: Iterable[bytes | bytearray | memoryview | None]
) -> frozenset[str]:
    """Which of ``topics`` no member holds, given every member's assignment bytes (as
    DescribeGroups returns them; empty or None: a member that holds nothing). An assignment
    that cannot be decoded makes the answer empty: nothing can be said about that member."""
    wanted = frozenset(topics)
    held: set[str] = set()
    for data in assignments:
        if not data:
            continue
        try:
            assignment = decode_assignment(data)
        except CodecError:
            return frozenset()
        held.update(topic for topic, _ in assignment.partitions)
    return wanted - held


@dataclass
class ToldTopics:
    """What the member last reported as assigned to nobody (module docstring, 2).

    Invariant: :meth:`update` answers True exactly when the set changed to a non-empty one
    (the caller then logs one line); an empty set is remembered silently.
    """

    reported: frozenset[str] = frozenset()

    def update(self, unheld: Iterable[str]) -> bool:
        current = frozenset(unheld)
        changed = current != self.reported
        self.reported = current
        return changed and bool(current)


@dataclass(frozen=True)
class DescribedMember:
    """One member as DescribeGroups shows it (the fields the told line needs)."""

    member_id: str
    client_id: str
    client_host: str
    assignment: bytes | None


def leader_of(members: Iterable[DescribedMember], leader_id: str | None) -> str:
    """How the told line names the leader: its client id and host when DescribeGroups lists
    the member id JoinGroup named as leader, else that id (or ``unknown``)."""
    for member in members:
        if member.member_id == leader_id:
            return f"client id {member.client_id!r} on host {member.client_host}"
    return f"member {leader_id!r}" if leader_id else "unknown"
