"""The benchmark's peers: each one's plan is read back from the bytes it wrote, and judged by
our own code (``benchmarks/plan_quality.py``).

A 20-partition group (two topics, three members, different subscriptions, replica and member
racks, two members owning partitions from a previous plan) goes through every peer of
``make bench`` (ours, ours on the wire seam's reference, franz-go, Java, kafka-python). A peer
whose toolchain is absent is built with ``make bench-peers`` first; if it still cannot run,
the test is skipped with the reason, except under ``CI=true``, where the toolchains are
installed and a missing peer fails.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from java_form import java_metadata  # noqa: E402
from peer_files import read_input, read_output, write_input, write_output  # noqa: E402
from plan_quality import input_members, plan_of, quality  # noqa: E402
from run import peer_command, run_limited  # noqa: E402

from kafka_sticky_plugin import StickyAssignor  # noqa: E402
from kafka_sticky_plugin.codec import Assignment, encode_assignment  # noqa: E402

PARTITIONS = {"orders": 12, "refunds": 8}
SUBS = {"m-1": ["orders", "refunds"], "m-2": ["orders", "refunds"], "m-3": ["orders"]}
RACKS = {"m-1": "r0", "m-2": "r1", "m-3": "r0"}
PARTITION_RACKS = {
    (t, p): (f"r{p % 2}", f"r{(p + 1) % 3}") for t, n in PARTITIONS.items() for p in range(n)
}
PREVIOUS = {  # m-1 and m-2 owned everything at generation 1; m-3 joins
    "m-1": [("orders", p) for p in range(6)] + [("refunds", p) for p in range(4)],
    "m-2": [("orders", p) for p in range(6, 12)] + [("refunds", p) for p in range(4, 8)],
}
TOOLCHAIN = {"franz": ("go",), "java": ("mvn", "javac", "java")}


def _metadata() -> dict[str, bytes]:
    out = {}
    for member_id, topics in SUBS.items():
        assignor = StickyAssignor(rack_id=RACKS[member_id])
        if member_id in PREVIOUS:
            assignor.on_assignment(Assignment(3, tuple(PREVIOUS[member_id])), 1)
        out[member_id] = assignor.metadata(topics)
    return out


def _java_metadata() -> dict[str, bytes]:
    return java_metadata("sticky", SUBS, RACKS, PREVIOUS)


def _command(peer: str) -> list[str]:
    cmd = peer_command(peer)
    if isinstance(cmd, str) and all(shutil.which(t) for t in TOOLCHAIN.get(peer, ())):
        subprocess.run(["make", "-s", "-C", str(ROOT), "bench-peers"], check=False)
        cmd = peer_command(peer)
    if isinstance(cmd, str):
        if os.environ.get("CI") == "true":
            pytest.fail(f"{peer} peer {cmd} under CI=true")
        pytest.skip(f"{peer} peer {cmd}")
    return cmd


def test_input_file_round_trips(tmp_path: Path) -> None:
    metadata = _metadata()
    write_input(tmp_path / "in", PARTITIONS, metadata, PARTITION_RACKS)
    assert read_input(tmp_path / "in") == (PARTITIONS, metadata, PARTITION_RACKS)
    write_input(tmp_path / "plain", PARTITIONS, metadata)
    assert read_input(tmp_path / "plain") == (PARTITIONS, metadata, None)


@pytest.mark.parametrize("form", ["ours", "java"])
@pytest.mark.parametrize("peer", ["ours", "ours-reference", "franz", "java", "kafka-python"])
def test_peer_plan_is_read_back_and_judged_by_our_code(
    peer: str, form: str, tmp_path: Path
) -> None:
    """Each peer on our members' bytes and on Java members' bytes (no owned partitions, the
    previous assignment in the sticky user data only), two calls in one process."""
    cmd = _command(peer)
    source, target = tmp_path / "in", tmp_path / "out"
    metadata = _metadata() if form == "ours" else _java_metadata()
    write_input(source, PARTITIONS, metadata, PARTITION_RACKS)
    row = run_limited([*cmd, "sticky", str(source), str(target), "2"], 120)
    assert row["status"] == "ok", row
    assert float(row["peak_mb"]) > 1  # type: ignore[arg-type]
    assert row["calls"] == 2 and row["done"] is True
    assert row["warm_s"] is not None and row["seconds"] == row["warm_s"]
    assert float(row["cpu_s"]) >= 0 and float(row["gc_s"]) >= 0  # type: ignore[arg-type]
    members = input_members("sticky", metadata)
    assert {s.member_id: sorted(s.owned) for s in members if s.owned} == PREVIOUS
    assignments = read_output(target)
    assert set(assignments) == set(SUBS)
    plan = plan_of(assignments, members)
    given = sorted(tp for tps in plan.values() for tp in tps)
    assert given == sorted((t, p) for t, n in PARTITIONS.items() for p in range(n))
    for member_id, tps in plan.items():
        assert {t for t, _ in tps} <= set(SUBS[member_id])
    got = quality(PARTITIONS, members, plan, PARTITION_RACKS)
    loads = [len(tps) for tps in plan.values()]
    owner = {tp: m for m, tps in plan.items() for tp in tps}
    assert got["twice"] == got["invalid"] == got["unassigned"] == 0
    assert got["spread"] == max(loads) - min(loads)
    assert got["moved"] == sum(1 for m, tps in PREVIOUS.items() for tp in tps if owner[tp] != m)
    assert got["moved"] >= 6  # m-3 needs 6 or 7 partitions, all owned by others before
    assert got["cross_rack"] == sum(
        1 for tp, m in owner.items() if RACKS[m] not in PARTITION_RACKS[tp]
    )
    assert got["optimal"] is True


def test_quality_reports_a_bad_plan(tmp_path: Path) -> None:
    """A plan written as a peer would, with a partition given twice, one missing, one
    invalid item and an unbalanced load: our code counts each fault."""
    members = input_members("sticky", _metadata())
    bad = {
        "m-1": [("orders", p) for p in range(12)] + [("refunds", p) for p in range(7)],
        "m-2": [("orders", 0)],
        "m-3": [("refunds", 99)],
    }
    write_output(
        tmp_path / "out", {m: encode_assignment(Assignment(3, tuple(v))) for m, v in bad.items()}
    )
    got = quality(PARTITIONS, members, plan_of(read_output(tmp_path / "out"), members))
    assert (got["twice"], got["invalid"], got["unassigned"]) == (1, 1, 1)
    assert got["optimal"] is None  # not judged when items are invalid
    bad["m-2"], bad["m-3"] = [], []
    got = quality(
        PARTITIONS,
        members,
        plan_of({m: encode_assignment(Assignment(3, tuple(v))) for m, v in bad.items()}, members),
    )
    assert got["spread"] == 19 and got["optimal"] is False
    assert got["moved"] == 10  # m-2's ten owned partitions went to m-1 or nobody


def test_a_peer_that_hangs_in_a_call_is_cut() -> None:
    hang = "import json, time; print(json.dumps({'begin': 0}), flush=True); time.sleep(60)"
    row = run_limited([sys.executable, "-c", hang], 0.5)
    assert row["status"] == "cut"


def test_the_time_limit_covers_the_call_only() -> None:
    """Start-up before the ``begin`` line is not cut by the call's limit (only by the setup
    limit); a call within its limit is ``ok`` however long the start-up took."""
    slow_start = (
        "import time, json; time.sleep(1.5); print(json.dumps({'begin': 0}), flush=True); "
        "print(json.dumps({'call': 0, 'total_s': 0.01, 'cpu_s': 0.0, 'gc_s': 0.0})); "
        "print(json.dumps({'done': True}))"
    )
    row = run_limited([sys.executable, "-c", slow_start], 0.5)
    assert row["status"] == "ok", row
    assert row["cold_s"] == row["seconds"] == 0.01 and row["warm_s"] is None
    stuck = run_limited([sys.executable, "-c", "import time; time.sleep(60)"], 0.5, 1.0)
    assert str(stuck["status"]).startswith("error: no progress")
