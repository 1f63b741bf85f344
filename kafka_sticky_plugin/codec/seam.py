"""The leader's wire seam: the one narrow interface between the leader and the bytes.

The seam (stable signatures; a compiled twin implements exactly these three functions, and
must give equal values, equal bytes and equal errors)::

    read_subscriptions(payloads: Sequence[bytes], cooperative: bool)
        -> list[SubscriptionRead | CodecError]
    read_user_data_claims(user_data: Sequence[bytes | None], cooperative: bool)
        -> list[UserDataClaim | CodecError]     # (runs, generation or -1, sorted)
    write_assignments(version: int, topics: Sequence[str], counts: Sequence[int],
                      plans: Sequence[Sequence[int]]) -> list[bytes]

    class SubscriptionRead(NamedTuple):   # consumer_protocol.SubscriptionRead
        version, topics, user_data, owned: TopicRuns, generation_id, rack_id, owned_array,
        claim: UserDataClaim | CodecError    # the user data's, read_user_data_claims

Claims cross the seam as *runs* (:data:`~.topic_partitions.TopicRuns`: per topic element
its name once and its partitions in one flat int list; the engine's ``OwnedRuns``), never
as a tuple per partition: a leader of a million partitions builds no million pairs. Plans
cross it as ascending dense indices.

Everything the leader does between them is the engine's, on typed values: the leader reads
every member's JoinGroup metadata and user data claim with :func:`read_subscriptions`
(:func:`read_user_data_claims` reads claims alone), builds the engine's specs from the runs
(``MemberSpec.from_runs``), runs the engine, and writes every member's plan with
:func:`write_assignments`.

Invariants every implementation keeps:

- **Canonical order.** Writers emit topics sorted (Python ``str`` order: code points), each
  once, each with its partitions strictly increasing, no empty topic: equal sets give equal
  bytes. Readers return what was sent in wire order (no sorting, no de-duplication: that is
  the engine's policy, ``core.spec.canonical_runs``).
- **Runs.** ``lengths`` is ``None`` exactly when every topic element holds one partition;
  an empty array is ``((), None, [])``. A claim's ``sorted`` is true exactly when its runs
  are canonical runs: the array's bytes were canonical (``owned_array``'s verdict), or it
  held no topic element (no user data, a null or empty array, cooperative user data); the
  leader then skips ``canonical_runs``, which would return them unchanged.
- **Sharing.** Within one call, equal topic names are one ``str`` and equal topic tuples
  one ``tuple`` (the engine steps' twin reads each distinct tuple once), and a member's
  claim runs equal to its owned runs and holding a partition are that object (ours and
  librdkafka's members write the list twice); values never depend on it.
- **Null arrays.** An array count of -1 (a null array; Kafka's generated writers never send
  one for these non-nullable arrays, but some clients do) reads as empty, and is decided in
  one place (:meth:`~._wire.Reader.array_count`); every writer writes count 0 for no
  elements, never -1. A null array is therefore never canonical: ``owned_array`` is ``None``
  for it, so it is never handed back as an assignment.
- **Errors.** A malformed message is a :class:`~kafka_sticky_plugin.errors.CodecError`
  naming the message, what was expected and the byte offset where the offending field
  starts (offset 0 is the message's first byte). The readers return it in the member's
  place instead of raising, so one member never stops the group.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import CodecError
from .consumer_protocol import SubscriptionRead, read_subscription
from .sticky_user_data import UserDataClaim, read_user_data_runs
from .topic_partitions import DenseTopics, Interned

__all__ = [
    "SEAM",
    "SubscriptionRead",
    "read_subscriptions",
    "read_user_data_claims",
    "write_assignments",
]

#: The seam's functions, by name: what a compiled twin provides.
SEAM = ("read_subscriptions", "read_user_data_claims", "write_assignments")

_NULL_USER_DATA = b"\xff\xff\xff\xff"


def read_subscriptions(
    payloads: Sequence[bytes], cooperative: bool
) -> list[SubscriptionRead | CodecError]:
    """Every payload read as a consumer protocol subscription of any version (reading rules:
    :mod:`.consumer_protocol`), in payload order: a :class:`SubscriptionRead` with its user
    data's ``claim`` (as :func:`read_user_data_claims` reads it under ``cooperative``), or
    the :class:`CodecError` that reading the subscription raised (returned, not raised)."""
    shared = Interned()
    out: list[SubscriptionRead | CodecError] = []
    for payload in payloads:
        try:
            out.append(read_subscription(payload, cooperative, shared))
        except CodecError as exc:
            out.append(exc)
    return out


def read_user_data_claims(
    user_data: Sequence[bytes | None], cooperative: bool
) -> list[UserDataClaim | CodecError]:
    """Per member, ``(previous partitions as runs in wire order, generation or -1, sorted)``
    claimed by its subscription user data (``sorted``: the runs are canonical, see the
    module's invariants), or the :class:`CodecError` reading it raised (the caller treats
    the member as having no history); in input order.

    Null or empty user data claims nothing: ``(((), None, []), -1, True)``. Under ``cooperative``,
    exactly 4 bytes are Java's cooperative user data (the int32 generation, no partitions);
    anything else is sticky user data (v1: the array then the int32 generation, which must
    end the bytes; else v0: the array alone, which must end the bytes). A negative
    generation reads as -1 (the rules: :func:`.sticky_user_data.read_user_data_runs`).
    """
    shared = Interned()
    out: list[UserDataClaim | CodecError] = []
    for data in user_data:
        try:
            out.append(read_user_data_runs(data, cooperative=cooperative, shared=shared))
        except CodecError as exc:
            out.append(exc)
    return out


def write_assignments(
    version: int,
    topics: Sequence[str],
    counts: Sequence[int],
    plans: Sequence[Sequence[int]],
) -> list[bytes]:
    """Every plan written as a consumer protocol assignment of ``version``, null user data.

    The dense space: ``topics`` (strictly increasing names) and ``counts`` (their partition
    counts) number every partition; topic ``t``'s partition ``p`` is the global index
    ``sum(counts[:t]) + p``. ``plans[i]`` is one member's strictly increasing global
    indices; the result's item ``i`` is the assignment of those partitions, the same bytes
    as :func:`~.consumer_protocol.encode_assignment` of their ``(topic, partition)`` pairs.

    Raises :class:`CodecError` for a version outside ``[0, 32767]`` (offset 0) or a topic
    name that cannot be written (offset 2, where the array starts), and ``ValueError`` when
    a plan is not strictly increasing indices of the dense space.
    """
    head = version_head(version)
    space = DenseTopics(topics, counts)
    try:
        return [head + space.write(plan) + _NULL_USER_DATA for plan in plans]
    except CodecError as exc:
        raise CodecError(exc.what, exc.expected, 2) from None


def version_head(version: int) -> bytes:
    """The int16 version that starts an assignment; :class:`CodecError` at offset 0 for a
    version outside ``[0, 32767]``."""
    if isinstance(version, bool) or not isinstance(version, int) or not 0 <= version <= 32767:
        raise CodecError(
            "consumer protocol assignment", f"a version in [0, 32767], got {version!r}", 0
        )
    return version.to_bytes(2, "big")
