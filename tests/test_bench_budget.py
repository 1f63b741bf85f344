"""What keeps ``make bench`` inside its budget, without changing a figure.

- the bulk quality measure (``benchmarks/bulk_quality.py``) gives exactly the figures of the
  one-step reference (``plan_quality.quality`` on ``plan_of``) on seeded random plans, bad
  ones included (partitions given twice, out of range, unsubscribed or unknown topics, keys
  that are not members, members left out, assignments in the codec's and in Java's layout);
- a plan's figures are reused only for the same bytes against the same members;
- the generator's per-member memo and the shared rack section write the same input bytes;
- the skip rules: kafka-python on a shape at least as large as one it was cut on, and Java on
  eager ``sticky``'s ``ours`` input after a cut on the ``java`` input (the inputs carry the
  same sticky user data, so Java's ``assign`` gets the same claims from both);
- ``--timings``' clock splits a peer process's wall time into start-up, calls and output.
"""

from __future__ import annotations

import random
import struct
import sys
from array import array
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from bulk_quality import RackIndex, TopicNames, assignment_items, bulk_quality  # noqa: E402
from java_form import java_metadata  # noqa: E402
from peer_files import rack_section, read_input, read_input_compact, write_input  # noqa: E402
from plan_quality import input_members, plan_of, quality  # noqa: E402
from run import (  # noqa: E402
    PlanJudge,
    ProcessClock,
    _at_least,
    _metadata,
    _remembered,
    run_limited,
    shape_size,
)

from kafka_sticky_plugin.codec import (  # noqa: E402
    Assignment,
    decode_sticky_user_data,
    decode_subscription,
    encode_assignment,
)
from kafka_sticky_plugin.errors import CodecError  # noqa: E402


def _group(rnd: random.Random) -> tuple[dict[str, int], dict[str, bytes], dict[str, list[str]]]:
    partitions = {f"t{k}": rnd.randint(1, 9) for k in range(rnd.randint(1, 5))}
    topics = list(partitions)
    subs = {
        f"m{i}": rnd.sample(topics, rnd.randint(0, len(topics))) for i in range(rnd.randint(1, 6))
    }
    previous: dict[str, list[tuple[str, int]]] = {}
    for m in subs:
        previous[m] = [(t, p) for t in subs[m] for p in range(partitions[t]) if rnd.random() < 0.3]
    racks: dict[str, str | None] = {m: rnd.choice([None, "r0", "r1", "r2"]) for m in subs}
    return partitions, _metadata("sticky", subs, racks, previous), subs


def _random_plan(
    rnd: random.Random, partitions: dict[str, int], subs: dict[str, list[str]], bad: bool
) -> dict[str, list[tuple[str, int]]]:
    plan: dict[str, list[tuple[str, int]]] = {m: [] for m in subs if rnd.random() < 0.9}
    cells = [(t, p) for t, n in partitions.items() for p in range(n)]
    for cell in cells:
        wanting = [m for m in plan if cell[0] in subs[m]]
        if wanting and rnd.random() < 0.95:
            plan[rnd.choice(wanting)].append(cell)
    if bad and plan:
        members = list(plan)
        for _ in range(rnd.randint(1, 4)):
            m = rnd.choice(members)
            topic = rnd.choice([*partitions, "nope"])
            plan[m].append((topic, rnd.choice([-1, 0, 1, 99])))
        plan["stranger"] = [(rnd.choice(list(partitions)), 0)]
    return plan


def _java_layout(assignment: Assignment) -> bytes:
    """The layout Java's ``serializeAssignment`` writes (one block per topic, any order)."""
    blocks: dict[str, list[int]] = {}
    for t, p in assignment.partitions:
        blocks.setdefault(t, []).append(p)
    out = struct.pack(">hi", 3, len(blocks))
    for t, ps in blocks.items():
        out += struct.pack(">h", len(t)) + t.encode() + struct.pack(f">i{len(ps)}i", len(ps), *ps)
    return out + struct.pack(">i", -1)


@pytest.mark.parametrize("seed", range(40))
def test_bulk_quality_is_the_reference_on_random_plans(seed: int) -> None:
    print(f"seed {seed}")
    rnd = random.Random(seed)
    partitions, metadata, subs = _group(rnd)
    members = input_members("sticky", metadata)
    plan = _random_plan(rnd, partitions, subs, bad=seed % 2 == 1)
    encode = _java_layout if seed % 3 == 0 else encode_assignment
    assignments = {m: encode(Assignment(3, tuple(items))) for m, items in plan.items()}
    sets = [(), ("r0",), ("r1", "r2"), ("r0", "r1", "r2")]
    index = [rnd.randrange(len(sets)) for _ in range(sum(partitions.values()))]
    cells = [(t, p) for t, n in partitions.items() for p in range(n)]
    racks = {cell: sets[k] for cell, k in zip(cells, index, strict=True)}
    compact = RackIndex(sets, np.array(index, dtype=np.int64))
    expected = quality(partitions, members, plan_of(assignments, members), racks)
    assert bulk_quality(partitions, members, assignments, compact) == expected
    expected.pop("cross_rack")
    assert bulk_quality(partitions, members, assignments) == expected


def test_bulk_quality_judges_an_unbalanced_plan_with_check_balanced() -> None:
    partitions = {"a": 4}
    metadata = _metadata("sticky", {"x": ["a"], "y": ["a"]}, {}, None)
    members = input_members("sticky", metadata)
    lopsided = {"x": encode_assignment(Assignment(3, tuple(("a", p) for p in range(4))))}
    got = bulk_quality(partitions, members, lopsided)
    assert got["spread"] == 4 and got["optimal"] is False
    assert got == quality(partitions, members, plan_of(lopsided, members))


def test_unreadable_assignment_bytes_are_refused_by_our_codec() -> None:
    names = TopicNames(["a", "b", "ab", "cd"])
    good = encode_assignment(Assignment(3, (("a", 0), ("a", 1), ("b", 2))))
    ids, counts, partitions = assignment_items(good, names)
    assert (ids.tolist(), counts.tolist(), partitions.tolist()) == ([0, 1], [2, 1], [0, 1, 2])
    strided = encode_assignment(Assignment(1, (("ab", 4), ("ab", 5), ("zz", 0), ("zz", 2))))
    ids, counts, partitions = assignment_items(strided, names)  # one array view
    assert (ids.tolist(), counts.tolist(), partitions.tolist()) == ([2, 4], [2, 2], [4, 5, 0, 2])
    with pytest.raises(CodecError):
        assignment_items(good[:-6], names)  # truncated inside a partition array
    bad_name = strided.replace(b"zz", b"\xff\xfe")
    with pytest.raises(CodecError):
        assignment_items(bad_name, names)  # not UTF-8: refused as the codec refuses it


@pytest.mark.parametrize("seed", range(12))
def test_bulk_quality_on_equal_blocks_is_the_reference(seed: int) -> None:
    """Every member given k partitions of each topic (the one-view path), with names of the
    same length that are not topics, items given twice and keys that are not members."""
    print(f"seed {seed}")
    rnd = random.Random(1000 + seed)
    k, n_members = rnd.randint(1, 3), rnd.randint(1, 4)
    partitions = {f"t{i:02d}": k * n_members for i in range(rnd.randint(1, 6))}
    subs = {f"m{i}": list(partitions) for i in range(n_members)}
    previous = {m: [(t, rnd.randrange(k * n_members))] for m in subs for t in partitions}
    metadata = _metadata("sticky", subs, {}, previous)
    members = input_members("sticky", metadata)
    topics = list(partitions) + (["t99"] if seed % 3 == 0 else [])
    plan = {m: [(t, i * k + j) for t in topics for j in range(k)] for i, m in enumerate(subs)}
    if seed % 2:
        plan["stranger"] = [(t, 0) for t in topics]
        first = next(iter(plan))
        plan[first] = [(t, (p + k) % (k * n_members)) for t, p in plan[first]]  # twice
    assignments = {m: encode_assignment(Assignment(3, tuple(v))) for m, v in plan.items()}
    expected = quality(partitions, members, plan_of(assignments, members))
    assert bulk_quality(partitions, members, assignments) == expected


def test_plan_judge_reuses_figures_only_for_the_same_bytes_and_members() -> None:
    judge = PlanJudge()
    judge.members(["a", "b"])
    judge.put(b"plan", {"moved": 3})
    assert judge.get(b"plan") == {"moved": 3} and judge.get(b"other") is None
    judge.members(["a", "b"])
    assert judge.get(b"plan") == {"moved": 3}
    judge.members(["a"])
    assert judge.get(b"plan") is None


def test_memo_and_shared_rack_section_write_the_same_inputs(tmp_path: Path) -> None:
    rnd = random.Random(7)
    partitions = {"t0": 5, "t1": 3}
    subs = {f"m{i}": ["t0", "t1"] for i in range(4)}
    racks: dict[str, str | None] = {m: f"r{i % 2}" for i, m in enumerate(subs)}
    previous = {m: [("t0", i), ("t1", i % 3)] for i, m in enumerate(subs)}
    replica = {(t, p): (f"r{rnd.randrange(2)}",) for t, n in partitions.items() for p in range(n)}
    memo: dict[str, dict[str, bytes]] = {"ours": {}, "java": {}}
    rejoin = {**subs, "new": ["t0"]}
    leave = {m: t for m, t in subs.items() if m != "m3"}
    for phase_subs in (rejoin, leave):
        for source, make in (("ours", _metadata), ("java", java_metadata)):
            got = _remembered(make, source, "sticky", phase_subs, racks, previous, memo)
            assert got == make("sticky", phase_subs, racks, previous)
            assert list(got) == list(phase_subs)
    shared = rack_section(partitions, replica)
    write_input(tmp_path / "a", partitions, got, replica)
    write_input(tmp_path / "b", partitions, got, rack_bytes=shared)
    assert (tmp_path / "a").read_bytes() == (tmp_path / "b").read_bytes()
    assert read_input(tmp_path / "b") == (partitions, got, replica)
    _, _, compact = read_input_compact(tmp_path / "b")
    assert compact is not None
    sets, index = compact
    assert isinstance(index, array)
    cells = [(t, p) for t, n in partitions.items() for p in range(n)]
    assert {cell: sets[k] for cell, k in zip(cells, index, strict=True)} == replica


def test_java_reads_the_same_sticky_user_data_from_both_eager_inputs() -> None:
    """The ground of the Java input rule: the same previous assignment in the user data, the
    ``ours`` input only adds owned partitions to decode."""
    subs = {"a": ["t0", "t1"], "b": ["t0"]}
    racks: dict[str, str | None] = {"a": "r0", "b": None}
    previous = {"a": [("t0", 0), ("t1", 1)], "b": [("t0", 1)]}
    ours = _metadata("sticky", subs, racks, previous)
    java = java_metadata("sticky", subs, racks, previous)
    for m in subs:
        o, j = decode_subscription(ours[m]), decode_subscription(java[m])
        assert decode_sticky_user_data(o.user_data or b"") == decode_sticky_user_data(
            j.user_data or b""
        )
        assert o.topics == j.topics and o.rack_id == j.rack_id
        assert j.owned_partitions == () and sorted(o.owned_partitions) == sorted(previous[m])


def test_kafka_python_size_rule_compares_partitions_and_members() -> None:
    nested, het, h1m = shape_size("NESTED-10k"), shape_size("HET-100k"), shape_size("H-1M")
    assert nested == (10_000, 100) and het == (100_000, 1_000) and h1m == (1_000_000, 2_000)
    assert _at_least(h1m, ("NESTED-10k", *nested)) and _at_least(het, ("NESTED-10k", *nested))
    assert not _at_least(nested, ("HET-100k", *het))
    assert not _at_least((20_000, 50), ("NESTED-10k", *nested))  # fewer members: runs


def test_process_clock_splits_start_up_calls_and_output() -> None:
    code = (
        "import json, time; time.sleep(0.4); print(json.dumps({'begin': 0}), flush=True); "
        "time.sleep(0.3); print(json.dumps({'call': 0, 'total_s': 0.3, 'cpu_s': 0.0, "
        "'gc_s': 0.0}), flush=True); time.sleep(0.3); print(json.dumps({'done': True}))"
    )
    row = run_limited([sys.executable, "-c", code], 5.0)
    wall = row["wall"]
    assert isinstance(wall, dict)
    # the orchestrator reads each line when it comes, so under load a part may look shorter
    # than the sleep before it and the next one longer; the parts add up to the whole
    assert wall["process_s"] >= 1.0 and wall["calls_s"] > 0 and wall["after_s"] > 0
    parts = wall["setup_s"] + wall["calls_s"] + wall["between_s"] + wall["after_s"]
    assert parts == pytest.approx(wall["process_s"], abs=1e-6)
    assert ProcessClock(0.0).parts()["calls_s"] == 0.0
