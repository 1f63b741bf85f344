"""testlab.member_cpu's arithmetic: CPU seconds from a /proc stat line, the per-row figures
and the table; the measurement itself runs against Apache Kafka (make bench-member-cpu)."""

from __future__ import annotations

import pytest

from testlab.member_cpu import CpuRow, main, process_cpu_s, table
from testlab.rolling_compare import PEERS


def test_cpu_seconds_read_after_a_command_name_with_spaces_and_parentheses() -> None:
    # pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
    line = "4242 (python (x) y) S 1 2 3 4 5 6 7 8 9 10 250 150 0 0 20 0 3"
    assert process_cpu_s(line, 100) == pytest.approx(4.0)
    assert process_cpu_s(line, 50) == pytest.approx(8.0)


def test_a_row_says_the_cores_a_group_needs_and_how_many_fit_on_two() -> None:
    row = CpuRow(PEERS[1], members=200, cpu_ms_per_s_per_member=25.0, load_average=3.0)
    assert row.cores_needed == pytest.approx(5.0)
    assert row.members_on_two_cores == 80
    assert CpuRow(PEERS[1], 10, 0.0, 0.0).members_on_two_cores == 0


def test_the_table_has_one_line_per_row_with_its_figures() -> None:
    rows = [CpuRow(PEERS[1], 20, 29.3, 2.5), CpuRow(PEERS[4], 20, 5.0, 10.5)]
    lines = table(rows).splitlines()
    assert len(lines) == 4
    assert lines[2].startswith("| kafka-python (hooked), ours: cooperative-sticky | classic | 20 |")
    assert "| 29.3 | 0.59 | 68 | 2.5 |" in lines[2]
    assert "| 5.0 | 0.10 | 400 | 10.5 |" in lines[3]


@pytest.mark.parametrize(
    "argv",
    [["--peers", "nobody/none"], ["--members", "0"], ["--window-s", "0"]],
)
def test_bad_arguments_exit_2_before_any_broker(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    assert capsys.readouterr().out.strip()
