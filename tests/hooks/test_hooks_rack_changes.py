"""KIP-881 on every kafka-python family: the hooked leader rebalances once when the racks of a
subscribed partition's replicas change, never for a broker that is only down, and never in a
group where no member has a rack.

A real, hooked ``KafkaConsumer`` (no broker) leads: its coordinator's ``_perform_assignment``
runs on metadata entered into its real ``ClusterMetadata`` by ``update_metadata`` with a real
Metadata response (which also calls the metadata listeners, as a refresh does); whether it
asks to rejoin is read from its coordinator's ``need_rejoin()``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pytest
from hooks_support import IS_V3, make_consumer

from kafka_sticky_plugin import CooperativeStickyAssignor, StickyAssignor
from kafka_sticky_plugin.codec import encode_subscription, subscription_of
from kafka_sticky_plugin.hooks import install_hooks

ASSIGNORS = {"cooperative-sticky": CooperativeStickyAssignor, "sticky": StickyAssignor}
RACKS = {1: "r0", 2: "r1", 3: "r2"}
#: partition -> replica brokers: RF 2 over three racks
PLACED = {0: [1, 2], 1: [2, 3], 2: [3, 1], 3: [1, 3]}


def metadata_response(brokers: Mapping[int, str], replicas: Mapping[int, Sequence[int]]) -> Any:
    """A Metadata v1 response of this client version: ``brokers`` (id -> rack) are the ones
    online, topic ``t`` has ``replicas``, led by its first online replica."""
    from kafka.protocol.metadata import MetadataResponse

    def leader(ids: Sequence[int]) -> int:
        return next((b for b in ids if b in brokers), -1)

    if not IS_V3:
        return MetadataResponse[1](
            brokers=[(b, "127.0.0.1", 9092 + b, r) for b, r in brokers.items()],
            controller_id=min(brokers),
            topics=[
                (
                    0,
                    "t",
                    False,
                    [(0, p, leader(ids), list(ids), list(ids)) for p, ids in replicas.items()],
                )
            ],
        )
    topic_cls = MetadataResponse.MetadataResponseTopic
    part_cls = topic_cls.MetadataResponsePartition
    return MetadataResponse(
        version=1,
        brokers=[
            MetadataResponse.MetadataResponseBroker(
                version=1, node_id=b, host="127.0.0.1", port=9092 + b, rack=r
            )
            for b, r in brokers.items()
        ],
        controller_id=min(brokers),
        topics=[
            topic_cls(
                version=1,
                error_code=0,
                name="t",
                is_internal=False,
                partitions=[
                    part_cls(
                        version=1,
                        error_code=0,
                        partition_index=p,
                        leader_id=leader(ids),
                        replica_nodes=list(ids),
                        isr_nodes=list(ids),
                    )
                    for p, ids in replicas.items()
                ],
            )
        ],
    )


@pytest.fixture(params=sorted(ASSIGNORS))
def protocol(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def consumer(protocol: str) -> Iterator[Any]:
    consumer = make_consumer([ASSIGNORS[protocol]])
    install_hooks(consumer)
    consumer.subscribe(["t"])
    yield consumer
    consumer.close()


def update(
    consumer: Any, brokers: Mapping[int, str], replicas: Mapping[int, Sequence[int]]
) -> None:
    consumer._coordinator._cluster.update_metadata(metadata_response(brokers, replicas))


def lead(consumer: Any, protocol: str, member_racks: Sequence[str | None]) -> None:
    """One round led by ``consumer``: JoinGroup metadata built, the plan made, the rejoin
    flag cleared (as the join loop does)."""
    coordinator = consumer._coordinator
    coordinator.group_protocols()
    members = [
        (f"m{i}", encode_subscription(subscription_of(["t"], rack_id=rack)))
        for i, rack in enumerate(member_racks)
    ]
    plan = coordinator._perform_assignment(members[0][0], protocol, members)
    assert sorted(plan) == sorted(m for m, _ in members)
    coordinator.rejoin_needed = False
    assert not coordinator.need_rejoin()


def test_bounces_never_rebalance_a_rack_move_rebalances_once(consumer: Any, protocol: str) -> None:
    coordinator = consumer._coordinator
    update(consumer, RACKS, PLACED)
    lead(consumer, protocol, ["r0", "r1", None])
    for down in RACKS:  # a rolling bounce: each broker absent from the metadata, then back
        update(consumer, {b: r for b, r in RACKS.items() if b != down}, PLACED)
        assert not coordinator.need_rejoin(), f"broker {down} down"
        update(consumer, RACKS, PLACED)
        assert not coordinator.need_rejoin(), f"broker {down} back"
    update(consumer, RACKS, {**PLACED, 0: [2, 3]})  # within partition 0: rack r0 -> r2
    assert coordinator.need_rejoin()
    coordinator.rejoin_needed = False
    update(consumer, RACKS, {**PLACED, 0: [2, 3]})  # the same metadata again: once only
    assert not coordinator.need_rejoin()


def test_no_member_rack_no_rebalance(consumer: Any, protocol: str) -> None:
    update(consumer, RACKS, PLACED)
    lead(consumer, protocol, [None, None])
    update(consumer, RACKS, {**PLACED, 0: [2, 3]})
    assert not consumer._coordinator.need_rejoin()


def test_a_new_join_group_forgets_the_placement(consumer: Any, protocol: str) -> None:
    """A member that sent a JoinGroup and did not lead the round tracks nothing."""
    update(consumer, RACKS, PLACED)
    lead(consumer, protocol, ["r0"])
    consumer._coordinator.group_protocols()
    update(consumer, RACKS, {**PLACED, 0: [2, 3]})
    consumer._coordinator.rejoin_needed = False
    assert not consumer._coordinator.need_rejoin()
