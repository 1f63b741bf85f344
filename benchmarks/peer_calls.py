"""The call protocol every ``make bench`` peer follows (Python side; the Go and Java peers
print the same lines).

A peer is run as ``PEER PROTOCOL INPUT OUTPUT [CALLS [BUDGET_S]]``. It reads INPUT, then makes
up to CALLS calls in the same process (the first is the cold call, the later ones warm);
after the first, no further call starts once the calls so far took BUDGET_S seconds. Around
each call it prints, one JSON object a line, flushed:

- ``{"begin": i}`` right before call ``i``: the orchestrator's time limit runs from this line
  to the next, so reading the input, start-up and writing OUTPUT are never cut;
- ``{"call": i, ...}`` right after it: the call's seconds (``total_s``, or ``decode_s``,
  ``assign_s``, ``encode_s``), ``cpu_s`` (process CPU seconds over the call) and ``gc_s``
  (for Python: wall seconds inside the cyclic garbage collector, from ``gc.callbacks``);
- ``{"done": true, ...}`` after OUTPUT (the last call's assignments) is written; its other
  fields go into the peer's row as they are (``ours_peer.py``'s: ``racks``, ``calls`` and
  which implementation of the wire seam the calls ran, ``implementation`` and ``seam``).
"""

from __future__ import annotations

import gc
import json
import time
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


class GcClock:
    """Wall seconds spent in the cyclic garbage collector while installed."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.seconds += time.perf_counter() - self._started

    def __enter__(self) -> GcClock:
        gc.callbacks.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self)


def emit(row: dict[str, object]) -> None:
    print(json.dumps(row), flush=True)


def run_calls(
    call: Callable[[], tuple[T, dict[str, float]]], calls: int, budget: float | None
) -> tuple[T | None, int]:
    """Make the calls (``call`` returns its result and its timed parts in seconds); return
    the last result and how many calls were made. The first two (the cold call and one warm
    one) always run; after them no further call starts once the calls so far took ``budget``
    seconds (as the franz-go and Java peers do)."""
    result: T | None = None
    spent = 0.0
    done = 0
    while done < calls and (done < 2 or budget is None or spent < budget):
        result = None
        gc.collect()
        emit({"begin": done})
        with GcClock() as clock:
            cpu0 = time.process_time()
            result, parts = call()
            cpu = time.process_time() - cpu0
        spent += sum(parts.values())
        emit({"call": done, **parts, "cpu_s": cpu, "gc_s": clock.seconds})
        done += 1
    return result, done


def call_args(argv: list[str]) -> tuple[int, float | None]:
    """CALLS and BUDGET_S from ``argv[3:]`` (defaults: one call, no budget)."""
    calls = int(argv[3]) if len(argv) > 3 else 1
    budget = float(argv[4]) if len(argv) > 4 else None
    return calls, budget
