"""The rolling-restart comparison without a broker: per-bounce figures on hand-made ownership
histories, the table, the speed-target verdicts, the report files and argument refusals."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from kafka_sticky_plugin.demo.bounce_metrics import (
    bounce_figures,
    bounce_windows,
    gaps,
    handovers,
)
from kafka_sticky_plugin.errors import ConfigurationError
from kafka_sticky_plugin.groups.analysis import Interval
from kafka_sticky_plugin.groups.events import Delivery
from testlab.rolling_compare import (
    PEERS,
    PeerRow,
    choose_peers,
    format_markdown,
    main,
    targets,
    write_report,
)

P0, P1 = ("t", 0), ("t", 1)


def delivery(t: float, partition: int) -> Delivery:
    return Delivery(
        t=t, member="m", incarnation=0, topic="t", partition=partition, offset=0, sequence=0
    )


def test_windows_tile_the_rolling_restart() -> None:
    assert bounce_windows([1.0, 4.0, 9.0], 12.0) == [(1.0, 4.0), (4.0, 9.0), (9.0, 12.0)]
    assert bounce_windows([], 5.0) == []


def test_gaps_are_the_uncovered_parts_of_the_window() -> None:
    intervals = [
        Interval("a#0", P0, 0.0, 2.0),
        Interval("b#0", P0, 3.0, 4.5),
        Interval("c#0", P0, 4.0, 6.0),
    ]
    assert gaps(intervals, P0, 1.0, 8.0) == [(2.0, 3.0), (6.0, 8.0)]
    assert gaps(intervals, P1, 1.0, 8.0) == [(1.0, 8.0)]


def test_handovers_count_owner_changes_not_returns_to_the_same_consumer() -> None:
    intervals = [
        Interval("a#0", P0, 0.0, 2.0),
        Interval("b#0", P0, 3.0, 5.0),  # handed over in the window
        Interval("c#0", P1, 0.0, 2.5),
        Interval("c#0", P1, 2.7, 9.0),  # eager: revoked and given back, paused but not moved
    ]
    assert handovers(intervals, 1.0, 6.0) == 1
    assert handovers(intervals, 4.0, 6.0) == 0


def test_bounce_figures_pause_recovery_and_handovers() -> None:
    intervals = [
        Interval("a#0", P0, 0.0, 2.0),
        Interval("b#0", P0, 3.0, 10.0),
        Interval("c#0", P1, 0.0, 10.0),
    ]
    deliveries = [delivery(1.5, 0), delivery(3.4, 0), delivery(3.9, 0), delivery(2.0, 1)]
    figures = bounce_figures(intervals, deliveries, [P0, P1], 1.0, 6.0)
    assert figures.paused_partition_s == pytest.approx(1.0)
    assert figures.recovery_s == pytest.approx(2.4)  # first delivery after the gap, at 3.4
    assert figures.handovers == 1


def test_recovery_is_zero_without_a_pause_and_skips_partitions_with_nothing_to_deliver() -> None:
    steady = [Interval("a#0", P0, 0.0, 10.0)]
    assert bounce_figures(steady, [], [P0], 1.0, 6.0).recovery_s == 0.0
    paused = [
        Interval("a#0", P0, 0.0, 2.0),
        Interval("b#0", P0, 3.0, 10.0),
        Interval("a#0", P1, 0.0, 2.0),
        Interval("b#0", P1, 4.0, 10.0),
    ]
    # P1 was paused longer but delivered nothing afterwards: only P0's recovery counts.
    figures = bounce_figures(paused, [delivery(1.5, 0), delivery(3.5, 0)], [P0, P1], 1.0, 6.0)
    assert figures.recovery_s == pytest.approx(2.5)
    assert figures.paused_partition_s == pytest.approx(3.0)


def test_peer_choice_and_refusal() -> None:
    assert [p.key for p in choose_peers("java/uniform")] == ["java/uniform"]
    assert choose_peers("all") == list(PEERS)
    with pytest.raises(ConfigurationError, match="unknown peer nope"):
        choose_peers("nope,java/uniform")
    assert len({(p.key, p.protocol) for p in PEERS}) == len(PEERS)


def row(peer: str, client: str, assignor: str, protocol: str, paused: float) -> PeerRow:
    return PeerRow(
        peer=peer,
        client=client,
        assignor=assignor,
        protocol=protocol,
        bounces=6,
        paused_ps_per_bounce=paused,
        paused_leave_ps_per_bounce=paused / 2,
        paused_join_ps_per_bounce=None,
        worst_bounce_paused_ps=2.0,
        recovery_s_mean=None,
        recovery_s_worst=None,
        rounds_per_bounce=None,
        handovers_per_bounce=4.0,
        rebalancing_s_per_bounce=2.0,
        consumed=10,
        duplicates=1,
        lost=0,
        overlaps=0,
        problems=(),
    )


def test_table_has_a_row_per_peer_and_says_n_a_for_unknown_figures() -> None:
    lines = format_markdown([row("x", "confluent", "uniform", "consumer", 1.25)]).splitlines()
    assert len(lines) == 3
    assert "consumer (KIP-848)" in lines[2] and "n/a / n/a" in lines[2] and "1.2" in lines[2]
    assert "0.6 + n/a" in lines[2]
    assert lines[2].rstrip(" |").endswith("n/a")  # heartbeats: not a hooked Python member
    hooked = replace(
        row("y", "aiokafka", "cooperative-sticky", "classic", 1.0),
        heartbeats_per_member_s=2.5,
        prompt_heartbeat_share=0.4,
    )
    assert "2.50 (40%)" in format_markdown([hooked]).splitlines()[2]


def test_speed_targets_compare_ours_with_java_classic_and_the_best_kip848_row() -> None:
    rows = [
        row("kafka-python (hooked), ours", "kafka-python", "cooperative-sticky", "classic", 3.0),
        row("Java classic", "java-4.4.0", "cooperative-sticky", "classic", 2.0),
        row("confluent KIP-848", "confluent", "uniform", "consumer", 2.5),
        row("Java KIP-848", "java-4.4.0", "uniform", "consumer", 1.5),
    ]
    verdicts = targets(rows)
    assert verdicts == [
        "kafka-python (hooked), ours cooperative-sticky vs Java classic: 1.50x paused p*s"
        " per bounce (target <= 1.0x: missed)",
        "kafka-python (hooked), ours cooperative-sticky vs Java KIP-848: 2.00x paused p*s"
        " per bounce (target <= 1.5x: missed)",
    ]


def test_report_is_written_as_markdown_and_json(tmp_path: Path) -> None:
    rows = [row("x", "confluent", "uniform", "consumer", 1.0)]
    text = write_report(tmp_path, "heading", rows, ["java/uniform skipped: no java"], {"m": 6})
    assert (tmp_path / "rolling-compare.md").read_text(encoding="utf-8") == text + "\n"
    document = json.loads((tmp_path / "rolling-compare.json").read_text(encoding="utf-8"))
    assert document["m"] == 6 and document["skipped"] == ["java/uniform skipped: no java"]
    assert [r["peer"] for r in document["rows"]] == ["x"]


@pytest.mark.parametrize(
    "argv",
    [
        ["--members", "1"],
        ["--members", "6", "--partitions", "4"],
        ["--peers", "nope"],
        ["--heartbeat-ms", "6000"],
        ["--idle-s", "-1"],
    ],
)
def test_bad_arguments_exit_2_before_starting_a_broker(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    assert len(capsys.readouterr().out.strip().splitlines()) == 1
