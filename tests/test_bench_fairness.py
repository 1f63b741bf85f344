"""The fair benchmark's inputs and tables (``make bench``), without timing anything.

- Java members' bytes (``benchmarks/java_form.py``) decode with our codec to the same
  subscriptions, and our leader reads the same claims from them as from our members' bytes;
- the default topic names spread Java's ``TopicPartition`` hash codes (every partition of
  H-1M its own), the numbered names do not (the issue's 21,330);
- the tables carry the new columns: both inputs, Java's split with its cold call, CPU, GC and
  load, ours without racks beside franz-go.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from java_form import java_member_metadata, java_metadata  # noqa: E402
from plan_quality import input_members  # noqa: E402
from run import _metadata, print_tables, summarise  # noqa: E402
from shapes import SHAPES, distinct_partition_hashes, java_string_hash, topic_names  # noqa: E402

from kafka_sticky_plugin.codec import (  # noqa: E402
    decode_cooperative_user_data,
    decode_sticky_user_data,
    decode_subscription,
)

SUBS = {"a": ["t1", "t0"], "b": ["t0"], "new": ["t0", "t1"]}
RACKS: dict[str, str | None] = {"a": "r1", "b": None, "new": "r0"}
PREVIOUS = {"a": [("t0", 0), ("t1", 1), ("t0", 2)], "b": [("t0", 1)]}


def test_java_string_hash_matches_java() -> None:
    # printed by String.hashCode() on Java 17 (non-ASCII: UTF-16 units)
    assert java_string_hash("") == 0
    assert java_string_hash("a") == 97
    assert java_string_hash("topic-0000") == -882522658 % 2**32
    assert java_string_hash("topic-9e3779b1") == 358846463
    assert java_string_hash("\u00e9\u20acx") == 483317


def test_eager_java_bytes_carry_no_owned_partitions_and_decode_to_the_same_claims() -> None:
    java = java_metadata("sticky", SUBS, RACKS, PREVIOUS)
    ours = _metadata("sticky", SUBS, RACKS, PREVIOUS)
    assert java != ours  # ours also sends the owned partitions
    for member_id, raw in java.items():
        sub = decode_subscription(raw)
        assert sorted(sub.topics) == sorted(SUBS[member_id])
        assert sub.owned_partitions == ()
        assert sub.rack_id == RACKS[member_id]
        if member_id in PREVIOUS:
            assert sub.generation_id == 1
            claimed, generation = decode_sticky_user_data(sub.user_data or b"")
            assert sorted(claimed) == sorted(PREVIOUS[member_id]) and generation == 1
        else:
            assert sub.user_data is None and sub.generation_id == -1
    read = {s.member_id: s for s in input_members("sticky", java)}
    expected = {s.member_id: s for s in input_members("sticky", ours)}
    assert {m: sorted(s.owned) for m, s in read.items()} == {
        m: sorted(PREVIOUS.get(m, [])) for m in SUBS
    }
    assert read == expected


def test_cooperative_java_bytes_are_our_members_bytes() -> None:
    java = java_metadata("cooperative-sticky", SUBS, RACKS, PREVIOUS)
    assert java == _metadata("cooperative-sticky", SUBS, RACKS, PREVIOUS)
    sub = decode_subscription(java["a"])
    assert sorted(sub.owned_partitions) == sorted(PREVIOUS["a"]) and sub.generation_id == 1
    assert decode_cooperative_user_data(sub.user_data or b"") == 1


def test_fresh_java_bytes_are_our_members_bytes() -> None:
    for protocol in ("sticky", "cooperative-sticky"):
        assert java_metadata(protocol, SUBS, RACKS, None) == _metadata(protocol, SUBS, RACKS, None)


def test_unknown_protocol_is_refused() -> None:
    with pytest.raises(ValueError, match="range"):
        java_member_metadata("range", ["t"], None, None, None)


def test_default_topic_names_spread_java_hashes() -> None:
    names = topic_names(500)
    assert len(set(names)) == 500 and all(n.startswith("topic-") for n in names)
    assert distinct_partition_hashes(SHAPES["H-1M"].partitions) == 1_000_000
    numbered = SHAPES["H-1M-numbered"].partitions
    assert list(numbered) == topic_names(500, numbered=True)
    assert distinct_partition_hashes(numbered) == 21_330  # the figure measured in issue 28
    assert SHAPES["H-1M-numbered"].subscriptions().keys() == SHAPES["H-1M"].subscriptions().keys()


def test_summarise_keeps_the_cold_call_beside_the_best_warm_one() -> None:
    calls = [
        {"call": 0, "decode_s": 1.0, "assign_s": 2.0, "encode_s": 0.5, "cpu_s": 4.0, "gc_s": 1.0},
        {"call": 1, "decode_s": 0.2, "assign_s": 1.0, "encode_s": 0.1, "cpu_s": 1.5, "gc_s": 0.1},
        {"call": 2, "decode_s": 0.3, "assign_s": 0.8, "encode_s": 0.1, "cpu_s": 1.2, "gc_s": 0.0},
    ]
    got = summarise(calls)
    assert got["cold_s"] == pytest.approx(3.5) and got["cold_decode_s"] == 1.0
    assert got["warm_s"] == pytest.approx(1.2) and got["seconds"] == got["warm_s"]
    assert got["assign_s"] == 0.8 and got["cpu_s"] == 1.2 and got["calls"] == 3
    one = summarise(calls[:1])
    assert one["warm_s"] is None and one["seconds"] == one["cold_s"]


def _row(peer: str, source: str, seconds: float, **extra: object) -> dict[str, object]:
    row: dict[str, object] = {
        "shape": "H-1M-r6f2",
        "protocol": "sticky",
        "phase": "leave",
        "input": source,
        "peer": peer,
        "status": "ok",
        "calls": 3,
        "seconds": seconds,
        "warm_s": seconds,
        "cold_s": seconds * 2,
        "cpu_s": seconds,
        "gc_s": 0.01,
        "load_before": 1.0,
        "load_after": 1.5,
        "peak_mb": 100.0,
        "twice": 0,
        "invalid": 0,
        "unassigned": 0,
        "spread": 1,
        "moved": 0,
        "optimal": True,
        "cross_rack": 0,
    }
    row.update(extra)
    return row


def test_tables_carry_both_inputs_the_java_split_and_the_no_rack_ratio(
    capsys: pytest.CaptureFixture[str],
) -> None:
    split = {"decode_s": 1.0, "assign_s": 2.0, "encode_s": 1.0}
    cold = {"cold_decode_s": 3.0, "cold_assign_s": 4.0, "cold_encode_s": 1.0}
    rows = []
    for source in ("ours", "java"):
        rows += [
            _row("ours", source, 2.0, decode_s=0.75, assign_s=0.5, encode_s=0.5, describe_s=0.25),
            _row("ours-norack", source, 1.0),
            _row("franz", source, 3.0),
            _row("java", source, 4.0, **split, **cold),
            {**_row("kafka-python", source, 0), "status": "cut"},
        ]
    skipped = {**_row("java", "ours", 0), "shape": "NESTED-10k", "status": "skipped (cut on fresh)"}
    rows.append(skipped)
    print_tables(rows, ["ours", "franz", "java", "kafka-python"], {"kafka-python": 5.0})
    out = capsys.readouterr().out
    lines = out.splitlines()
    header = next(x for x in lines if x.startswith("shape") and "no-rack" in x).split()
    assert header == [
        "shape", "protocol", "phase", "input", "engine", "plain", "ours", "ref", "r-eng", "no-rack",
        "franz", "ratio", "java", "ratio", "kafka-python", "ratio",
    ]  # fmt: skip
    time_rows = [x.split() for x in lines if x.startswith("H-1M-r6f2") and "cut" in x]
    assert [r[3] for r in time_rows] == ["ours", "java"]
    # no ours-reference row: no ref figure, no ref engine figure
    assert [r[7:9] for r in time_rows] == [["-", "-"], ["-", "-"]]
    # franz against ours without racks (3 / 1), Java against ours (4 / 2)
    assert time_rows[0][10:14] == ["3.000", "3.0x", "4.000", "2.0x"]
    assert [r[4] for r in time_rows] == ["0.500", "0.500"]  # engine: the engine step of ours
    # plain: ours (the hooked call) without the metrics' description
    assert [r[5:7] for r in time_rows] == [["1.750", "2.000"], ["1.750", "2.000"]]
    assert "Java's split" in out and "c-asg" in out
    java_split = [x.split() for x in lines if x.startswith("H-1M-r6f2") and len(x.split()) == 13]
    warm, cold_call = ["1.000", "2.000", "1.000", "4.000"], ["3.000", "4.000", "1.000", "8.000"]
    assert java_split[0][4:] == [*warm, *cold_call, "4.0x"]
    assert "load average" in out and "1.0/1.5" in out
    assert "skipped (not run): java cut on fresh (1 rows)" in out
    assert any(x.split()[4:6] == ["ours-norack", "100"] for x in lines if "ours-norack" in x)


def test_engine_column_reads_an_earlier_runs_engine_rows(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A ``--json`` file from before our leader's split: the generator's ``engine`` rows."""
    rows = [{**_row("engine", "ours", 0), "engine_s": 0.25}, _row("ours", "ours", 2.0)]
    print_tables(rows, ["ours"], {})
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("H-1M-r6f2"))
    assert line.split()[4:7] == ["0.250", "-", "2.000"]  # no describe step: no plain figure
