"""The leader's path, bytes to bytes: decode every member once, run the engine, encode.

No client import, no I/O, no state kept between calls; side effects are one logger and a
pause of the cyclic garbage collector for the duration of a call (restored on exit). Two
steps: :func:`read_group` decodes every member once, which yields both the group's topics (a
leader asks its cluster for their partition counts) and the engine's input; then
:meth:`DecodedGroup.assign` plans and encodes. :func:`assign_group` does both. Every adapter
goes through them (kafka-python's ``assign``, ``assign_from_bytes`` and coordinator hooks of
every version; the simulator), and every byte they read or write goes through the wire seam,
:mod:`kafka_sticky_plugin.codec.seam`: subscriptions in, user data claims (through the
strategy's ``read_claim``), assignments out from the engine's dense plan. The leader calls it
through :mod:`kafka_sticky_plugin.codec.implementation`, which runs its compiled twin where
installed (same values, bytes and errors).

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
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..codec import CONSUMER_PROTOCOL_LATEST_VERSION, Assignment, Subscription, encode_assignment
from ..codec.implementation import SubscriptionRead, read_subscriptions, write_assignments
from ..core import MemberSpec
from ..core.api import DensePlan
from ..core.gc_pause import cyclic_gc_paused
from ..errors import CodecError, InvalidSpecError
from .strategies import COOPERATIVE_STICKY, STICKY, strategy_named

__all__ = [
    "COOPERATIVE_STICKY",
    "STICKY",
    "DecodedGroup",
    "MemberMetadata",
    "assign_group",
    "member_spec",
    "read_group",
]

_log = logging.getLogger("kafka_sticky_plugin.assignor")

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
    member_id: str, subscription: Subscription, protocol: str
) -> tuple[tuple[tuple[str, int], ...], int]:
    """The strategy's ``read_claim`` for one member; unreadable means no history (one
    warning line naming the member)."""
    try:
        return strategy_named(protocol).read_claim(subscription.user_data)
    except CodecError as exc:
        _log.warning(
            "member %s: unreadable %s user data, treated as no history (%s)",
            member_id,
            protocol,
            exc,
        )
        return (), -1


def _claimed(
    member_id: str, subscription: Subscription, protocol: str
) -> tuple[tuple[tuple[str, int], ...], int, bool]:
    """``(claimed partitions, generation, whether the claims are the owned partitions
    alone)`` of one member (the module docstring's claim rules)."""
    version = subscription.version
    generation = subscription.generation_id if version >= 2 else -1
    ud_partitions, ud_generation = _user_data_claim(member_id, subscription, protocol)
    owned = subscription.owned_partitions
    alone = True
    if (not strategy_named(protocol).cooperative or version < 1) and ud_partitions:
        if not owned:
            # The user data alone claims (Java and librdkafka members under EAGER).
            owned, alone = ud_partitions, False
        elif ud_partitions != owned:
            # Our members and librdkafka's write the same list twice: unite only if needed.
            owned, alone = (*owned, *ud_partitions), False
    return owned, max(generation, ud_generation, -1), alone


def member_spec(
    member_id: str,
    subscription: Subscription,
    protocol: str,
    *,
    instance_id: str | None = None,
) -> MemberSpec:
    """The engine's view of one decoded member (claim rules in the module docstring): the
    leader's one claim path, for members read from bytes and from a client's objects alike.

    Topics unknown to the cluster are kept: the engine ignores them by contract.
    """
    owned, generation, _ = _claimed(member_id, subscription, protocol)
    return MemberSpec(
        member_id=member_id,
        topics=subscription.topics,
        owned=owned,
        generation=generation,
        rack=subscription.rack_id or None,
        instance_id=instance_id,
    )


def _subscription_of(metadata: Any, convert: Callable[[Any], Subscription] | None) -> Subscription:
    """A member's metadata that is not bytes, as a :class:`Subscription`."""
    if isinstance(metadata, Subscription):
        return metadata
    if convert is not None:
        return convert(metadata)
    raise CodecError("JoinGroup metadata", f"bytes, got {type(metadata).__name__}", -1)


@dataclass(frozen=True)
class DecodedGroup:
    """Every member of one JoinGroup read once: the group's topics and the engine's input.

    Invariants: ``specs`` holds one spec per readable member, ``unreadable`` the ids of the
    others (each logged once when read), and the two are disjoint; ``topics`` is the union of
    the readable members' subscribed topics (what a leader asks the cluster about);
    ``version`` is the assignment version to write (the lowest subscription version among
    readable members, capped at the latest); ``owned_arrays`` maps a member whose claims are
    exactly the owned partitions it sent canonically to that array's bytes
    (:attr:`~kafka_sticky_plugin.codec.seam.SubscriptionRead.owned_array`). Nothing here
    changes after :func:`read_group`.
    """

    protocol: str
    topics: frozenset[str]
    specs: tuple[MemberSpec, ...]
    unreadable: tuple[str, ...]
    version: int
    owned_arrays: Mapping[str, bytes]

    def assign(
        self,
        partitions_per_topic: Mapping[str, int],
        *,
        partition_racks: PartitionRacks | None = None,
    ) -> dict[str, bytes]:
        """Encoded assignments for every member read (see :func:`assign_group`)."""
        with cyclic_gc_paused():
            return _assign_decoded(self, partitions_per_topic, partition_racks)

    def plan(
        self,
        partitions_per_topic: Mapping[str, int],
        *,
        partition_racks: PartitionRacks | None = None,
    ) -> dict[str, list[tuple[str, int]]]:
        """:meth:`assign`'s first half: the engine's plan for the readable members."""
        with cyclic_gc_paused():
            return strategy_named(self.protocol).assign(
                partitions_per_topic, self.specs, partition_racks=partition_racks
            )

    def plan_dense(
        self,
        partitions_per_topic: Mapping[str, int],
        *,
        partition_racks: PartitionRacks | None = None,
    ) -> DensePlan:
        """:meth:`assign`'s first half on dense indices (what :meth:`encode_dense` takes);
        the same plan as :meth:`plan`."""
        with cyclic_gc_paused():
            return strategy_named(self.protocol).assign_dense(
                partitions_per_topic, self.specs, partition_racks=partition_racks
            )

    def encode_dense(self, plan: DensePlan) -> dict[str, bytes]:
        """:meth:`assign`'s second half: :meth:`plan_dense`'s ``plan`` as assignment bytes
        for every member (the same bytes as :meth:`encode` of the tuple plan)."""
        with cyclic_gc_paused():
            return _encode_dense(self, plan)

    def encode(self, plan: Mapping[str, list[tuple[str, int]]]) -> dict[str, bytes]:
        """:meth:`assign`'s second half: ``plan`` as assignment bytes for every member (the
        unreadable ones get an empty assignment)."""
        with cyclic_gc_paused():
            version = self.version
            out = {
                member_id: encode_assignment(Assignment(version, tuple(partitions)))
                for member_id, partitions in plan.items()
            }
            _encode_unreadable(self, out)
            return out


def read_group(
    protocol: str,
    members: Iterable[MemberMetadata],
    *,
    convert: Callable[[Any], Subscription] | None = None,
) -> DecodedGroup:
    """Decode every member once (the module docstring's claim rules).

    ``convert`` turns metadata that is neither bytes nor a :class:`Subscription` (a client's
    decoded object) into one, raising :class:`CodecError` when it cannot. A member whose
    metadata cannot be read never raises here: it is listed in ``unreadable`` and named in
    one error log line.
    """
    with cyclic_gc_paused():
        return _read_group(protocol, members, convert)


def assign_group(
    protocol: str,
    partitions_per_topic: Mapping[str, int],
    members: Iterable[MemberMetadata],
    *,
    partition_racks: PartitionRacks | None = None,
    convert: Callable[[Any], Subscription] | None = None,
) -> dict[str, bytes]:
    """Encoded assignments for every member id in ``members`` (see the module docstring).

    ``partitions_per_topic`` lists the topics that exist; others are ignored.
    ``partition_racks`` (replica racks per partition) is passed to the engine when given:
    the rack-aware hook point. The cyclic garbage collector is paused for the duration of
    the call.
    """
    with cyclic_gc_paused():
        # One expression, no local: the decoded group (a million claim tuples) is freed when
        # the call returns, before the collector comes back (see gc_pause's docstring).
        return _assign_decoded(
            _read_group(protocol, members, convert), partitions_per_topic, partition_racks
        )


def _read_all(
    members: list[MemberMetadata], convert: Callable[[Any], Subscription] | None
) -> list[SubscriptionRead | CodecError]:
    """Every member's subscription, in member order: the bytes through the seam in one
    call, the others through ``convert``."""
    raw = (bytes, bytearray, memoryview)
    payloads = [bytes(m.metadata) for m in members if isinstance(m.metadata, raw)]
    from_bytes = iter(read_subscriptions(payloads))
    out: list[SubscriptionRead | CodecError] = []
    for member in members:
        if isinstance(member.metadata, raw):
            out.append(next(from_bytes))
            continue
        try:
            out.append(SubscriptionRead(_subscription_of(member.metadata, convert), None))
        except CodecError as exc:
            out.append(exc)
    return out


def _read_group(
    protocol: str,
    members: Iterable[MemberMetadata],
    convert: Callable[[Any], Subscription] | None,
) -> DecodedGroup:
    listed = list(members)
    specs: list[MemberSpec] = []
    versions: list[int] = []
    unreadable: list[str] = []
    topics: set[str] = set()
    owned_arrays: dict[str, bytes] = {}
    for member, read in zip(listed, _read_all(listed, convert), strict=True):
        try:
            if isinstance(read, CodecError):
                raise read
            subscription = read.subscription
            owned, generation, alone = _claimed(member.member_id, subscription, protocol)
            spec = MemberSpec(
                member_id=member.member_id,
                topics=subscription.topics,
                owned=owned,
                generation=generation,
                rack=subscription.rack_id or None,
                instance_id=member.instance_id,
            )
        except (CodecError, InvalidSpecError) as exc:
            _log.error(
                "member %s: unreadable subscription, it gets no partitions (%s)",
                member.member_id,
                exc,
            )
            unreadable.append(member.member_id)
            continue
        specs.append(spec)
        versions.append(subscription.version)
        topics.update(spec.topics)
        if alone and read.owned_array is not None:
            owned_arrays[member.member_id] = read.owned_array
    return DecodedGroup(
        protocol=protocol,
        topics=frozenset(topics),
        specs=tuple(specs),
        unreadable=tuple(unreadable),
        version=min(min(versions, default=0), CONSUMER_PROTOCOL_LATEST_VERSION),
        owned_arrays=owned_arrays,
    )


def _assign_decoded(
    group: DecodedGroup,
    partitions_per_topic: Mapping[str, int],
    partition_racks: PartitionRacks | None,
) -> dict[str, bytes]:
    """:func:`_encode_dense` of the engine's plan on dense indices."""
    return _encode_dense(
        group,
        strategy_named(group.protocol).assign_dense(
            partitions_per_topic, group.specs, partition_racks=partition_racks
        ),
    )


def _encode_dense(group: DecodedGroup, dense: DensePlan) -> dict[str, bytes]:
    """Every member's assignment bytes from its dense plan, written by the seam; key order:
    the plan's members (by id), then the unreadable ones.

    One rule saves writing most of a rebalance: a member planned exactly the claims it sent
    as a canonical owned array (every claim validated, all kept: its plan is those pairs)
    gets that array back, which is byte for byte what the writer would write for them.
    """
    layout = dense.layout
    version = group.version
    head = version.to_bytes(2, "big") if 0 <= version <= 32767 else b""
    out: dict[str, bytes] = {}
    to_write: list[int] = []
    for m, member_id in enumerate(layout.member_ids):
        out[member_id] = b""  # keeps the key order
        array = group.owned_arrays.get(member_id)
        if (
            array is not None
            and head
            and dense.valid_claims(m) == len(layout.specs[m].owned)
            and dense.keeps_claims(m)
        ):
            out[member_id] = head + array + b"\xff\xff\xff\xff"
        else:
            to_write.append(m)
    written = write_assignments(
        version, layout.topics, layout.counts, [dense.indices(m) for m in to_write]
    )
    for m, raw in zip(to_write, written, strict=True):
        out[layout.member_ids[m]] = raw
    _encode_unreadable(group, out)
    return out


def _encode_unreadable(group: DecodedGroup, out: dict[str, bytes]) -> None:
    """Give every unreadable member of ``group`` an empty assignment in ``out``."""
    if group.unreadable:
        empty = encode_assignment(Assignment(version=group.version, partitions=()))
        out.update(dict.fromkeys(group.unreadable, empty))
