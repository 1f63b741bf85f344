"""``make bench-scale`` (issue 38): argument checks (no broker is started for bad input) and
the table's cells, without a broker."""

from __future__ import annotations

import pytest

from testlab.bench_scale import ScaleRow, format_table, main, parse_largest, run_sizes
from testlab.rolling_compare import PeerRow, choose_peers


@pytest.mark.parametrize(
    "argv",
    [
        ["--sizes", "1"],
        ["--sizes", "ten"],
        ["--sizes", "10", "--restarts", "11"],
        ["--sizes", "10", "--per-process", "0"],
        ["--peers", "nobody/nothing"],
        ["--rate", "0"],
        ["--largest", "kafka=100"],
        ["--largest", "kafka-python"],
        ["--largest", "aiokafka=1"],
    ],
)
def test_bad_arguments_exit_2_before_any_broker(argv: list[str], tmp_path: object) -> None:
    assert main([*argv, "--out", str(tmp_path)]) == 2


def _row(members: int, assign: float | None) -> ScaleRow:
    peer = PeerRow(
        peer="kafka-python (hooked), ours",
        client="kafka-python",
        assignor="cooperative-sticky",
        protocol="classic",
        bounces=2,
        paused_ps_per_bounce=5.5,
        paused_leave_ps_per_bounce=2.0,
        paused_join_ps_per_bounce=3.5,
        worst_bounce_paused_ps=6.0,
        recovery_s_mean=1.0,
        recovery_s_worst=1.5,
        rounds_per_bounce=3.0,
        handovers_per_bounce=16.0,
        rebalancing_s_per_bounce=2.0,
        consumed=100,
        duplicates=0,
        lost=0,
        overlaps=0,
        problems=(),
        paused_kept_ps_per_bounce=0.5,
        paused_moved_ps_per_bounce=5.0,
        unable_s_per_member_bounce=0.25,
    )
    return ScaleRow(members, 48, peer, 9.0, 1.04, assign, assign, 16.5)


def test_one_line_per_size_and_unknown_figures_say_so() -> None:
    text = format_table([_row(10, 1.7), _row(50, None)])
    lines = text.splitlines()
    assert len(lines) == 4  # header, rule, two rows
    assert lines[2].startswith("| 10 ") and lines[3].startswith("| 50 ")
    assert "n/a / n/a" in lines[3] and "1.7 / 1.7" in lines[2]
    # no child processes: no memory per member; no kill step: its four cells
    assert lines[2].count("n/a") == 1 + 4
    cells = [c.strip() for c in lines[2].split("|")]
    assert "0.5 + 5.0" in cells and "0.25" in cells  # kept + moved, unable to consume


def test_largest_names_clients_by_their_peer_key() -> None:
    assert parse_largest("") == {}
    assert parse_largest("kafka-python=100, java=150") == {"kafka-python": 100, "java": 150}
    with pytest.raises(ValueError, match=r"'java-4\.4\.0=100'.*aiokafka, confluent, java"):
        parse_largest("java-4.4.0=100")


def test_rows_above_a_clients_cap_are_skipped_with_a_line_before_any_broker() -> None:
    """Every row here is above its cap, so no run starts (the bootstrap address is never
    contacted); each skipped row is said once, naming the size, the peer and the cap."""
    said: list[str] = []
    peers = choose_peers("kafka-python/cooperative-sticky,aiokafka/sticky")
    rows, skipped = run_sizes(
        "127.0.0.1:1",
        [200],
        peers,
        topics=1,
        partitions_per_topic=1,
        rate_per_s=1.0,
        per_process=10,
        restarts=1,
        largest={"kafka-python": 100, "aiokafka": 150},
        say=said.append,
    )
    assert rows == []
    assert skipped == said
    assert skipped == [
        "200 members, kafka-python/cooperative-sticky (classic) skipped: --largest"
        " kafka-python=100 (more of its members than this machine holds)",
        "200 members, aiokafka/sticky (classic) skipped: --largest aiokafka=150"
        " (more of its members than this machine holds)",
    ]
