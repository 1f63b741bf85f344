"""The leader's path, bytes to bytes: decode every member once, run the engine, encode.

No client import, no I/O, no state kept between calls; side effects are one logger and a
pause of the cyclic garbage collector for the duration of a call (restored on exit). Two
steps: :func:`read_group` decodes every member once, which yields both the group's topics (a
leader asks its cluster for their partition counts) and the engine's input; then
:meth:`DecodedGroup.assign` plans and encodes. :func:`assign_group` does both. Every adapter
goes through them (kafka-python's ``assign``, ``assign_from_bytes`` and coordinator hooks of
every version; the simulator), and the byte layouts and shortcuts they use live in
:mod:`kafka_sticky_plugin.codec`.

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
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from itertools import islice
from typing import Any

from ..codec import (
    CONSUMER_PROTOCOL_LATEST_VERSION,
    ArrayMemos,
    Assignment,
    AssignmentEncoder,
    DenseTopics,
    Subscription,
    SubscriptionDecoder,
)
from ..codec.sticky_user_data import read_user_data_runs
from ..core import MemberSpec
from ..core.api import DensePlan
from ..core.gc_pause import cyclic_gc_paused
from ..core.spec import OwnedRuns, RunOrders, owned_runs, runs_pairs
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


def _warn_unreadable_user_data(member_id: str, protocol: str, exc: CodecError) -> None:
    """The one warning line for a member whose user data cannot be read (no history)."""
    _log.warning(
        "member %s: unreadable %s user data, treated as no history (%s)", member_id, protocol, exc
    )


def _user_data_claim(
    member_id: str,
    subscription: Subscription,
    protocol: str,
    owned_block: bytes | None = None,
    arrays: ArrayMemos | None = None,
) -> tuple[list[tuple[str, int]] | None, int]:
    """The strategy's ``read_claim`` for one member; unreadable means no history (one
    warning line naming the member)."""
    try:
        return strategy_named(protocol).read_claim(subscription.user_data, owned_block, arrays)
    except CodecError as exc:
        _warn_unreadable_user_data(member_id, protocol, exc)
        return [], -1


def member_spec(
    member_id: str,
    subscription: Subscription,
    protocol: str,
    *,
    instance_id: str | None = None,
    owned_block: bytes | None = None,
    arrays: ArrayMemos | None = None,
) -> MemberSpec:
    """The engine's view of one decoded member (claim rules in the module docstring).

    Topics unknown to the cluster are kept: the engine ignores them by contract.
    ``owned_block`` (from :meth:`SubscriptionDecoder.decode_with_owned_block`) and ``arrays``
    (the decoder's :attr:`~SubscriptionDecoder.arrays`) only save work; the result is the
    same with or without them.
    """
    version = subscription.version
    generation = subscription.generation_id if version >= 2 else -1
    ud_partitions, ud_generation = _user_data_claim(
        member_id, subscription, protocol, owned_block, arrays
    )
    owned: Iterable[tuple[str, int]] = subscription.owned_partitions
    # Claims known to be canonical (strictly increasing plain pairs): a canonical owned block.
    canonical = subscription.owned_partitions if owned_block is not None else None
    if (not strategy_named(protocol).cooperative or version < 1) and ud_partitions:
        if not owned:
            # The user data alone claims (Java and librdkafka members under EAGER): plain
            # pairs from our codec, in the sender's order (Java's topics in hash order).
            owned = canonical = _canonical_pairs(ud_partitions)
        elif ud_partitions != list(owned):
            # Our members and librdkafka's write the same list twice: unite only if needed.
            owned, canonical = [*owned, *ud_partitions], None
    if canonical is not None:
        return MemberSpec.from_canonical(
            member_id=member_id,
            topics=subscription.topics,
            owned=canonical,
            generation=max(generation, ud_generation, -1),
            rack=subscription.rack_id or None,
            instance_id=instance_id,
        )
    return MemberSpec(
        member_id=member_id,
        topics=subscription.topics,
        owned=owned,
        generation=max(generation, ud_generation, -1),
        rack=subscription.rack_id or None,
        instance_id=instance_id,
    )


def _canonical_pairs(pairs: list[tuple[str, int]]) -> tuple[tuple[str, int], ...]:
    """The canonical form (sorted, distinct) of plain ``(str, int)`` pairs read by our codec,
    sorted in C: a Java member's topic groups arrive as ascending runs, which the sort
    merges; only duplicates cost a second sort."""
    ordered = sorted(pairs)
    if all(map(operator.lt, ordered, islice(ordered, 1, None))):
        return tuple(ordered)
    return tuple(sorted(set(ordered)))


def _user_data_runs(
    member_id: str,
    subscription: Subscription,
    owned_block: bytes | None,
    batch: _Batch,
) -> tuple[OwnedRuns | None, bool, int]:
    """:func:`_user_data_claim` with the claim as runs (wire order; ``None``: the owned
    block's) and whether they are canonical."""
    try:
        return read_user_data_runs(
            subscription.user_data,
            cooperative=batch.cooperative,
            owned_block=owned_block,
            arrays=batch.decoder.arrays,
        )
    except CodecError as exc:
        _warn_unreadable_user_data(member_id, batch.protocol, exc)
        return ((), None, ()), True, -1


class _Batch:
    """What the members of one :func:`read_group` share: the group's protocol and whether
    its strategy is cooperative (looked up once), the decoder (and its array memos), the
    sorting of runs whose topics tuple repeats, and the topics tuples already found sorted
    (by identity; kept alive here so that an id stays unique)."""

    __slots__ = ("cooperative", "decoder", "orders", "protocol", "sorted_topics")

    def __init__(self, protocol: str) -> None:
        self.protocol = protocol
        self.cooperative = strategy_named(protocol).cooperative
        self.decoder = SubscriptionDecoder()
        self.orders = RunOrders()
        self.sorted_topics: dict[int, tuple[str, ...]] = {}

    def topics_sorted(self, topics: tuple[str, ...]) -> bool:
        """Whether ``topics`` (a decoded subscription's tuple of ``str``) is strictly
        increasing: checked once per distinct tuple."""
        if self.sorted_topics.get(id(topics)) is topics:
            return True
        if all(map(operator.lt, topics, islice(topics, 1, None))):
            self.sorted_topics[id(topics)] = topics
            return True
        return False


def _spec_from_runs(
    member_id: str,
    subscription: Subscription,
    runs: OwnedRuns | None,
    owned_block: bytes | None,
    instance_id: str | None,
    batch: _Batch,
) -> MemberSpec:
    """:func:`member_spec` of a member read by
    :meth:`SubscriptionDecoder.decode_with_owned_runs` (``runs``: its owned partitions in
    wire order, canonical when ``owned_block`` is not ``None``): the same spec, its claims
    kept as canonical runs (:meth:`MemberSpec.from_runs`) unless the user data adds claims
    of its own to the owned partitions (then the constructor unites them)."""
    version = subscription.version
    generation = subscription.generation_id if version >= 2 else -1
    ud_runs, ud_canonical, ud_generation = _user_data_runs(
        member_id, subscription, owned_block, batch
    )
    owned: OwnedRuns = runs if runs is not None else ((), None, ())
    canonical = owned_block is not None
    extra: tuple[tuple[str, int], ...] = ()
    if (not batch.cooperative or version < 1) and ud_runs and ud_runs[2]:
        if not owned[2]:
            # The user data alone claims (Java and librdkafka members under EAGER): in the
            # sender's order (Java's topics in hash order), made canonical if it is not.
            owned, canonical = ud_runs, ud_canonical
        else:
            # Our members and librdkafka's write the same list twice: unite only if needed.
            ud_pairs = runs_pairs(ud_runs)
            if ud_pairs != runs_pairs(owned):
                extra = ud_pairs
    final_generation = max(generation, ud_generation, -1)
    if extra:
        return MemberSpec(
            member_id=member_id,
            topics=subscription.topics,
            owned=[*runs_pairs(owned), *extra],
            generation=final_generation,
            rack=subscription.rack_id or None,
            instance_id=instance_id,
        )
    if not canonical:
        owned = batch.orders.canonical(owned)
    return MemberSpec.from_runs(
        member_id=member_id,
        topics=subscription.topics,
        runs=owned,
        generation=final_generation,
        rack=subscription.rack_id or None,
        instance_id=instance_id,
        topics_sorted=batch.topics_sorted(subscription.topics),
    )


def _decode_member(
    decoder: SubscriptionDecoder,
    metadata: Any,
    convert: Callable[[Any], Subscription] | None,
) -> tuple[Subscription, bytes | None]:
    if isinstance(metadata, (bytes, bytearray, memoryview)):
        return decoder.decode_with_owned_block(metadata)
    if isinstance(metadata, Subscription):
        subscription = metadata
    elif convert is not None:
        subscription = convert(metadata)
    else:
        raise CodecError("JoinGroup metadata", f"bytes, got {type(metadata).__name__}", -1)
    return subscription, decoder.owned_block(subscription)


@dataclass(frozen=True)
class DecodedGroup:
    """Every member of one JoinGroup read once: the group's topics and the engine's input.

    Invariants: ``specs`` holds one spec per readable member, ``unreadable`` the ids of the
    others (each logged once when read), and the two are disjoint; ``topics`` is the union of
    the readable members' subscribed topics (what a leader asks the cluster about);
    ``version`` is the assignment version to write (the lowest subscription version among
    readable members, capped at the latest). Nothing here changes after :func:`read_group`.
    """

    protocol: str
    topics: frozenset[str]
    specs: tuple[MemberSpec, ...]
    unreadable: tuple[str, ...]
    version: int
    reusable: _OwnedBlocks

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
            return _plan_decoded(self, partitions_per_topic, partition_racks)

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
            return _encode_plan(self, plan)


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
    the rack-aware hook point.

    Speed (a leader may handle a million partitions): one :class:`SubscriptionDecoder` and
    one :class:`AssignmentEncoder` per call share work between members, a member whose
    new assignment equals the owned partitions it sent in canonical form gets those very
    bytes back (they are what the encoder would write; found on dense indices), the others
    are written from their dense indices (no partition ever becomes a tuple), and the cyclic
    garbage collector is paused for the duration of the call.
    """
    with cyclic_gc_paused():
        # One expression, no local: the decoded group (a million claim tuples) is freed when
        # the call returns, before the collector comes back (see gc_pause's docstring).
        return _assign_decoded(
            _read_group(protocol, members, convert), partitions_per_topic, partition_racks
        )


def _read_group(
    protocol: str,
    members: Iterable[MemberMetadata],
    convert: Callable[[Any], Subscription] | None,
) -> DecodedGroup:
    batch = _Batch(protocol)
    specs: list[MemberSpec] = []
    versions: list[int] = []
    unreadable: list[str] = []
    topics: set[str] = set()
    topic_arrays: dict[int, tuple[str, ...]] = {}
    reusable: dict[str, _OwnedBlock] = {}
    for member in members:
        try:
            spec, subscription, runs, owned_block = _read_member(batch, member, convert)
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
        if id(subscription.topics) not in topic_arrays:
            # The decoder hands members with equal topic arrays one shared tuple: each
            # distinct array is read once (kept alive here so that its id stays unique).
            topic_arrays[id(subscription.topics)] = subscription.topics
            topics.update(subscription.topics)
        if owned_block is not None:
            reusable[member.member_id] = (spec, subscription.owned_partitions, runs, owned_block)
    return DecodedGroup(
        protocol=protocol,
        topics=frozenset(topics),
        specs=tuple(specs),
        unreadable=tuple(unreadable),
        version=min(min(versions, default=0), CONSUMER_PROTOCOL_LATEST_VERSION),
        reusable=_OwnedBlocks(reusable),
    )


def _read_member(
    batch: _Batch,
    member: MemberMetadata,
    convert: Callable[[Any], Subscription] | None,
) -> tuple[MemberSpec, Subscription, OwnedRuns | None, bytes | None]:
    """One member's spec, subscription, owned partitions as runs and canonical owned block:
    bytes are read in bulk (owned partitions as runs, not in the subscription, see
    :func:`_spec_from_runs`); objects go through :func:`member_spec` (runs ``None``, the
    owned partitions in the subscription)."""
    metadata, decoder = member.metadata, batch.decoder
    if isinstance(metadata, (bytes, bytearray, memoryview)):
        subscription, runs, owned_block = decoder.decode_with_owned_runs(metadata)
        spec = _spec_from_runs(
            member.member_id, subscription, runs, owned_block, member.instance_id, batch
        )
        return spec, subscription, runs, owned_block
    subscription, owned_block = _decode_member(decoder, metadata, convert)
    spec = member_spec(
        member.member_id,
        subscription,
        batch.protocol,
        instance_id=member.instance_id,
        owned_block=owned_block,
        arrays=decoder.arrays,
    )
    return spec, subscription, None, owned_block


#: One member's canonical owned block as read: its spec, the subscription's owned pairs (the
#: object path) or runs (the bytes path), the block.
_OwnedBlock = tuple[MemberSpec, tuple[tuple[str, int], ...], OwnedRuns | None, bytes]


class _OwnedBlocks(Mapping[str, tuple[tuple[tuple[str, int], ...], bytes]]):
    """:attr:`DecodedGroup.reusable`: ``member_id -> (owned pairs, canonical owned block)``
    for every member that sent its owned partitions canonically, the pairs of a member read
    from bytes built on first access only. They are the member's spec's ``owned`` (the same
    object) when its claims are that block's, which :func:`_assign_decoded` checks by
    identity."""

    __slots__ = ("_built", "_entries")

    def __init__(self, entries: dict[str, _OwnedBlock]) -> None:
        self._entries = entries
        self._built: dict[str, tuple[tuple[str, int], ...]] = {}

    def __getitem__(self, member_id: str) -> tuple[tuple[tuple[str, int], ...], bytes]:
        spec, pairs, runs, block = self._entries[member_id]
        if runs is None:
            return pairs, block
        if owned_runs(spec) is runs:
            return spec.owned, block
        built = self._built.get(member_id)
        if built is None:
            built = self._built[member_id] = runs_pairs(runs)
        return built, block

    def claimed_block(self, member_id: str, spec: MemberSpec) -> tuple[int, bytes] | None:
        """``(claim count, block)`` when ``spec`` is the one read for ``member_id`` and its
        claims are exactly its canonical owned block's pairs, else ``None``: the test
        ``spec.owned is self[member_id][0]`` without building the pairs."""
        entry = self._entries.get(member_id)
        if entry is None or entry[0] is not spec:
            return None
        _, pairs, runs, block = entry
        if runs is None:
            return (len(pairs), block) if spec.owned is pairs else None
        return (len(runs[2]), block) if owned_runs(spec) is runs else None

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)


def _assign_decoded(
    group: DecodedGroup,
    partitions_per_topic: Mapping[str, int],
    partition_racks: PartitionRacks | None,
) -> dict[str, bytes]:
    """:func:`_encode_dense` of the engine's plan on dense indices. Same bytes as
    ``_encode_plan(group, _plan_decoded(...))``."""
    return _encode_dense(
        group,
        strategy_named(group.protocol).assign_dense(
            partitions_per_topic, group.specs, partition_racks=partition_racks
        ),
    )


def _encode_dense(group: DecodedGroup, dense: DensePlan) -> dict[str, bytes]:
    """Every member's assignment bytes from its dense plan, without a tuple per partition: a
    member planned exactly the canonical owned block it sent (its spec's claims are that
    block's pairs, all validated, and its plan is its validated claims) gets that block back;
    the others are encoded from their ascending global indices
    (:meth:`AssignmentEncoder.encode_dense`). Same bytes, key order included, as
    :func:`_encode_plan` of ``dense.all_partitions()``."""
    layout = dense.layout
    version = group.version
    encoder = AssignmentEncoder()
    topics: DenseTopics | None = None  # built for the first member not given its block back
    reusable = group.reusable
    out: dict[str, bytes] = {}
    for m, member_id in enumerate(layout.member_ids):
        # Found without the member's owned pairs (never built if its block comes back).
        kept = reusable.claimed_block(member_id, layout.specs[m])
        if kept is not None and dense.valid_claims(m) == kept[0] and dense.keeps_claims(m):
            out[member_id] = encoder.encode_owned_block(version, kept[1])
            continue
        if topics is None:
            topics = DenseTopics(layout.topics, layout.counts, layout.topic_at())
        written = _claims_written(encoder, version, dense, m, topics)
        out[member_id] = (
            written
            if written is not None
            else encoder.encode_dense(version, dense.indices(m), topics)
        )
    _encode_unreadable(group, encoder, out)
    return out


def _claims_written(
    encoder: AssignmentEncoder, version: int, dense: DensePlan, m: int, topics: DenseTopics
) -> bytes | None:
    """Member ``m``'s assignment written from the canonical runs of its spec (a Java member's
    user data claims, sorted when read) when every claim was validated and its plan is
    exactly them (the runs then list its planned partitions in canonical order), else
    ``None``. Same bytes as :meth:`AssignmentEncoder.encode_dense` of its indices."""
    runs = owned_runs(dense.layout.specs[m])
    if runs is None or not runs[2]:
        return None
    if dense.valid_claims(m) != len(runs[2]) or not dense.keeps_claims(m):
        return None
    names, lengths, flat = runs
    return encoder.encode_canonical_runs(version, names, lengths, flat, topics)


def _plan_decoded(
    group: DecodedGroup,
    partitions_per_topic: Mapping[str, int],
    partition_racks: PartitionRacks | None,
) -> dict[str, list[tuple[str, int]]]:
    return strategy_named(group.protocol).assign(
        partitions_per_topic, group.specs, partition_racks=partition_racks
    )


def _encode_plan(
    group: DecodedGroup, plan: Mapping[str, list[tuple[str, int]]]
) -> dict[str, bytes]:
    version = group.version
    encoder = AssignmentEncoder()
    reusable = group.reusable
    out = {
        member_id: _encode_member(encoder, version, reusable.get(member_id), partitions)
        for member_id, partitions in plan.items()
    }
    _encode_unreadable(group, encoder, out)
    return out


def _encode_member(
    encoder: AssignmentEncoder,
    version: int,
    previous: tuple[tuple[tuple[str, int], ...], bytes] | None,
    partitions: list[tuple[str, int]],
) -> bytes:
    """One member's assignment bytes: its canonical owned block back when ``partitions`` are
    exactly the pairs it sent (``previous``), else freshly encoded."""
    planned = tuple(partitions)
    if previous is not None and planned == previous[0]:
        return encoder.encode_owned_block(version, previous[1])
    return encoder.encode(Assignment(version, planned))


def _encode_unreadable(
    group: DecodedGroup, encoder: AssignmentEncoder, out: dict[str, bytes]
) -> None:
    """Give every unreadable member of ``group`` an empty assignment in ``out``."""
    if group.unreadable:
        empty = encoder.encode(Assignment(version=group.version, partitions=()))
        out.update(dict.fromkeys(group.unreadable, empty))
