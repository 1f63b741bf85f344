"""The warm-call rule of ``benchmarks/peer_calls.py`` (the Go and Java peers follow the same
rule): the cold call and one warm call always run, then further calls only while the calls
so far took less than the budget."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from peer_calls import run_calls  # noqa: E402


def _counting(seconds: float) -> tuple[list[int], Callable[[], tuple[int, dict[str, float]]]]:
    made: list[int] = []

    def call() -> tuple[int, dict[str, float]]:
        made.append(len(made))
        return len(made), {"decode_s": seconds / 2, "assign_s": seconds / 2}

    return made, call


@pytest.mark.parametrize(
    ("seconds", "calls", "budget", "expected"),
    [
        (5.0, 5, 1.0, 2),  # a slow call: cold and one warm, however long they take
        (0.4, 5, 1.0, 3),  # 0.4 + 0.4 < 1.0: a third call starts, then 1.2 s stop it
        (0.1, 5, 1.0, 5),  # fast: every call
        (5.0, 5, None, 5),  # no budget: every call
        (5.0, 1, 1.0, 1),  # one call asked: one made
    ],
)
def test_cold_and_one_warm_call_always_run(
    seconds: float,
    calls: int,
    budget: float | None,
    expected: int,
    capsys: pytest.CaptureFixture[str],
) -> None:
    made, call = _counting(seconds)
    result, done = run_calls(call, calls, budget)
    assert done == expected == len(made)
    assert result == expected  # the last call's result
    lines = capsys.readouterr().out.splitlines()
    assert sum('"begin"' in line for line in lines) == expected
