"""The JoinGroup metadata a Java member sends (kafka-clients 4.x), written with our codec.

``make bench`` feeds every peer two inputs per row: what members of ours send
(``input = ours``, our assignor classes' ``metadata()``) and what Java members send
(``input = java``), built here from the same subscriptions, racks and previous plan:

- ``sticky`` (eager ``StickyAssignor``): an eager member revokes everything before it
  rejoins (``ConsumerCoordinator.onJoinPrepare``), so its subscription carries *no* owned
  partitions; the previous assignment travels only in the KIP-341 sticky user data
  (``previous_assignment``, ``generation``), which is null before the first assignment. The
  v2 generation field and the v3 rack are filled as the coordinator fills them.
- ``cooperative-sticky`` (``CooperativeStickyAssignor``): the owned partitions and the
  generation in the subscription, and the generation again as the assignor's user data
  (an int32; -1 before the first assignment).

Java writes the sticky user data's topics in the order of a ``java.util.HashMap`` (its
``CollectionUtils.groupPartitionsByTopic``), each topic's partitions in the order of the
assignment it received (a leader's plan: ascending): :func:`java_sticky_user_data` writes
that order (``tests/test_codec_java_crosscheck.py`` checks it against the real client's bytes),
so a leader reading Java members here sorts their claims as it must for real ones.

Our own eager members send the owned partitions *and* the sticky user data (the leader of
either kind then reads one of them); our cooperative members send exactly Java's form, so
for ``cooperative-sticky`` (and for every ``fresh`` phase without history) the two inputs
are the same bytes and ``make bench`` runs each peer once on them.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence

from shapes import java_string_hash

from kafka_sticky_plugin.codec import (
    CONSUMER_PROTOCOL_LATEST_VERSION,
    Subscription,
    encode_cooperative_user_data,
    encode_subscription,
)

Partition = tuple[str, int]

#: ``java.util.HashMap``'s first table size; it doubles when it holds more than 3/4 of that.
_FIRST_TABLE = 16
#: A bin of this many keys is made a tree (or the table grows): not emulated here.
_TREEIFY = 8


def _bin(key: str, table: int) -> int:
    """``HashMap``'s bin of ``key`` in a table of ``table`` bins (``String.hashCode``,
    its high half folded into the low one)."""
    h = java_string_hash(key)
    return (h ^ (h >> 16)) & (table - 1)


def java_grouped_order(keys: Sequence[str]) -> list[str]:
    """The iteration order of a default ``java.util.HashMap`` after ``computeIfAbsent`` of
    each of ``keys`` in turn (repeats included: one call per partition, as
    ``CollectionUtils.groupPartitionsByTopic`` makes them). Each call first doubles the table
    when it holds more than 3/4 of its bins (a split keeps each bin's order); a new key goes
    to the *front* of its bin. Iteration: bins ascending, each front to back. Raises
    ``ValueError`` if a bin would hold 8 keys (Java then makes it a tree or grows the table;
    not emulated)."""
    table, held = _FIRST_TABLE, 0
    bins: dict[int, list[str]] = {}
    for key in keys:
        if held > table * 3 // 4:
            table *= 2
            grown: dict[int, list[str]] = {}
            for b in sorted(bins):
                for old in bins[b]:
                    grown.setdefault(_bin(old, table), []).append(old)
            bins = grown
        mine = bins.setdefault(_bin(key, table), [])
        if key not in mine:
            mine.insert(0, key)
            held += 1
            if len(mine) >= _TREEIFY:
                raise ValueError("a HashMap bin of 8 keys is not emulated")
    return [key for b in sorted(bins) for key in bins[b]]


def java_sticky_user_data(previous: Sequence[Partition], generation: int) -> bytes:
    """``StickyAssignor``'s user data v1 as Java writes it for the assignment ``previous``
    (in the order it was received): topics in :func:`java_grouped_order`, each topic's
    partitions in ``previous`` order, then the generation."""
    by_topic: dict[str, list[int]] = {}
    for topic, partition in previous:
        by_topic.setdefault(topic, []).append(partition)
    chunks = [struct.pack(">i", len(by_topic))]
    for topic in java_grouped_order([topic for topic, _ in previous]):
        name, partitions = topic.encode(), by_topic[topic]
        chunks.append(
            struct.pack(
                f">h{len(name)}si{len(partitions)}i", len(name), name, len(partitions), *partitions
            )
        )
    chunks.append(struct.pack(">i", generation))
    return b"".join(chunks)


def java_member_metadata(
    protocol: str,
    topics: Sequence[str],
    previous: Sequence[Partition] | None,
    generation: int | None,
    rack: str | None,
) -> bytes:
    """One Java member's subscription v3 bytes. ``previous``/``generation``: its last
    assignment and that join's generation (``None``: it has not been assigned yet)."""
    gen = -1 if generation is None or previous is None else generation
    if protocol == "sticky":
        user_data = None if previous is None else java_sticky_user_data(previous, gen)
        owned: Sequence[Partition] = ()
    elif protocol == "cooperative-sticky":
        user_data = encode_cooperative_user_data(None if gen < 0 else gen)
        owned = previous or ()
    else:
        raise ValueError(f"no Java assignor called {protocol!r}")
    return encode_subscription(
        Subscription(
            version=CONSUMER_PROTOCOL_LATEST_VERSION,
            topics=tuple(sorted(set(topics))),
            user_data=user_data,
            owned_partitions=tuple(owned),
            generation_id=gen,
            rack_id=rack,
        )
    )


def java_metadata(
    protocol: str,
    subs: Mapping[str, Sequence[str]],
    racks: Mapping[str, str | None],
    previous: Mapping[str, Sequence[Partition]] | None,
    generation: int = 1,
) -> dict[str, bytes]:
    """Every member's Java-form metadata; a member in ``previous`` was assigned its
    partitions there at ``generation``, the others (a newcomer) have no history."""
    out: dict[str, bytes] = {}
    for member_id, topics in subs.items():
        mine = None if previous is None else previous.get(member_id)
        out[member_id] = java_member_metadata(
            protocol, topics, mine, generation if mine is not None else None, racks.get(member_id)
        )
    return out


def same_as_ours(protocol: str, previous: Mapping[str, Sequence[Partition]] | None) -> bool:
    """Whether Java members' bytes are our members' bytes for ``protocol`` and ``previous``
    (the module docstring: ``cooperative-sticky``, or no history): ``make bench`` then writes
    one input for both (``tests/test_bench_budget.py`` checks the claim on random groups)."""
    return protocol == "cooperative-sticky" or previous is None
