"""``make bench``'s leaner generator and our leader's timed split, without timing anything.

- our leader's peer (``benchmarks/ours_peer.py``) times the hooked leader's call (the call
  ``install_hooks`` makes: ``assign_from_bytes``'s decode, engine and encode plus the
  rebalance metrics' description of the round) step by step and writes the very bytes
  ``assign_from_bytes`` returns, on seeded random groups of both protocols, racks included:
  the ``engine`` column is the engine step of that call, so the generator no longer times
  the engine itself;
- Java members' bytes equal ours exactly where ``java_form.same_as_ours`` says so, and
  nowhere else in the eager phases with history: the generator writes one input there;
- the generator (on a small shape) writes the ``java`` input only where it differs, and the
  two inputs of a phase give our leader the same members, so ``make bench`` reads them once.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import run  # noqa: E402
from bulk_quality import bulk_quality, members_view  # noqa: E402
from java_form import java_metadata, same_as_ours  # noqa: E402
from ours_peer import leader_split  # noqa: E402
from peer_files import read_input  # noqa: E402
from plan_quality import input_members, plan_of, quality  # noqa: E402
from racked_metadata import cluster_metadata  # noqa: E402
from run import _metadata, call_seconds, summarise  # noqa: E402
from shapes import SHAPES, Shape  # noqa: E402

from kafka_sticky_plugin.codec import Assignment, encode_assignment  # noqa: E402
from kafka_sticky_plugin.groups.assignor_names import assignor_class  # noqa: E402

PROTOCOLS = ("sticky", "cooperative-sticky")


def _group(
    rnd: random.Random,
) -> tuple[
    dict[str, int],
    dict[str, list[str]],
    dict[str, str | None],
    dict[str, list[tuple[str, int]]],
]:
    partitions = {f"t{k}": rnd.randint(1, 9) for k in range(rnd.randint(1, 5))}
    topics = list(partitions)
    subs = {
        f"m{i}": rnd.sample(topics, rnd.randint(1, len(topics))) for i in range(rnd.randint(1, 6))
    }
    racks: dict[str, str | None] = {m: rnd.choice([None, "r0", "r1"]) for m in subs}
    previous: dict[str, list[tuple[str, int]]] = {}
    taken: set[tuple[str, int]] = set()
    for m in subs:
        if rnd.random() < 0.8:
            mine = [(t, p) for t in subs[m] for p in range(partitions[t]) if rnd.random() < 0.4]
            previous[m] = [c for c in mine if c not in taken]
            taken.update(previous[m])
    return partitions, subs, racks, previous


@pytest.mark.parametrize("seed", range(24))
def test_leader_split_writes_what_assign_from_bytes_writes(seed: int) -> None:
    print(f"seed {seed}")
    rnd = random.Random(seed)
    protocol = PROTOCOLS[seed % 2]
    partitions, subs, racks, previous = _group(rnd)
    metadata = _metadata(protocol, subs, racks, previous if seed % 3 else None)
    metadata["broken"] = b"\x00\x07not a subscription"
    replica = None
    if seed % 4 < 2:
        replica = {
            (t, p): tuple(rnd.sample(["r0", "r1", "r2"], 2))
            for t, n in partitions.items()
            for p in range(n)
        }
    expected = assignor_class(protocol)().assign_from_bytes(partitions, metadata, replica)
    got, parts = leader_split(protocol, partitions, metadata, replica)
    assert got == expected and set(got) == set(metadata)
    assert set(parts) == {"decode_s", "assign_s", "encode_s", "describe_s"}
    assert all(v >= 0 for v in parts.values())
    # the time table's ``ours`` figure is the four steps' sum (the hooked call), its
    # ``plain`` figure the first three (decode + assign + encode, as for Java and franz-go)
    assert call_seconds({"call": 0, **parts}) == pytest.approx(sum(parts.values()))
    summary = summarise([{"call": 0, **parts}])
    assert summary["assign_s"] == parts["assign_s"]
    assert summary["describe_s"] == parts["describe_s"]
    if replica is not None:  # read from metadata, as a consumer's leader reads them
        cluster = cluster_metadata(partitions, replica)
        read, parts = leader_split(protocol, partitions, metadata, None, cluster)
        assert read == expected
        steps = {"decode_s", "assign_s", "encode_s", "describe_s", "racks_s", "placement_s"}
        assert set(parts) == steps
        assert call_seconds({"call": 0, **parts}) == pytest.approx(sum(parts.values()))
        assert all(v >= 0 for v in parts.values())


@pytest.mark.parametrize("seed", range(24))
def test_java_bytes_are_ours_exactly_where_same_as_ours_says(seed: int) -> None:
    print(f"seed {seed}")
    rnd = random.Random(100 + seed)
    _, subs, racks, previous = _group(rnd)
    for protocol in PROTOCOLS:
        for history in (None, previous):
            same = java_metadata(protocol, subs, racks, history) == _metadata(
                protocol, subs, racks, history
            )
            if same_as_ours(protocol, history):
                assert same
            elif any(previous.get(m) for m in subs):
                assert not same  # ours adds the owned partitions


def _tiny_shape() -> Shape:
    partitions = {"ta": 7, "tb": 5, "tc": 3}
    return Shape(
        "TINY",
        partitions,
        lambda: {f"member-{i:02d}": ["ta", "tb"] if i % 3 else ["tc", "ta"] for i in range(6)},
        (3, 2),
    )


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_generator_writes_the_java_input_only_where_it_differs(
    protocol: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setitem(SHAPES, "TINY", _tiny_shape())  # run.SHAPES is this dict
    run.generate("TINY", protocol, tmp_path)
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [x["phase"] for x in lines] == list(run.PHASES)
    assert all("engine_s" not in x for x in lines)  # the engine is timed by our leader's peer
    for line in lines:
        phase = line["phase"]
        java = run.input_path(tmp_path, "TINY", protocol, phase, "java")
        ours = run.input_path(tmp_path, "TINY", protocol, phase, "ours")
        differs = protocol == "sticky" and phase != "fresh"
        assert line["same_inputs"] is (not differs)
        assert java.exists() is differs and ours.exists()
        ours_in = read_input(ours)
        members = input_members(protocol, ours_in[1])
        owned = [c for s in members for c in s.owned]
        cells = [(t, p) for t, n in _tiny_shape().partitions.items() for p in range(n)]
        if phase == "rejoin":  # everyone but the newcomer owns its part of the fresh plan
            assert sorted(owned) == sorted(cells)
        else:  # fresh: no history; leave: the fresh plan less the leaver's part
            assert len(owned) == len(set(owned)) and set(owned) <= set(cells)
            assert (phase == "fresh") is (not owned)
        if differs:
            java_in = read_input(java)
            assert java_in[0] == ours_in[0] and java_in[2] == ours_in[2]
            assert java_in[1] != ours_in[1]
            # what make bench relies on to read each phase's members once
            assert input_members(protocol, java_in[1]) == members


@pytest.mark.parametrize("seed", range(12))
def test_members_view_in_bulk_counts_claims_that_do_not_exist(seed: int) -> None:
    """Owned items of unknown topics or out of range are counted missing, as the one-step
    reference counts them (``bulk_quality`` against ``quality``, the moves included)."""
    print(f"seed {seed}")
    rnd = random.Random(300 + seed)
    partitions, subs, racks, previous = _group(rnd)
    for m in previous:
        if rnd.random() < 0.5:
            previous[m] = [*previous[m], ("gone", rnd.randrange(3))]
        if rnd.random() < 0.5:
            topic = rnd.choice(list(partitions))
            previous[m] = [*previous[m], (topic, partitions[topic] + rnd.randrange(3))]
    members = input_members("sticky", _metadata("sticky", subs, racks, previous))
    view = members_view(partitions, members)
    cells = {(t, p) for t, n in partitions.items() for p in range(n)}
    claims = [c for s in members for c in s.owned]
    assert view.owned_missing == sum(c not in cells for c in claims)
    print(f"missing {view.owned_missing} of {len(claims)}")
    assert len(view.owned_at) == sum(c in cells for c in claims)
    plan = {m: [c for c in previous.get(m, []) if c in cells][1:] for m in subs}
    assignments = {m: encode_assignment(Assignment(3, tuple(v))) for m, v in plan.items()}
    expected = quality(partitions, members, plan_of(assignments, members))
    assert bulk_quality(partitions, members, assignments, None, view) == expected


def test_tables_print_without_our_column(capsys: pytest.CaptureFixture[str]) -> None:
    """``--peers franz`` (no ``ours``): the tables print the peer's rows (the time table used
    to look the ``ours`` row up unconditionally and stopped with a KeyError)."""
    row: dict[str, object] = {
        "shape": "NESTED-10k", "protocol": "sticky", "phase": "rejoin", "input": "ours",
        "peer": "franz", "load_before": 1.0, "limit_s": 20.0, "calls": 4, "cold_s": 0.09,
        "warm_s": 0.0295, "seconds": 0.0295, "decode_s": 0.008, "cold_decode_s": 0.001,
        "assign_s": 0.0065, "cold_assign_s": 0.011, "encode_s": 0.0145, "cold_encode_s": 0.08,
        "cpu_s": 0.0046, "cold_cpu_s": 0.0118, "gc_s": 0.0078, "cold_gc_s": 0.0154,
        "done": True, "racks": False, "status": "ok", "peak_mb": 11.8, "load_after": 1.0,
        "twice": 0, "invalid": 0, "unassigned": 0, "spread": 1, "moved": 99, "optimal": True,
    }  # fmt: skip
    run.print_tables([row], ["franz"], {"franz": 20.0})
    out = capsys.readouterr().out
    assert any(line.startswith("NESTED-10k") and " 0.029 " in line for line in out.splitlines())
