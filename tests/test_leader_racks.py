"""Issue 37: the leader reads replica racks from its cluster metadata only when some member
has a rack, and reads them once per distinct replica list.

- Without member racks the plan, its bytes and the round's description are the same with
  replica racks (as a plain dict and as the hooks' :class:`ReplicaRacks`) as without them,
  on the seeded groups of ``test_metrics_leader_round.py`` (claims stale, contested, invalid;
  racks missing, empty, on no member's rack) stripped of member racks, eager and
  cooperative: so not reading them changes nothing.
- :func:`replica_racks` equals a brute-force construction on seeded metadata (brokers
  without a rack, replicas on brokers absent from the metadata, partition gaps, a negative
  partition, replica lists as lists and as tuples, kafka-python 2's ``replicas``).
- :func:`leader_racks` and ``assign_cluster`` do not read the metadata's brokers or
  partitions without member racks, and do with one.

Seeds are printed.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import pytest
from gc_watch import CollectionWatch
from test_metrics_leader_round import COUNTS, Recorded, _as_hooks_pass, _group, member_bytes

from kafka_sticky_plugin import StickyAssignor
from kafka_sticky_plugin.assignor.leader import read_group
from kafka_sticky_plugin.assignor.rack_changes import RackTracker
from kafka_sticky_plugin.assignor.racks import (
    leader_racks,
    racks_changed,
    replica_placement,
    replica_racks,
)
from kafka_sticky_plugin.core import MemberSpec
from kafka_sticky_plugin.metrics.observe import assign_observed

PROTOCOLS = ("sticky", "cooperative-sticky")
SEEDS = range(300)


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("seed", SEEDS)
def test_without_member_racks_replica_racks_change_nothing(seed: int, protocol: str) -> None:
    print(f"seed={seed}")
    rng = random.Random(seed)
    counts, specs, racks = _group(rng)
    if racks is None:  # replica racks on every partition instead
        racks = {(t, p): ("r0", "r1") for t, n in counts.items() for p in range(n)}
    specs = [replace(s, rack=None) for s in specs]
    group = read_group(protocol, member_bytes(specs))
    plain = group.plan(counts)
    plain_bytes = group.assign(counts)
    recorded = Recorded()
    assign_observed(recorded, group, counts, None, decode_s=0.0)
    for given in (racks, _as_hooks_pass(racks)):
        plan = group.plan(counts, partition_racks=given)
        assert plan == plain
        assert list(plan.items()) == list(plain.items())
        assert group.assign(counts, partition_racks=given) == plain_bytes
        assert assign_observed(recorded, group, counts, given, decode_s=0.0) == plain_bytes
    first = {name: getattr(recorded.rounds[0], name) for name in COUNTS}
    for round_ in recorded.rounds[1:]:
        assert {name: getattr(round_, name) for name in COUNTS} == first


@dataclass(frozen=True)
class Broker:
    nodeId: int  # kafka-python's attribute name
    rack: str | None


@dataclass(frozen=True)
class PartitionMeta:
    """kafka-python 3's ``replica_nodes``."""

    replica_nodes: list[int] | tuple[int, ...]


@dataclass(frozen=True)
class OldPartitionMeta:
    """kafka-python 2's and aiokafka's ``replicas``."""

    replicas: list[int] | tuple[int, ...]


class Metadata:
    """Cluster metadata read as the hooks read kafka-python's and aiokafka's: ``brokers()``,
    ``partitions_for_topic()`` and ``_partitions``; counts how often brokers are asked for."""

    def __init__(self, brokers: list[Broker], partitions: dict[str, dict[int, Any]]) -> None:
        self._brokers = brokers
        self._partitions = partitions
        self.broker_reads = 0

    def brokers(self) -> list[Broker]:
        self.broker_reads += 1
        return list(self._brokers)

    def partitions_for_topic(self, topic: str) -> set[int] | None:
        known = self._partitions.get(topic)
        return set(known) if known is not None else None


def _metadata(rng: random.Random) -> tuple[Metadata, dict[str, int]]:
    """2-8 brokers on 0-3 racks (some without one), replica lists of 0-4 ids (some of
    brokers absent from the metadata), topics with gaps, a negative partition, and topics
    asked for that the metadata does not know."""
    racks = [f"r{i}" for i in range(rng.randint(0, 3))]
    brokers = [Broker(b, rng.choice([None, "", *racks])) for b in range(rng.randint(2, 8))]
    ids = [b.nodeId for b in brokers] + [90, 91]  # 90, 91: offline brokers
    replica_sets = [rng.sample(ids, rng.randint(0, 4)) for _ in range(rng.randint(1, 12))]
    partitions: dict[str, dict[int, Any]] = {}
    counts: dict[str, int] = {}
    for t in range(rng.randint(1, 6)):
        n = rng.randint(0, 30)
        listed = [p for p in range(n) if rng.random() < 0.9]
        if rng.random() < 0.1:
            listed.append(-1)
        known: dict[int, Any] = {}
        for p in listed:
            replicas = rng.choice(replica_sets)
            shape = rng.choice([PartitionMeta, PartitionMeta, OldPartitionMeta])
            known[p] = shape(rng.choice([list, tuple])(replicas))
        partitions[f"t{t}"] = known
        counts[f"t{t}"] = n
    counts["unknown"] = 3
    return Metadata(brokers, partitions), counts


def _replicas(meta: PartitionMeta | OldPartitionMeta) -> Iterable[int]:
    return meta.replica_nodes if isinstance(meta, PartitionMeta) else meta.replicas


def _brute_force(metadata: Metadata, counts: Mapping[str, int]) -> dict[tuple[str, int], Any]:
    rack_of = {b.nodeId: b.rack for b in metadata._brokers if b.rack}
    out: dict[tuple[str, int], Any] = {}
    for topic in counts:
        for p, meta in sorted(metadata._partitions.get(topic, {}).items()):
            racks = sorted({rack_of[n] for n in _replicas(meta) if n in rack_of})
            if racks and p >= 0:
                out[(topic, p)] = tuple(racks)
    return out


def _prefix(racks: Mapping[tuple[str, int], Any], topic: str) -> int:
    p = 0
    while (topic, p) in racks:
        p += 1
    return p


@pytest.mark.parametrize("seed", range(400))
def test_replica_racks_equal_a_brute_force_construction(seed: int) -> None:
    print(f"seed={seed}")
    metadata, counts = _metadata(random.Random(seed))
    expected = _brute_force(metadata, counts)
    got = replica_racks(metadata, counts)
    if not expected:
        assert got is None
        return
    assert got is not None
    assert list(got.items()) == list(expected.items())  # same keys, racks and order
    for topic in counts:
        assert got.listed_prefix(topic) == _prefix(expected, topic)


@pytest.mark.parametrize("seed", range(400))
def test_replica_placement_equals_a_brute_force_construction(seed: int) -> None:
    """Replica ids with their broker's rack (``""``: none, ``None``: broker absent)."""
    print(f"seed={seed}")
    metadata, counts = _metadata(random.Random(seed))
    rack_of = {b.nodeId: b.rack or "" for b in metadata._brokers}
    expected: dict[str, list[Any]] = {}
    for topic in counts:
        known = metadata._partitions.get(topic, {})
        expected[topic] = [None] * (max(known, default=-1) + 1)
        for p, meta in known.items():
            if p >= 0:  # a negative partition is none
                expected[topic][p] = tuple(sorted((n, rack_of.get(n)) for n in _replicas(meta)))
    assert replica_placement(metadata, counts) == expected


def test_the_seeds_reach_every_case() -> None:
    """Racks and no racks, whole topics and topics with holes, offline replicas."""
    seen: set[str] = set()
    for seed in range(400):
        metadata, counts = _metadata(random.Random(seed))
        racks = replica_racks(metadata, counts)
        seen.add("none" if racks is None else "racks")
        if racks is not None:
            for topic, n in counts.items():
                if n:
                    seen.add("whole" if racks.listed_prefix(topic) == n else "holes")
    assert seen == {"none", "racks", "whole", "holes"}


def _racked_metadata() -> Metadata:
    brokers = [Broker(0, "a"), Broker(1, "b")]
    return Metadata(brokers, {"t": {p: PartitionMeta([p % 2]) for p in range(6)}})


def _specs(racks: Iterable[str | None]) -> list[MemberSpec]:
    return [MemberSpec(member_id=f"m{i}", topics=["t"], rack=r) for i, r in enumerate(racks)]


def test_leader_racks_read_the_metadata_only_for_racked_members() -> None:
    metadata = _racked_metadata()
    assert leader_racks(metadata, {"t": 6}, _specs([None, None])) == (None, None)
    assert metadata.broker_reads == 0
    racks, placement = leader_racks(metadata, {"t": 6}, _specs([None, "a"]))
    assert racks is not None and placement is not None
    assert dict(racks) == {("t", p): ("ab"[p % 2],) for p in range(6)}
    assert placement["t"][1] == ((1, "b"),)
    assert metadata.broker_reads == 1  # one read of the brokers, one walk: racks and placement


@pytest.mark.parametrize("seed", range(100))
def test_leader_racks_are_replica_racks_and_placement_in_one_read(seed: int) -> None:
    print(f"seed={seed}")
    metadata, counts = _metadata(random.Random(seed))
    racks, placement = leader_racks(metadata, counts, _specs(["r0"]))
    assert metadata.broker_reads == 1
    assert placement == replica_placement(metadata, counts)
    expected = replica_racks(metadata, counts)
    if expected is None:
        assert racks is None
    else:
        assert racks is not None and list(racks.items()) == list(expected.items())


def test_a_tracked_leader_sees_rack_changes_but_not_a_bounce() -> None:
    """``racks_changed`` over metadata updates, after ``leader_racks``' placement is remembered:
    broker 0 absent (a bounce) is no change, broker 0 back on another rack is one, once."""
    log = logging.getLogger("test_leader_racks")
    metadata = _racked_metadata()
    tracker = RackTracker()
    specs = _specs([None, "a"])
    _racks, placement = leader_racks(metadata, {"t": 6}, specs)
    tracker.remember(placement, [spec.rack for spec in specs])
    assert not racks_changed(tracker, metadata, "g", log)
    metadata._brokers = [Broker(1, "b")]  # broker 0 down
    assert not racks_changed(tracker, metadata, "g", log)
    metadata._brokers = [Broker(0, "c"), Broker(1, "b")]  # back with another rack
    assert tracker.check(replica_placement(metadata, ["t"])) == [("t", 0), ("t", 2), ("t", 4)]
    assert not tracker.tracking
    tracker.remember(placement, [spec.rack for spec in specs])
    assert racks_changed(tracker, metadata, "g", log)
    assert not racks_changed(tracker, metadata, "g", log)  # once


def test_assign_cluster_reads_replica_racks_only_for_racked_members() -> None:
    metadata = _racked_metadata()
    assignor = StickyAssignor()
    plain = member_bytes(_specs([None, None]))
    out = assignor.assign_cluster(metadata, plain)
    assert metadata.broker_reads == 0
    assert set(out) == {"m0", "m1"}
    racked = member_bytes(_specs(["a", "b"]))
    assignor.assign_cluster(metadata, racked)
    assert metadata.broker_reads == 1


def test_assign_cluster_frees_the_decoded_group_before_the_collector_resumes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The plain path runs in one pause of the cyclic collector, from the decode to the
    bytes: no collection starts while the decoded group is alive."""
    metadata = Metadata([Broker(0, "a")], {"t": {p: PartitionMeta([0]) for p in range(300)}})
    specs = [
        MemberSpec(member_id=f"m{i:03}", topics=["t"], owned=[("t", p) for p in range(i, 300, 100)])
        for i in range(100)
    ]
    assignor = StickyAssignor()
    read = type(assignor).read_members
    with CollectionWatch() as watch:
        monkeypatch.setattr(
            type(assignor), "read_members", lambda self, ms, **kw: watch.track(read(self, ms, **kw))
        )
        out = assignor.assign_cluster(metadata, member_bytes(specs))
    assert watch.tracked and not watch.alive()
    assert watch.scanned == []
    assert set(out) == {spec.member_id for spec in specs}
