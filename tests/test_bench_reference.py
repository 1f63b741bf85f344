"""``make bench``'s ``ref`` column: our leader's peer on the wire seam's plain-Python reference.

- ``ours-reference`` is the ``ours`` peer's command under ``env KAFKA_STICKY_PURE_PYTHON=1``,
  and each of the two processes reports the implementation it ran (``ours_peer.py``'s
  ``done`` line: ``implementation``, ``seam``), which ``run_limited`` puts in the row: the
  reference peer reports ``reference`` because of that variable, ``ours`` what this
  interpreter picks (the twin when installed), and both write the same assignment bytes;
- the time table shows ``ref`` beside ``ours`` (every other column kept, the ratios still
  against ``ours``) and one line under it naming what each ran, with how many rows wrote the
  same bytes;
- where ``ours`` reports that it ran the reference, ``ref`` is not run on that input
  (``ran_reference``, the rule ``bench_shape`` applies, also checked on a real run of the
  smallest shape) and the line under the table says why.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from peer_files import read_output, write_input  # noqa: E402
from run import (  # noqa: E402
    DEFAULT_BUDGET,
    DEFAULT_CALLS,
    PEERS,
    REFERENCE_PEER,
    REFERENCE_SKIP,
    bench_shape,
    peer_command,
    print_tables,
    ran_reference,
    run_limited,
    run_order,
    seam_line,
)

from kafka_sticky_plugin import StickyAssignor  # noqa: E402
from kafka_sticky_plugin.codec import implementation  # noqa: E402

PARTITIONS = {"orders": 12, "refunds": 8}
SUBS = {"m-1": ["orders", "refunds"], "m-2": ["orders"], "m-3": ["refunds", "orders"]}


def test_reference_peer_is_ours_with_the_pure_python_variable() -> None:
    ours, reference = peer_command("ours"), peer_command(REFERENCE_PEER)
    assert isinstance(ours, list) and isinstance(reference, list)
    assert reference == ["env", f"{implementation.PURE_PYTHON_ENV}=1", *ours]
    assert not any(implementation.PURE_PYTHON_ENV in part for part in ours)
    assert REFERENCE_PEER in PEERS
    assert DEFAULT_CALLS[REFERENCE_PEER] == DEFAULT_CALLS["ours"]
    assert DEFAULT_BUDGET[REFERENCE_PEER] == DEFAULT_BUDGET["ours"]


def test_reference_runs_right_after_ours_and_has_no_rackless_twin() -> None:
    peers = [REFERENCE_PEER, "franz", "ours", "java"]
    assert run_order(peers, racked=False) == ["franz", "ours", REFERENCE_PEER, "java"]
    assert run_order(peers, racked=True) == [
        "franz", "ours", REFERENCE_PEER, "java", "ours-norack",
    ]  # fmt: skip
    assert run_order(list(PEERS), racked=False) == list(PEERS)
    assert run_order([REFERENCE_PEER], racked=True) == [REFERENCE_PEER]


def test_each_peer_process_reports_the_implementation_it_ran(tmp_path: Path) -> None:
    """Both peers for real on one small input, two calls each: ``ref`` ran the reference
    because its command sets the variable (``seam`` says so), ``ours`` what this interpreter
    picks in this environment, and their assignment bytes are the same."""
    metadata = {m: StickyAssignor().metadata(topics) for m, topics in SUBS.items()}
    source = tmp_path / "in"
    write_input(source, PARTITIONS, metadata)
    rows, outputs = {}, {}
    for peer in ("ours", REFERENCE_PEER):
        cmd = peer_command(peer)
        assert isinstance(cmd, list)
        target = tmp_path / f"{peer}.out"
        rows[peer] = run_limited([*cmd, "sticky", str(source), str(target), "2"], 120)
        assert rows[peer]["status"] == "ok", rows[peer]
        outputs[peer] = read_output(target)
    assert rows[REFERENCE_PEER]["implementation"] == "reference"
    assert rows[REFERENCE_PEER]["seam"] == (
        f"wire seam: reference ({implementation.PURE_PYTHON_ENV} is set)"
    )
    assert rows["ours"]["implementation"] == implementation.IMPLEMENTATION
    assert rows["ours"]["seam"] == implementation.describe()
    assert ran_reference(rows["ours"]) is (implementation.IMPLEMENTATION == "reference")
    assert outputs["ours"] == outputs[REFERENCE_PEER] and set(outputs["ours"]) == set(SUBS)


def _row(peer: str, seconds: float, **extra: object) -> dict[str, object]:
    row: dict[str, object] = {
        "shape": "NESTED-10k", "protocol": "sticky", "phase": "rejoin", "input": "ours",
        "peer": peer, "status": "ok", "calls": 4, "seconds": seconds, "warm_s": seconds,
        "cold_s": seconds * 2, "cpu_s": seconds, "gc_s": 0.0, "load_before": 1.0,
        "load_after": 1.0, "peak_mb": 50.0, "twice": 0, "invalid": 0, "unassigned": 0,
        "spread": 1, "moved": 0, "optimal": True, "plan_sha256": "ab12",
    }  # fmt: skip
    row.update(extra)
    return row


def _time_row(out: str) -> list[str]:
    return next(x.split() for x in out.splitlines() if x.startswith("NESTED-10k"))


def test_ref_column_sits_beside_ours_and_ratios_stay_against_ours(
    capsys: pytest.CaptureFixture[str],
) -> None:
    twin = "wire seam: compiled (kafka-sticky-plugin-twin 0.2.0)"
    forced = f"wire seam: reference ({implementation.PURE_PYTHON_ENV} is set)"
    steps = "engine steps: compiled (kafka-sticky-plugin-twin 0.2.0)"
    rows = [
        _row(
            "ours", 0.02, implementation="compiled", seam=twin, describe_s=0.005,
            engine_implementation="compiled", engine_steps=steps,
        ),
        _row(
            REFERENCE_PEER, 0.05, implementation="reference", seam=forced, assign_s=0.03,
            engine_implementation="reference",
            engine_steps=f"engine steps: reference ({implementation.PURE_PYTHON_ENV} is set)",
        ),
        _row("franz", 0.04),
    ]  # fmt: skip
    print_tables(rows, ["ours", REFERENCE_PEER, "franz"], {"franz": 20.0})
    out = capsys.readouterr().out
    header = next(x for x in out.splitlines() if x.startswith("shape")).split()
    assert header == [
        "shape", "protocol", "phase", "input", "engine", "plain", "ours", "ref", "r-eng", "no-rack",
        "franz", "ratio",
    ]  # fmt: skip
    assert _time_row(out)[5:] == ["0.015", "0.020", "0.050", "0.030", "-", "0.040", "2.0x"]
    assert (
        "engine steps (each peer's own report): ours ran compiled (kafka-sticky-plugin-twin "
        f"0.2.0) on 1 rows; ref ran reference ({implementation.PURE_PYTHON_ENV} is set) on 1 rows"
    ) in out.splitlines()
    assert (
        "wire seam (each peer's own report): ours ran compiled (kafka-sticky-plugin-twin 0.2.0) "
        f"on 1 rows; ref ran reference ({implementation.PURE_PYTHON_ENV} is set) on 1 rows; "
        "ref wrote the same assignment bytes as ours on 1 of 1 rows"
    ) in out.splitlines()
    assert "not run" not in out
    rows[1]["plan_sha256"] = "cd34"
    assert "same assignment bytes as ours on 0 of 1 rows" in str(seam_line(rows))


def test_ref_is_skipped_with_one_line_where_ours_ran_the_reference(
    capsys: pytest.CaptureFixture[str],
) -> None:
    missing = "wire seam: reference (kafka-sticky-plugin-twin is not installed)"
    ours = _row("ours", 0.05, implementation="reference", seam=missing)
    assert ran_reference(ours)
    assert not ran_reference({**ours, "implementation": "compiled"})
    assert not ran_reference({**ours, "status": "cut"})
    assert not ran_reference(None)
    skipped = {**_row(REFERENCE_PEER, 0), "status": REFERENCE_SKIP, "seconds": None}
    leave = {"phase": "leave"}
    rows = [ours, skipped, {**ours, **leave}, {**skipped, **leave}]
    print_tables(rows, ["ours", REFERENCE_PEER], {})
    out = capsys.readouterr().out
    assert _time_row(out)[6:8] == ["0.050", "skipped"]
    notes = [x for x in out.splitlines() if "ref not run" in x or "skipped (not run)" in x]
    assert notes == [
        "wire seam (each peer's own report): ours ran reference (kafka-sticky-plugin-twin is "
        "not installed) on 2 rows; ref not run on 2 rows: ours ran the references itself there "
        "(it would repeat the same work)"
    ]
    assert seam_line([_row("ours", 0.05)]) is None  # a --json file from before: no line


def test_bench_shape_skips_ref_on_every_input_where_ours_ran_the_reference(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``bench_shape`` for real on NESTED-10k (the smallest default shape, about 2 s), with
    the variable set for the whole run as ``KAFKA_STICKY_PURE_PYTHON=1 make bench`` would:
    ``ours`` reports the reference on each of the five inputs, and ``ref`` is not run on any
    (the ``java`` input's copies of ``fresh`` included)."""
    monkeypatch.setenv(implementation.PURE_PYTHON_ENV, "1")
    rows = bench_shape(
        "NESTED-10k",
        "sticky",
        ["ours", REFERENCE_PEER],
        {"ours": None, REFERENCE_PEER: None},
        tmp_path,
        calls={"ours": 2, REFERENCE_PEER: 2},
        budget={"ours": 0.0, REFERENCE_PEER: 0.0},
        totals=defaultdict(float),
    )
    capsys.readouterr()
    ours = [r for r in rows if r["peer"] == "ours"]
    reference = [r for r in rows if r["peer"] == REFERENCE_PEER]
    assert len(ours) == len(reference) == 6
    assert all(r["status"] == "ok" and r["implementation"] == "reference" for r in ours)
    assert all(len(str(r["plan_sha256"])) == 64 for r in ours)
    assert [r["status"] for r in reference] == [REFERENCE_SKIP] * 6
    assert "ref not run on 5 rows" in str(seam_line(rows))
