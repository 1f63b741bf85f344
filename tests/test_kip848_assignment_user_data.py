"""Our assignments carry no user data, for either strategy: what keeps online migration possible.

Apache Kafka (4.x) converts a classic group into a KIP-848 consumer group when a member with
``group.protocol=consumer`` joins, but only if every classic member's current *assignment*
has no user data: the broker cannot carry an assignor's private state into the consumer
group, so it refuses the conversion ("an unsupported custom assignor is in use") and answers
the joining member GROUP_ID_NOT_FOUND. *Subscription* user data is fine (it is dropped at the
conversion). Our sticky and cooperative-sticky strategies keep their state (owned partitions,
generation) in the subscription only, exactly as Java's ``StickyAssignor`` and
``CooperativeStickyAssignor`` do, so a group of our members can always move online.

This test pins that: whatever the members send (every subscription version, sticky user data,
owned partitions, a member that owned nothing), every assignment we write has a null user
data field (length -1 on the wire), read back by our decoder and by kafka-python's.
"""

from __future__ import annotations

import random

import pytest
from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment

import kafka_sticky_plugin
from kafka_sticky_plugin.assignor.strategies import STRATEGIES
from kafka_sticky_plugin.codec import (
    Subscription,
    decode_assignment,
    encode_cooperative_user_data,
    encode_sticky_user_data,
    encode_subscription,
)

TOPICS = {"t1": 7, "t2": 5}


def _members(seed: int) -> dict[str, bytes]:
    """Members as a running group sends them: every version, with and without prior state."""
    rng = random.Random(seed)
    everything = [(t, p) for t, n in TOPICS.items() for p in range(n)]
    rng.shuffle(everything)
    thirds = [everything[0::3], everything[1::3], everything[2::3]]
    topics = tuple(TOPICS)
    return {
        "v0-sticky-state": encode_subscription(
            Subscription(0, topics, user_data=encode_sticky_user_data(thirds[0], None))
        ),
        "v1-cooperative-state": encode_subscription(
            Subscription(1, topics, user_data=encode_cooperative_user_data(4))
        ),
        "v2-owned": encode_subscription(
            Subscription(2, topics, owned_partitions=tuple(thirds[1]), generation_id=4)
        ),
        "v3-owned-with-user-data": encode_subscription(
            Subscription(
                3,
                topics,
                user_data=encode_sticky_user_data(thirds[2], 4),
                owned_partitions=tuple(thirds[2]),
                generation_id=4,
            )
        ),
        "v3-new": encode_subscription(Subscription(3, topics)),
    }


@pytest.mark.parametrize("strategy", sorted(STRATEGIES))
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_assignments_have_null_user_data(strategy: str, seed: int) -> None:
    print(f"seed={seed}")
    assignor = getattr(kafka_sticky_plugin, STRATEGIES[strategy].class_name)()
    result = assignor.assign_from_bytes(TOPICS, _members(seed))
    assert set(result) == set(_members(seed))
    assigned = 0
    for member, raw in result.items():
        ours = decode_assignment(raw)
        assert ours.user_data is None, f"{strategy}: {member}'s assignment carries user data"
        # The field is the last one of every version: a null bytes field is length -1.
        assert raw.endswith(b"\xff\xff\xff\xff"), f"{strategy}: {member}: {raw.hex()}"
        theirs = ConsumerProtocolAssignment.decode(raw)
        assert theirs.user_data in (None, b""), f"{strategy}: kafka-python reads user data"
        assigned += len(ours.partitions)
    # Cooperative-sticky withholds the partitions that change owner until the next round.
    total = sum(TOPICS.values())
    assert assigned == total if strategy == "sticky" else 0 < assigned <= total
