"""The leader side: ``assign()`` driven the way kafka-python 3.0.12's coordinator does.

The coordinator decodes every member's metadata with kafka-python's own
``ConsumerProtocolSubscription.decode`` and calls ``assign(cluster, members)`` with a real
``ClusterMetadata``; the values it gets back go into SyncGroup untouched. Members here speak
every consumer-protocol version and come from every client: Java (bytes derived from its
source), librdkafka (bytes captured from a real member), kafka-python's built-in assignors
and ours.
"""

from __future__ import annotations

import logging
import random
import struct
from collections.abc import Mapping

import pytest
from kafka.cluster import ClusterMetadata
from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor
from kafka.protocol.consumer.group import JoinGroupResponse
from kafka.protocol.consumer.metadata import (
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
)
from kafka.protocol.metadata import MetadataResponse

from kafka_sticky_plugin import CooperativeStickyAssignor, StickyAssignor
from kafka_sticky_plugin.assignor.leader import MemberMetadata, assign_group
from kafka_sticky_plugin.codec import (
    Assignment,
    Subscription,
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_cooperative_user_data,
    encode_sticky_user_data,
    encode_subscription,
)
from kafka_sticky_plugin.core import MemberSpec, sticky_assign
from kafka_sticky_plugin.invariants import check_plan

Member = JoinGroupResponse.JoinGroupResponseMember


def cluster_of(partitions_per_topic: Mapping[str, int]) -> ClusterMetadata:
    """A real kafka-python ClusterMetadata fed a real MetadataResponse."""
    resp = MetadataResponse
    topic_cls = resp.MetadataResponseTopic
    part_cls = topic_cls.MetadataResponsePartition
    response = resp(
        version=1,
        brokers=[resp.MetadataResponseBroker(version=1, node_id=0, host="127.0.0.1", port=9092)],
        controller_id=0,
        topics=[
            topic_cls(
                version=1,
                error_code=0,
                name=topic,
                is_internal=False,
                partitions=[
                    part_cls(
                        version=1,
                        error_code=0,
                        partition_index=p,
                        leader_id=0,
                        replica_nodes=[0],
                        isr_nodes=[0],
                    )
                    for p in range(count)
                ],
            )
            for topic, count in partitions_per_topic.items()
        ],
    )
    cluster = ClusterMetadata()
    cluster.update_metadata(response)
    return cluster


def as_coordinator_sees(metadata: Mapping[str, bytes]) -> list[object]:
    """JoinGroup members after kafka-python 3.0.12's _perform_assignment decoded them."""
    members = []
    for member_id, raw in metadata.items():
        member = Member(version=5, member_id=member_id, group_instance_id=None, metadata=raw)
        member.metadata = ConsumerProtocolSubscription.decode(member.metadata)
        members.append(member)
    return members


def decoded(result: Mapping[str, object]) -> dict[str, list[tuple[str, int]]]:
    """Each SyncGroup value read back with kafka-python's decoder, as members will."""
    out = {}
    for member_id, value in result.items():
        assert isinstance(value, bytes)
        parsed = ConsumerProtocolAssignment.decode(value)
        out[member_id] = sorted((tp.topic, tp.partition) for tp in parsed.partitions())
    return out


def sub(version: int, topics: tuple[str, ...], **fields: object) -> bytes:
    return encode_subscription(Subscription(version, topics, **fields))  # type: ignore[arg-type]


T = ("t1",)
LIBRDKAFKA_WITH_STATE = bytes.fromhex(
    "000300000001000274310000001c000000010002743100000003000000030000000400000005000000020000"
    "0001000274310000000300000003000000040000000500000002"
    "0000"
)
LIBRDKAFKA_FRESH = bytes.fromhex("000300000001000274310000000000000000ffffffff0000")


def test_mixed_versions_and_clients_get_a_valid_balanced_sticky_plan() -> None:
    """v0-v3 members from Java, librdkafka, kafka-python and us: every claim is honoured."""
    metadata = {
        "java-sticky-v3": sub(
            3, T, user_data=encode_sticky_user_data([("t1", 0), ("t1", 1)], 5), generation_id=5
        ),
        "old-java-v0": sub(
            0, T, user_data=encode_sticky_user_data([("t1", 6), ("t1", 7)], None, version=0)
        ),
        "v1-owned": sub(1, T, user_data=None, owned_partitions=(("t1", 8), ("t1", 9))),
        "v2-gen": sub(2, T, user_data=encode_sticky_user_data([("t1", 10)], 5), generation_id=5),
        "librdkafka": LIBRDKAFKA_WITH_STATE,  # claims t1-3, t1-4, t1-5 at generation 2
    }
    result = StickyAssignor().assign(cluster_of({"t1": 11}), as_coordinator_sees(metadata))
    plan = decoded(result)
    assert plan["java-sticky-v3"][:2] == [("t1", 0), ("t1", 1)]
    assert set(plan["old-java-v0"]) == {("t1", 6), ("t1", 7)}
    assert set(plan["v1-owned"]) == {("t1", 8), ("t1", 9)}
    assert ("t1", 10) in plan["v2-gen"]
    assert set(plan["librdkafka"]) >= {("t1", 3), ("t1", 4)}
    specs = [MemberSpec(member_id=m, topics=T) for m in metadata]
    check_plan({"t1": 11}, specs, plan)
    versions = {decode_assignment(v).version for v in result.values()}
    assert versions == {0}, "written at the lowest subscription version in the group"


def test_higher_generation_wins_a_contested_claim() -> None:
    """Two members claim t1-0: the one at generation 8 (subscription v2) keeps it."""
    metadata = {
        "stale": sub(3, T, user_data=encode_sticky_user_data([("t1", 0)], 3), generation_id=3),
        "fresh": sub(2, T, owned_partitions=(("t1", 0),), generation_id=8),
    }
    plan = decoded(StickyAssignor().assign(cluster_of({"t1": 2}), as_coordinator_sees(metadata)))
    assert plan == {"fresh": [("t1", 0)], "stale": [("t1", 1)]}


def test_user_data_generation_counts_when_the_subscription_has_none() -> None:
    """A v1 member's generation comes from its sticky v1 user data (KIP-341)."""
    metadata = {
        "a": sub(1, T, user_data=encode_sticky_user_data([("t1", 0)], 9)),
        "b": sub(3, T, user_data=encode_sticky_user_data([("t1", 0)], 4), generation_id=4),
    }
    plan = decoded(StickyAssignor().assign(cluster_of({"t1": 2}), as_coordinator_sees(metadata)))
    assert plan["a"] == [("t1", 0)]


def test_undecodable_member_gets_empty_assignment_and_one_error_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Raw garbage metadata: that member gets nothing, one error names it, others assigned."""
    assignor = CooperativeStickyAssignor()
    raw = {"good-1": sub(3, T), "good-2": LIBRDKAFKA_FRESH, "broken": b"\x00\x03\x7f\xff"}
    with caplog.at_level(logging.WARNING, logger="kafka_sticky_plugin"):
        result = assignor.assign_from_bytes({"t1": 4}, raw)
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and "broken" in errors[0].getMessage()
    plan = {m: list(decode_assignment(v).partitions) for m, v in result.items()}
    assert plan["broken"] == []
    assert sorted(plan["good-1"] + plan["good-2"]) == [("t1", p) for p in range(4)]


def test_unreadable_user_data_means_no_history(caplog: pytest.LogCaptureFixture) -> None:
    """kafka-python 3.0.12's built-in sticky user data (extra header): warned, no history."""
    builtin = StickyPartitionAssignor()
    builtin.on_assignment(
        ConsumerProtocolAssignment.decode(encode_assignment(Assignment(0, (("t1", 0), ("t1", 1))))),
        4,
    )
    builtin_metadata = builtin.metadata({"t1"})
    raw = builtin_metadata if isinstance(builtin_metadata, bytes) else builtin_metadata.encode()
    with caplog.at_level(logging.WARNING, logger="kafka_sticky_plugin"):
        result = StickyAssignor().assign_from_bytes({"t1": 4}, {"kp-builtin": raw, "x": sub(3, T)})
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "kp-builtin" in warnings[0].getMessage()
    plan = {m: list(decode_assignment(v).partitions) for m, v in result.items()}
    assert len(plan["kp-builtin"]) == 2 and len(plan["x"]) == 2


def test_unknown_topics_are_ignored() -> None:
    """A topic the cluster does not know is left out; known topics are assigned normally."""
    metadata = {"a": sub(3, ("t1", "ghost")), "b": sub(3, ("t1",))}
    plan = decoded(StickyAssignor().assign(cluster_of({"t1": 2}), as_coordinator_sees(metadata)))
    assert sorted(plan["a"] + plan["b"]) == [("t1", 0), ("t1", 1)]


def test_cooperative_withholds_a_partition_that_changes_owner() -> None:
    """A new member's share is withheld in round 1 and revoked from its current owner."""
    owner = {
        "old": sub(
            3,
            T,
            user_data=encode_cooperative_user_data(2),
            owned_partitions=tuple(("t1", p) for p in range(4)),
            generation_id=2,
        ),
        "new": sub(3, T, user_data=encode_cooperative_user_data(None)),
    }
    plan = decoded(
        CooperativeStickyAssignor().assign(cluster_of({"t1": 4}), as_coordinator_sees(owner))
    )
    assert plan["new"] == []
    assert len(plan["old"]) == 2


def test_cooperative_reads_java_generation_from_user_data_of_v1_members() -> None:
    """A v1 member's generation is its int32 user data: the fresher claim wins the tie."""
    metadata = {
        "java-v1": sub(
            1, T, user_data=encode_cooperative_user_data(6), owned_partitions=(("t1", 0),)
        ),
        "other": sub(
            3,
            T,
            user_data=encode_cooperative_user_data(5),
            owned_partitions=(("t1", 0),),
            generation_id=5,
        ),
    }
    plan = decoded(
        CooperativeStickyAssignor().assign(cluster_of({"t1": 2}), as_coordinator_sees(metadata))
    )
    assert plan["java-v1"] == [("t1", 0)]
    assert plan["other"] == [("t1", 1)]


def test_cooperative_librdkafka_member_keeps_its_partitions() -> None:
    """A captured librdkafka member (owned t1-3..5 at generation 2) keeps what it owns."""
    metadata = {"librdkafka": LIBRDKAFKA_WITH_STATE, "ours": sub(3, T)}
    plan = decoded(
        CooperativeStickyAssignor().assign(cluster_of({"t1": 6}), as_coordinator_sees(metadata))
    )
    assert plan["librdkafka"] == [("t1", 3), ("t1", 4), ("t1", 5)]
    assert plan["ours"] == [("t1", 0), ("t1", 1), ("t1", 2)]


def test_cooperative_under_eager_equals_eager_sticky() -> None:
    """First upgrade bounce: members bound to EAGER claim nothing, so the plan is sticky's."""
    rng = random.Random(1234)
    members = {f"m{i}": CooperativeStickyAssignor() for i in range(5)}
    for i, assignor in enumerate(members.values()):
        assignor.on_assignment(Assignment(3, (("t1", i), ("t2", i))), 7)
        assignor.use_rebalance_protocol(0)
    topics_of = {m: rng.choice([("t1",), ("t1", "t2")]) for m in members}
    raw = {m: a.metadata(topics_of[m]) for m, a in members.items()}
    counts = {"t1": 7, "t2": 3}
    result = CooperativeStickyAssignor().assign_from_bytes(counts, raw)
    eager = sticky_assign(
        counts, [MemberSpec(member_id=m, topics=topics_of[m], generation=7) for m in members]
    )
    assert {m: list(decode_assignment(v).partitions) for m, v in result.items()} == {
        m: list(p) for m, p in eager.items()
    }, f"seed 1234, topics {topics_of}"


def test_assign_from_bytes_equals_assign() -> None:
    """The raw-bytes leader path gives the same SyncGroup bytes as assign()."""
    metadata = {
        "a": sub(3, ("t1", "t2"), owned_partitions=(("t2", 1),), generation_id=1),
        "b": LIBRDKAFKA_WITH_STATE,
        "c": sub(0, ("t2",)),
    }
    assignor = CooperativeStickyAssignor()
    via_assign = assignor.assign(cluster_of({"t1": 6, "t2": 3}), as_coordinator_sees(metadata))
    via_bytes = assignor.assign_from_bytes({"t1": 6, "t2": 3}, metadata)
    assert via_assign == via_bytes


def _run_rounds(
    assignors: Mapping[str, CooperativeStickyAssignor | StickyAssignor],
    counts: Mapping[str, int],
    generation: int,
    cooperative: bool,
) -> tuple[dict[str, list[tuple[str, int]]], int]:
    """Rebalance like kafka-python: JoinGroup metadata -> leader assign -> on_assignment.

    Under COOPERATIVE a member that lost partitions asks for another round; returns the
    final assignment and the generation reached."""
    leader = next(iter(assignors.values()))
    for _ in range(5):
        generation += 1
        raw = {m: a.metadata(set(counts)) for m, a in assignors.items()}
        result = leader.assign(cluster_of(counts), as_coordinator_sees(raw))
        plan = decoded(result)
        revoked = False
        for member_id, assignor in assignors.items():
            before = set(assignor.previous_assignment)
            # no partition may be handed over while its owner still holds it
            for other_id, other in assignors.items():
                if other_id != member_id and cooperative:
                    assert not (set(plan[member_id]) - before) & set(other.previous_assignment)
            revoked |= bool(before - set(plan[member_id]))
            assignor.on_assignment(ConsumerProtocolAssignment.decode(result[member_id]), generation)
        if not (cooperative and revoked):
            return plan, generation
    raise AssertionError("cooperative rounds did not converge in 5 rebalances")


@pytest.mark.parametrize("cls", [StickyAssignor, CooperativeStickyAssignor])
def test_protocol_loop_is_stable_and_sticky_when_members_join(
    cls: type[StickyAssignor] | type[CooperativeStickyAssignor],
) -> None:
    """Full JoinGroup/SyncGroup loop: no movement without change; a join moves only its share."""
    counts = {"t1": 12, "t2": 6}
    group = {f"m{i}": cls() for i in range(3)}
    plan, gen = _run_rounds(group, counts, 0, cls is CooperativeStickyAssignor)
    again, gen = _run_rounds(group, counts, gen, cls is CooperativeStickyAssignor)
    assert again == plan
    group["m3"] = cls()
    final, gen = _run_rounds(group, counts, gen, cls is CooperativeStickyAssignor)
    kept = sum(len(set(plan[m]) & set(final[m])) for m in plan)
    assert kept == 18 - len(final["m3"])
    assert sorted(len(v) for v in final.values()) == [4, 4, 5, 5]


def test_assign_restores_the_garbage_collector_state() -> None:
    """The leader pauses cyclic GC only for the call and restores whatever state it found."""
    import gc

    assignor = StickyAssignor()
    raw = {"a": sub(3, T)}
    was = gc.isenabled()
    try:
        gc.enable()
        assignor.assign_from_bytes({"t1": 1}, raw)
        assert gc.isenabled()
        gc.disable()
        assignor.assign_from_bytes({"t1": 1}, raw)
        assert not gc.isenabled()
    finally:
        if was:
            gc.enable()


def test_reused_owned_bytes_equal_a_fresh_encode() -> None:
    """A member keeping exactly its owned partitions gets the bytes the encoder would write."""
    owned = (("t1", 0), ("t1", 1), ("t1", 2), ("t2", 0))
    raw = {"keeper": sub(3, ("t1", "t2"), owned_partitions=owned, generation_id=4)}
    result = StickyAssignor().assign_from_bytes({"t1": 3, "t2": 1}, raw)
    assert result["keeper"] == encode_assignment(Assignment(3, owned))


def test_unreadable_kafka_python_object_gets_empty_assignment(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A decoded member object with a non-str topic is refused like bad bytes: one error line."""
    good = as_coordinator_sees({"good": sub(3, T)})
    bad = Member(version=5, member_id="weird", group_instance_id=None, metadata=b"")
    bad.metadata = ConsumerProtocolSubscription(version=0, topics=[7], user_data=None)
    with caplog.at_level(logging.ERROR, logger="kafka_sticky_plugin"):
        result = StickyAssignor().assign(cluster_of({"t1": 2}), [*good, bad])
    assert decoded(result) == {"good": [("t1", 0), ("t1", 1)], "weird": []}
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and "weird" in errors[0].getMessage()


def test_plain_assign_with_a_garbage_bytes_member_assigns_the_rest(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """kafka-python 3.x's own ``assign()`` path with raw metadata a member's decoder could not
    read: no exception, one error line naming it, an empty assignment, the rest assigned."""
    good = [
        Member(version=5, member_id=m, group_instance_id=None, metadata=sub(3, T)) for m in "ab"
    ]
    bad = Member(version=5, member_id="garbage", group_instance_id=None, metadata=b"\x00\x02\xff")
    with caplog.at_level(logging.WARNING, logger="kafka_sticky_plugin"):
        result = CooperativeStickyAssignor().assign(cluster_of({"t1": 4}), [*good, bad])
    plan = decoded(result)
    assert plan["garbage"] == []
    assert sorted(plan["a"] + plan["b"]) == [("t1", p) for p in range(4)]
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(errors) == 1 and "garbage" in errors[0], errors


@pytest.mark.parametrize(
    "owned",
    [
        [("t1", [True])],  # a bool is not an int32
        [("t1", [2**40])],  # out of int32 range
        [(5, [1])],  # topic not a str
        [("t1", 3)],  # partitions not a sequence
        ["x"],  # not a (topic, partitions) pair
    ],
)
def test_kafka_python_object_with_bad_owned_partitions_is_refused(owned: list[object]) -> None:
    """Values read from objects are checked as strictly as bytes: a bad one refuses the member."""
    bad = Member(version=5, member_id="bad", group_instance_id=None, metadata=b"")
    bad.metadata = ConsumerProtocolSubscription(
        version=1, topics=["t1"], user_data=None, owned_partitions=owned
    )
    good = as_coordinator_sees({"good": sub(3, T)})
    result = StickyAssignor().assign(cluster_of({"t1": 2}), [*good, bad])
    assert decoded(result) == {"good": [("t1", 0), ("t1", 1)], "bad": []}


def test_member_racks_and_replica_racks_reach_the_engine() -> None:
    """Rack ids from subscription v3 and cluster_racks give the engine's rack-aware plan."""
    counts = {"t1": 6}
    racks = {("t1", p): ["r0" if p < 3 else "r1"] for p in range(6)}
    raw = {
        "a": sub(3, T, rack_id="r1"),
        "b": sub(3, T, rack_id="r0"),
        "c": LIBRDKAFKA_FRESH,  # rack "" means no rack
    }
    result = StickyAssignor().assign_from_bytes(counts, raw, racks)
    expected = sticky_assign(
        counts,
        [
            MemberSpec(member_id="a", topics=T, rack="r1"),
            MemberSpec(member_id="b", topics=T, rack="r0"),
            MemberSpec(member_id="c", topics=T),
        ],
        partition_racks=racks,
    )
    assert {m: list(decode_assignment(v).partitions) for m, v in result.items()} == expected


@pytest.mark.parametrize("cls", [StickyAssignor, CooperativeStickyAssignor])
def test_leader_shortcuts_give_the_engine_plan_on_a_large_rejoin(
    cls: type[StickyAssignor] | type[CooperativeStickyAssignor],
) -> None:
    """Members that own one partition of each of the same topics take the leader's shortcuts
    (one-struct owned arrays, trusted canonical claims, reused owned bytes, packed
    assignments); the result must equal the engine fed by the general decoder."""
    from kafka_sticky_plugin.assignor.leader import member_spec
    from kafka_sticky_plugin.core import cooperative_assign

    seed = random.randrange(2**32)
    print(f"seed={seed}")
    rnd = random.Random(seed)
    counts = {f"topic-{t:02d}": 40 for t in range(24)}
    protocol = cls().name
    members = [f"m{i:02d}" for i in range(40)]
    previous: dict[str, list[tuple[str, int]]] = {m: [] for m in members}
    for topic, n in counts.items():
        order = list(range(n))
        rnd.shuffle(order)
        for member, partition in zip(members, order, strict=True):
            previous[member].append((topic, partition))
    previous[members[0]] = previous[members[0]][:-1]  # one member lost a partition: a near miss
    metadata: dict[str, bytes] = {}
    for member in [*members, "m-new"]:
        assignor = cls()
        if member in previous:
            assignor.on_assignment(Assignment(3, tuple(sorted(previous[member]))), 5)
        metadata[member] = assignor.metadata(set(counts))
    result = cls().assign_from_bytes(counts, metadata)
    engine = cooperative_assign if cls is CooperativeStickyAssignor else sticky_assign
    specs = [member_spec(m, decode_subscription(raw), protocol) for m, raw in metadata.items()]
    expected = engine(counts, specs)
    assert decoded(result) == {m: list(p) for m, p in expected.items()}, f"seed {seed}"
    for member, raw in result.items():
        assert raw == encode_assignment(Assignment(3, tuple(expected[member])))
    check_plan(counts, specs, expected, cooperative=cls is CooperativeStickyAssignor)


def test_generation_claimed_after_a_failed_syncgroup() -> None:
    """The contested case of issue 12. Member X owned t1-0 at generation 5, joined generation
    6 but its SyncGroup failed; meanwhile B got t1-0 at generation 6. Then both rejoin.

    - Ours claims the last *synced* generation (5: the generation its owned partitions were
      assigned in, KIP-792's meaning): B's claim at 6 wins outright, nothing else moves.
    - Java claims its last *JoinGroup* generation (6) for the same partitions: the claims tie
      at 6, so the leader trusts neither (Java's leader does the same): t1-0 is withheld from
      everyone this round and both must give it up, so no partition ever has two owners; the
      cost is one partition handed over a round later than needed.
    """
    b = sub(
        3,
        T,
        user_data=encode_cooperative_user_data(6),
        owned_partitions=(("t1", 0),),
        generation_id=6,
    )

    def x(generation: int) -> bytes:
        return sub(
            3,
            T,
            user_data=encode_cooperative_user_data(generation),
            owned_partitions=(("t1", 0), ("t1", 1)),
            generation_id=generation,
        )

    ours = decoded(
        CooperativeStickyAssignor().assign(
            cluster_of({"t1": 4}), as_coordinator_sees({"x": x(5), "b": b})
        )
    )
    assert ("t1", 0) in ours["b"] and ("t1", 0) not in ours["x"]
    assert ("t1", 1) in ours["x"]
    java_style = decoded(
        CooperativeStickyAssignor().assign(
            cluster_of({"t1": 4}), as_coordinator_sees({"x": x(6), "b": b})
        )
    )
    assert ("t1", 0) not in java_style["x"] + java_style["b"], java_style
    assert ("t1", 1) in java_style["x"]


def _null_owned_array_member(version: int) -> bytes:
    """A v1+ subscription to topic ``t`` whose owned partitions are a null array (count -1):
    null user data, then generation 1 (v2+) and a null rack (v3)."""
    raw = struct.pack(">hih", version, 1, 1) + b"t" + struct.pack(">ii", -1, -1)
    if version >= 2:
        raw += struct.pack(">i", 1)
    if version >= 3:
        raw += struct.pack(">h", -1)
    return raw


@pytest.mark.parametrize("version", [1, 2, 3])
@pytest.mark.parametrize("protocol", ["sticky", "cooperative-sticky"])
@pytest.mark.parametrize("as_object", [False, True], ids=["bytes", "decoded"])
def test_null_owned_array_member_planned_nothing_gets_count_zero(
    version: int, protocol: str, as_object: bool
) -> None:
    """Issue 37: a member that sent its owned partitions as a null array (count -1) and is
    planned nothing gets an assignment whose partition array has count 0, the bytes of the
    general encoder (the array is not nullable in the assignment: Java's reader refuses -1),
    not its null array spliced back (``0001ffffffffffffffff``)."""
    raw = _null_owned_array_member(version)
    assert decode_subscription(raw).owned_partitions == ()
    members = [MemberMetadata(m, sub(version, ("t",), generation_id=1)) for m in ("m1", "m2")]
    members.append(MemberMetadata("m9", decode_subscription(raw) if as_object else raw))
    out = assign_group(protocol, {"t": 2}, members)
    assert decode_assignment(out["m9"]).partitions == ()
    expected = encode_assignment(Assignment(version, ()))
    assert expected == struct.pack(">hii", version, 0, -1)
    assert out["m9"] == expected
