"""The fixed benchmark shapes (issue: engine) and the three phases measured on each.

- H-1M: 500 topics x 2,000 partitions, 2,000 members, all subscribed.
- H-1M-odd: the same with the last member subscribed to one topic only.
- HET-100k: 100 topics x 1,000 partitions, 1,000 members in 5 disjoint buckets.
- NESTED-10k: 100 topics x 100 partitions, 100 members, member i subscribes topic t iff
  (i*31 + t*17) % 7 < 4.
- NESTED-100k-r3f1: 200 topics x 500 partitions, 1,000 members subscribed as in NESTED-10k
  (7 subscription classes), 3 racks, one replica per partition: the rack pass on different
  subscriptions.
- HET-1M: 1,000 topics x 1,000 partitions, 4,000 members, each subscribed to 25 topics drawn
  at random (seeded): 4,000 distinct subscriptions, one connected group.
- H-1M-numbered: H-1M with the numbered topic names ``topic-0000``.. (the extra row below).

Topic names: topic i is ``topic-`` and 8 hex digits of ``i * 2654435761 mod 2**32`` (distinct,
as the multiplier is odd), so that Java's ``TopicPartition.hashCode`` values spread out: on
H-1M every one of the million partitions gets its own hash. The numbered names
``topic-0000``.. that earlier runs used give only 21,330 distinct hashes for the same million
(their ``String.hashCode`` values sit side by side, 31 apart per partition step), which
makes Java's hash collections (``ImplicitLinkedHashCollection``, ``HashMap``) collide and
costs Java's ``assign`` about 1.5x; they stay as one labelled row (``H-1M-numbered``), not
the default. :func:`distinct_partition_hashes` counts them.

Phases: ``fresh`` (nobody owns anything); ``rejoin`` (every member owns its fresh partitions at
generation 1, one new member joins with the first member's subscription); ``leave`` (every
member owns its fresh partitions, the last member leaves).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from kafka_sticky_plugin.core import MemberSpec

Subscriptions = dict[str, list[str]]


@dataclass(frozen=True)
class Shape:
    name: str
    partitions: dict[str, int]
    subscriptions: Callable[[], Subscriptions]
    racks: tuple[int, int] | None = None  # (rack count, replication factor)

    def member_racks(self, subs: Subscriptions) -> dict[str, str | None]:
        """Member i is in rack (i // 7) mod n (so racks do not line up with round-robin)."""
        if self.racks is None:
            return dict.fromkeys(subs)
        n = self.racks[0]
        return {m: f"rack-{(i // 7) % n}" for i, m in enumerate(sorted(subs))}

    def partition_racks(self) -> dict[tuple[str, int], tuple[str, ...]] | None:
        """Partition p has replicas on racks p, p+1, ..., p+rf-1 (mod n)."""
        if self.racks is None:
            return None
        n, rf = self.racks
        sets = [tuple(f"rack-{(p + k) % n}" for k in range(rf)) for p in range(n)]
        return {(t, p): sets[p % n] for t, c in self.partitions.items() for p in range(c)}


_SPREAD = 2654435761  # odd, so i -> i * _SPREAD mod 2**32 is one-to-one


def topic_names(n: int, numbered: bool = False) -> list[str]:
    """The ``n`` topic names of a shape, in topic order (see the module docstring)."""
    if numbered:
        return [f"topic-{i:04d}" for i in range(n)]
    return [f"topic-{i * _SPREAD % 2**32:08x}" for i in range(n)]


def _topics(n: int) -> list[str]:
    return topic_names(n)


def java_string_hash(text: str) -> int:
    """Java's ``String.hashCode`` of ``text`` as an unsigned 32-bit value (UTF-16 units)."""
    h = 0
    raw = text.encode("utf-16-be")
    for k in range(0, len(raw), 2):
        h = (31 * h + (raw[k] << 8 | raw[k + 1])) & 0xFFFFFFFF
    return h


def distinct_partition_hashes(partitions: dict[str, int]) -> int:
    """How many distinct Java ``TopicPartition.hashCode`` values the partitions have
    (``31 * (31 + partition) + topic.hashCode()``, 32-bit)."""
    seen: set[int] = set()
    for topic, count in partitions.items():
        h = java_string_hash(topic)
        seen.update((31 * (31 + p) + h) & 0xFFFFFFFF for p in range(count))
    return len(seen)


def _homogeneous(
    n_topics: int, n_members: int, odd: bool = False, numbered: bool = False
) -> Callable[[], Subscriptions]:
    def build() -> Subscriptions:
        topics = topic_names(n_topics, numbered)
        subs = {f"member-{i:05d}": topics for i in range(n_members)}
        if odd:
            subs[f"member-{n_members - 1:05d}"] = topics[:1]
        return subs

    return build


def _buckets(n_topics: int, n_members: int, buckets: int) -> Callable[[], Subscriptions]:
    def build() -> Subscriptions:
        topics = _topics(n_topics)
        per_t, per_m = n_topics // buckets, n_members // buckets
        return {
            f"member-{i:05d}": topics[(i // per_m) * per_t : (i // per_m + 1) * per_t]
            for i in range(n_members)
        }

    return build


def _nested() -> Subscriptions:
    topics = _topics(100)
    return {
        f"member-{i:05d}": [t for j, t in enumerate(topics) if (i * 31 + j * 17) % 7 < 4]
        for i in range(100)
    }


def _nested_scaled(n_topics: int, n_members: int) -> Callable[[], Subscriptions]:
    def build() -> Subscriptions:
        topics = _topics(n_topics)
        return {
            f"member-{i:05d}": [t for j, t in enumerate(topics) if (i * 31 + j * 17) % 7 < 4]
            for i in range(n_members)
        }

    return build


def _scattered(n_topics: int, n_members: int, per_member: int) -> Callable[[], Subscriptions]:
    def build() -> Subscriptions:
        topics = _topics(n_topics)
        rnd = random.Random(20261123)
        return {f"member-{i:05d}": rnd.sample(topics, per_member) for i in range(n_members)}

    return build


SHAPES = {
    "H-1M": Shape("H-1M", dict.fromkeys(_topics(500), 2000), _homogeneous(500, 2000)),
    "H-1M-odd": Shape("H-1M-odd", dict.fromkeys(_topics(500), 2000), _homogeneous(500, 2000, True)),
    "HET-100k": Shape("HET-100k", dict.fromkeys(_topics(100), 1000), _buckets(100, 1000, 5)),
    "NESTED-10k": Shape("NESTED-10k", dict.fromkeys(_topics(100), 100), _nested),
    "H-1M-r3f3": Shape(
        "H-1M-r3f3", dict.fromkeys(_topics(500), 2000), _homogeneous(500, 2000), racks=(3, 3)
    ),
    "H-1M-r6f2": Shape(
        "H-1M-r6f2", dict.fromkeys(_topics(500), 2000), _homogeneous(500, 2000), racks=(6, 2)
    ),
    "NESTED-100k-r3f1": Shape(
        "NESTED-100k-r3f1",
        dict.fromkeys(_topics(200), 500),
        _nested_scaled(200, 1000),
        racks=(3, 1),
    ),
    "HET-1M": Shape("HET-1M", dict.fromkeys(_topics(1000), 1000), _scattered(1000, 4000, 25)),
    "H-1M-numbered": Shape(
        "H-1M-numbered",
        dict.fromkeys(topic_names(500, numbered=True), 2000),
        _homogeneous(500, 2000, numbered=True),
    ),
}


def members(
    subs: Subscriptions,
    owned: dict[str, list[tuple[str, int]]] | None = None,
    generation: int = -1,
    racks: dict[str, str | None] | None = None,
) -> list[MemberSpec]:
    owned = owned or {}
    racks = racks or {}
    return [
        MemberSpec(
            member_id=m, topics=ts, owned=owned.get(m, ()), generation=generation, rack=racks.get(m)
        )
        for m, ts in subs.items()
    ]


def phase_inputs(
    subs: Subscriptions,
    fresh_plan: dict[str, list[tuple[str, int]]],
    phase: str,
    racks: dict[str, str | None] | None = None,
) -> list[MemberSpec]:
    """Members for ``rejoin`` or ``leave`` given the fresh plan."""
    if phase == "rejoin":
        first = next(iter(subs.values()))
        rack = next(iter((racks or {}).values()), None)
        new = MemberSpec(member_id="member-new", topics=first, rack=rack)
        return [*members(subs, fresh_plan, 1, racks), new]
    if phase == "leave":
        last = sorted(subs)[-1]
        return members({m: t for m, t in subs.items() if m != last}, fresh_plan, 1, racks)
    raise ValueError(phase)
