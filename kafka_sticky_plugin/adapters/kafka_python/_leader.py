"""The leader's path, bytes to bytes: decode every member, run the engine, encode.

Pure apart from one logger: no client import, no I/O, no state. Both assignor classes and
the coordinator hooks for older kafka-python versions go through :func:`assign_group`.

How a member's claim is read (``protocol`` is the group's selected assignor name):

- ``sticky``: owned partitions = the subscription's owned partitions (v1+) united with the
  previous assignment in the sticky user data; generation = the higher of the subscription's
  generation (v2+) and the user data's (v1). Java and librdkafka members under EAGER send no
  owned partitions, so for them the user data alone decides, as in Java's ``StickyAssignor``.
- ``cooperative-sticky``: owned partitions = the subscription's (v1+; a v0 subscription falls
  back to sticky-format user data); generation = the higher of the subscription's (v2+) and
  the user data's: 4 bytes are Java's int32 generation, anything else is tried as sticky user
  data (what librdkafka's cooperative-sticky sends).
- A rack id of ``""`` (what librdkafka sends when ``client.rack`` is unset) means no rack.
- Unreadable user data means "no history" plus one warning line naming the member; an
  unreadable subscription means an empty assignment plus one error line naming the member;
  the rest of the group is assigned normally either way.

The assignment is written at the lowest subscription version among the readable members
(capped at 3): every version has the same layout, and no member gets a version newer than
the one it spoke. Assignment user data is null, as Java's sticky assignors send.

``cooperative-sticky`` always runs :func:`~kafka_sticky_plugin.core.cooperative_assign`, as
Java's ``CooperativeStickyAssignor`` does: under the EAGER protocol (the first bounce of the
KIP-429 upgrade) members revoke everything before joining and report no owned partitions,
and with nothing owned the cooperative round equals the eager sticky plan.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ...codec import (
    CONSUMER_PROTOCOL_LATEST_VERSION,
    Assignment,
    Subscription,
    decode_cooperative_user_data,
    decode_sticky_user_data,
    encode_assignment,
)
from ...core import MemberSpec, cooperative_assign, sticky_assign
from ...errors import CodecError
from ._metadata import to_subscription

__all__ = [
    "COOPERATIVE_STICKY",
    "STICKY",
    "MemberMetadata",
    "assign_group",
    "member_spec",
]

_log = logging.getLogger("kafka_sticky_plugin.assignor")

STICKY = "sticky"
COOPERATIVE_STICKY = "cooperative-sticky"

PartitionRacks = Mapping[tuple[str, int], Iterable[str]]


@dataclass(frozen=True)
class MemberMetadata:
    """One JoinGroup member as the leader receives it.

    ``metadata`` is the raw subscription bytes, a decoded :class:`Subscription`, or a
    kafka-python subscription object (read attribute by attribute).
    """

    member_id: str
    metadata: Any
    instance_id: str | None = None


def _user_data_claim(
    member_id: str, user_data: bytes | None, protocol: str
) -> tuple[list[tuple[str, int]], int]:
    """``(partitions, generation or -1)`` from user data; unreadable means no history."""
    if not user_data:
        return [], -1
    try:
        if protocol == COOPERATIVE_STICKY and len(user_data) == 4:
            generation = decode_cooperative_user_data(user_data)
            return [], -1 if generation is None else generation
        partitions, generation = decode_sticky_user_data(user_data)
    except CodecError as exc:
        _log.warning(
            "member %s: unreadable %s user data, treated as no history (%s)",
            member_id,
            protocol,
            exc,
        )
        return [], -1
    return partitions, -1 if generation is None else generation


def member_spec(
    member_id: str,
    subscription: Subscription,
    protocol: str,
    *,
    instance_id: str | None = None,
) -> MemberSpec:
    """The engine's view of one decoded member (claim rules in the module docstring).

    Topics unknown to the cluster are kept: the engine ignores them by contract.
    """
    version = subscription.version
    generation = subscription.generation_id if version >= 2 else -1
    ud_partitions, ud_generation = _user_data_claim(member_id, subscription.user_data, protocol)
    owned: Iterable[tuple[str, int]] = subscription.owned_partitions
    if (protocol != COOPERATIVE_STICKY or version < 1) and ud_partitions:
        if owned:
            # Our members and librdkafka's write the same list twice: unite only if needed.
            owned = owned if ud_partitions == list(owned) else [*owned, *ud_partitions]
        else:
            owned = ud_partitions
    return MemberSpec(
        member_id=member_id,
        topics=subscription.topics,
        owned=owned,
        generation=max(generation, ud_generation, -1),
        rack=subscription.rack_id or None,
        instance_id=instance_id,
    )


def assign_group(
    protocol: str,
    partitions_per_topic: Mapping[str, int],
    members: Iterable[MemberMetadata],
    *,
    partition_racks: PartitionRacks | None = None,
) -> dict[str, bytes]:
    """Encoded assignments for every member id in ``members`` (see the module docstring).

    ``partitions_per_topic`` lists the topics that exist; others are ignored.
    ``partition_racks`` (replica racks per partition) is passed to the engine when given:
    the rack-aware hook point.
    """
    specs: list[MemberSpec] = []
    versions: list[int] = []
    unreadable: list[str] = []
    for member in members:
        try:
            subscription = to_subscription(member.metadata)
        except CodecError as exc:
            _log.error(
                "member %s: unreadable subscription, it gets no partitions (%s)",
                member.member_id,
                exc,
            )
            unreadable.append(member.member_id)
            continue
        versions.append(subscription.version)
        specs.append(
            member_spec(
                member.member_id,
                subscription,
                protocol,
                instance_id=member.instance_id,
            )
        )
    engine = cooperative_assign if protocol == COOPERATIVE_STICKY else sticky_assign
    if partition_racks is None:
        plan = engine(partitions_per_topic, specs)
    else:
        plan = engine(partitions_per_topic, specs, partition_racks=partition_racks)  # type: ignore[call-arg]
    version = min(min(versions, default=0), CONSUMER_PROTOCOL_LATEST_VERSION)
    out = {
        member_id: encode_assignment(Assignment(version=version, partitions=tuple(partitions)))
        for member_id, partitions in plan.items()
    }
    empty = encode_assignment(Assignment(version=version, partitions=()))
    for member_id in unreadable:
        out[member_id] = empty
    return out
