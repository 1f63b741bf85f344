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

Our own eager members send the owned partitions *and* the sticky user data (the leader of
either kind then reads one of them); our cooperative members send exactly Java's form, so
for ``cooperative-sticky`` (and for every ``fresh`` phase without history) the two inputs
are the same bytes and ``make bench`` runs each peer once on them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kafka_sticky_plugin.codec import (
    CONSUMER_PROTOCOL_LATEST_VERSION,
    Subscription,
    encode_cooperative_user_data,
    encode_sticky_user_data,
    encode_subscription,
)

Partition = tuple[str, int]


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
        user_data = None if previous is None else encode_sticky_user_data(previous, gen)
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
