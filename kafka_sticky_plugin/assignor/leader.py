"""The leader's path, bytes to bytes: decode every member once, run the engine, encode.

No client import, no I/O, no state kept between calls; side effects are one logger and a
pause of the cyclic garbage collector for the duration of a call (restored on exit). Two
steps: :func:`read_group` decodes every member once, which yields both the group's topics (a
leader asks its cluster for their partition counts) and the engine's input; then
:meth:`DecodedGroup.assign` plans and encodes. :func:`assign_group` does both. Every adapter
goes through them (kafka-python's ``assign``, ``assign_from_bytes`` and coordinator hooks of
every version; the simulator). Bytes cross one seam (:mod:`kafka_sticky_plugin.codec.seam`,
through :mod:`~kafka_sticky_plugin.codec.implementation`: the compiled twin or the plain
reference): members' claims arrive as runs (per topic its name once, its partitions as flat
ints) and become the engine's specs as they are (:meth:`MemberSpec.from_runs`); plans leave
as dense indices. No tuple per partition is built on the bytes path.

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
import operator
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from itertools import islice
from typing import Any, NamedTuple

from ..codec import CONSUMER_PROTOCOL_LATEST_VERSION, Assignment, Subscription, encode_assignment
from ..codec.implementation import SubscriptionRead, read_subscriptions, write_assignments
from ..core import MemberSpec
from ..core.api import DensePlan
from ..core.gc_pause import cyclic_gc_paused
from ..core.spec import (
    OwnedRuns,
    TopicPartitionTuple,
    each_canonical_runs,
    owned_runs,
    runs_pairs,
)
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

_EMPTY_RUNS: OwnedRuns = ((), None, ())


@dataclass(frozen=True)
class MemberMetadata:
    """One JoinGroup member as the leader receives it.

    ``metadata`` is the raw subscription bytes, a decoded :class:`Subscription`, or a
    kafka-python subscription object (read attribute by attribute).
    """

    member_id: str
    metadata: Any
    instance_id: str | None = None


def _warn_unreadable_user_data(member_id: str, protocol: str, exc: CodecError) -> None:
    """The one warning line for a member whose user data cannot be read (no history)."""
    _log.warning(
        "member %s: unreadable %s user data, treated as no history (%s)", member_id, protocol, exc
    )


def member_spec(
    member_id: str,
    subscription: Subscription,
    protocol: str,
    *,
    instance_id: str | None = None,
) -> MemberSpec:
    """The engine's view of one decoded member (claim rules in the module docstring): the
    object path (a :class:`Subscription` or a client's object); members read from bytes get
    the same spec from their runs.

    Topics unknown to the cluster are kept: the engine ignores them by contract.
    """
    version = subscription.version
    generation = subscription.generation_id if version >= 2 else -1
    strategy = strategy_named(protocol)
    try:
        ud_partitions, ud_generation = strategy.read_claim(subscription.user_data)
    except CodecError as exc:
        _warn_unreadable_user_data(member_id, protocol, exc)
        ud_partitions, ud_generation = (), -1
    owned: Iterable[tuple[str, int]] = subscription.owned_partitions
    if (not strategy.cooperative or version < 1) and ud_partitions:
        if not owned:
            # The user data alone claims (Java and librdkafka members under EAGER).
            owned = ud_partitions
        elif ud_partitions != tuple(owned):
            # Our members and librdkafka's write the same list twice: unite only if needed.
            owned = [*owned, *ud_partitions]
    return MemberSpec(
        member_id=member_id,
        topics=subscription.topics,
        owned=owned,
        generation=max(generation, ud_generation, -1),
        rack=subscription.rack_id or None,
        instance_id=instance_id,
    )


def _same_claims(a: OwnedRuns, b: OwnedRuns) -> bool:
    """Whether runs ``a`` and ``b`` stand for the same pairs in the same order (equal runs
    do; other runs are compared pair by pair, which only a rare sender needs)."""
    if a is b or (a[0] == b[0] and a[1] == b[1] and a[2] == b[2]):
        return True
    return runs_pairs(a) == runs_pairs(b)


class _Batch:
    """What the members of one :func:`read_group` share: the group's protocol and whether
    its strategy is cooperative (looked up once), the subscribed-topics tuples already found
    sorted, and the claimed-topics tuples made canonical here (equal ones as one object)."""

    __slots__ = ("cooperative", "protocol", "sorted_topics", "topic_tuples")

    def __init__(self, protocol: str) -> None:
        self.protocol = protocol
        self.cooperative = strategy_named(protocol).cooperative
        self.sorted_topics: set[tuple[str, ...]] = set()
        self.topic_tuples: dict[tuple[str, ...], tuple[str, ...]] = {}

    def topics_sorted(self, topics: tuple[str, ...]) -> bool:
        """Whether ``topics`` (a tuple of ``str`` read by the seam) is strictly increasing:
        checked once per distinct tuple."""
        if topics in self.sorted_topics:
            return True
        if all(map(operator.lt, topics, islice(topics, 1, None))):
            self.sorted_topics.add(topics)
            return True
        return False


class _Claims(NamedTuple):
    """What a member read from bytes claims, before its spec is made: ``runs`` (canonical
    when ``canonical``), whether they are exactly its owned partitions as sent (``alone``:
    then a plan of exactly them is its canonical owned array, when it has one) and the
    generation they carry."""

    runs: OwnedRuns
    canonical: bool
    alone: bool
    generation: int


#: A member's claims as :func:`_claims_read` finds them: its runs, or ``(pairs, generation)``
#: when its user data adds claims of its own to its owned partitions.
_ReadClaims = _Claims | tuple[tuple[TopicPartitionTuple, ...], int]


def _claims_read(member_id: str, read: SubscriptionRead, batch: _Batch) -> _ReadClaims:
    """The claims of a member read from bytes (``read``: its subscription with its owned
    partitions and its user data's claim as runs): :class:`_Claims`, or ``(pairs,
    generation)`` when the user data adds claims of its own to the owned partitions (the
    spec's constructor then unites them)."""
    version = read.version
    generation = read.generation_id if version >= 2 else -1
    claim = read.claim
    ud_runs: OwnedRuns = _EMPTY_RUNS
    ud_generation = -1
    ud_sorted = True
    if isinstance(claim, CodecError):
        _warn_unreadable_user_data(member_id, batch.protocol, claim)
    elif claim is not None:  # always read by the seam's readers
        ud_runs, ud_generation, ud_sorted = claim
    generation = max(generation, ud_generation, -1)
    owned: OwnedRuns = read.owned
    if (not batch.cooperative or version < 1) and ud_runs[2]:
        if not owned[2]:
            # The user data alone claims (Java and librdkafka members under EAGER): in the
            # sender's order (Java's topics in hash order), made canonical by the caller
            # unless the seam found them canonical already.
            return _Claims(ud_runs, ud_sorted, False, generation)
        if not _same_claims(ud_runs, owned):
            # Our members and librdkafka's write the same list twice: unite only if needed.
            return (*runs_pairs(owned), *runs_pairs(ud_runs)), generation
    return _Claims(owned, read.owned_array is not None, True, generation)


def _spec_from_claims(
    member_id: str,
    read: SubscriptionRead,
    instance_id: str | None,
    batch: _Batch,
    claims: _ReadClaims,
) -> MemberSpec:
    """:func:`member_spec` of a member read from bytes, from :func:`_claims_read`'s
    ``claims`` (their runs made canonical): its runs as they are
    (:meth:`MemberSpec.from_runs`), or its pairs united by the constructor."""
    if not isinstance(claims, _Claims):
        pairs, generation = claims
        return MemberSpec(
            member_id=member_id,
            topics=read.topics,
            owned=pairs,
            generation=generation,
            rack=read.rack_id or None,
            instance_id=instance_id,
        )
    return MemberSpec.from_runs(
        member_id=member_id,
        topics=read.topics,
        runs=claims.runs,
        generation=claims.generation,
        rack=read.rack_id or None,
        instance_id=instance_id,
        topics_sorted=batch.topics_sorted(read.topics),
    )


def _all_canonical(batch: _Batch, firsts: list[_ReadClaims | None]) -> list[_ReadClaims | None]:
    """``firsts`` with every claim in another order made canonical, all in one call
    (:func:`~..core.spec.each_canonical_runs`), equal topic tuples of the canonical runs as
    one object, as the seam's readers give them."""
    unsorted = [c.runs for c in firsts if isinstance(c, _Claims) and not c.canonical]
    made = iter(each_canonical_runs(unsorted))
    out: list[_ReadClaims | None] = []
    for claims in firsts:
        if isinstance(claims, _Claims) and not claims.canonical:
            topics, lengths, flat = next(made)
            runs = (batch.topic_tuples.setdefault(topics, topics), lengths, flat)
            claims = _Claims(runs, True, claims.alone, claims.generation)
        out.append(claims)
    return out


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
    readable members, capped at the latest); ``owned_arrays`` maps a member read from bytes
    whose claims are exactly the owned partitions it sent canonically to that array's bytes
    (:attr:`~kafka_sticky_plugin.codec.consumer_protocol.SubscriptionRead.owned_array`).
    Nothing here changes after :func:`read_group`.
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
        # One expression, no local: the decoded group (a million claims) is freed when the
        # call returns, before the collector comes back (see gc_pause's docstring).
        return _assign_decoded(
            _read_group(protocol, members, convert), partitions_per_topic, partition_racks
        )


_RAW = (bytes, bytearray, memoryview)


def _read_member(
    batch: _Batch,
    member: MemberMetadata,
    read: SubscriptionRead | CodecError | None,
    claims: _ReadClaims | None,
    convert: Callable[[Any], Subscription] | None,
) -> tuple[MemberSpec, int, tuple[str, ...], bytes | None]:
    """One member's spec, subscription version, subscribed topics and the owned array to
    hand back when planned exactly its claims: from the seam's read and its ``claims``
    (canonical) for bytes, through :func:`member_spec` for objects (``read`` ``None``)."""
    if isinstance(read, CodecError):
        raise read
    if read is None or claims is None:
        subscription = _subscription_of(member.metadata, convert)
        spec = member_spec(
            member.member_id, subscription, batch.protocol, instance_id=member.instance_id
        )
        return spec, subscription.version, subscription.topics, None
    spec = _spec_from_claims(member.member_id, read, member.instance_id, batch, claims)
    alone = isinstance(claims, _Claims) and claims.alone
    return spec, read.version, read.topics, read.owned_array if alone else None


def _read_group(
    protocol: str,
    members: Iterable[MemberMetadata],
    convert: Callable[[Any], Subscription] | None,
) -> DecodedGroup:
    batch = _Batch(protocol)
    listed = list(members)
    # Every member sent as bytes goes through the seam in one call.
    reads: list[SubscriptionRead | CodecError | None] = [None] * len(listed)
    raw = [i for i, member in enumerate(listed) if isinstance(member.metadata, _RAW)]
    got = read_subscriptions([bytes(listed[i].metadata) for i in raw], batch.cooperative)
    for i, one in zip(raw, got, strict=True):
        reads[i] = one
    # Every member's claims, then those in another order made canonical in one call.
    firsts = _all_canonical(
        batch,
        [
            _claims_read(member.member_id, read, batch)
            if isinstance(read, SubscriptionRead)
            else None
            for member, read in zip(listed, reads, strict=True)
        ],
    )
    specs: list[MemberSpec] = []
    versions: list[int] = []
    unreadable: list[str] = []
    topics: set[str] = set()
    topic_arrays: set[tuple[str, ...]] = set()
    owned_arrays: dict[str, bytes] = {}
    for member, read, claims in zip(listed, reads, firsts, strict=True):
        try:
            spec, version, subscribed, owned_array = _read_member(
                batch, member, read, claims, convert
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
        versions.append(version)
        if subscribed not in topic_arrays:  # each distinct topic array is read once
            topic_arrays.add(subscribed)
            topics.update(subscribed)
        if owned_array is not None:
            owned_arrays[member.member_id] = owned_array
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


def _claim_count(spec: MemberSpec) -> int:
    """How many claims ``spec`` holds, without building pairs for a spec made of runs."""
    runs = owned_runs(spec)
    return len(spec.owned) if runs is None else len(runs[2])


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
    owned_arrays = group.owned_arrays
    out: dict[str, bytes] = {}
    to_write: list[int] = []
    for m, member_id in enumerate(layout.member_ids):
        out[member_id] = b""  # keeps the key order
        array = owned_arrays.get(member_id)
        if (
            array is not None
            and head
            and dense.valid_claims(m) == _claim_count(layout.specs[m])
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
