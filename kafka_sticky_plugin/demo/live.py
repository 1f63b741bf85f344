"""A live view of partition ownership: one plain text line a second (works without a TTY).

Each line shows the elapsed time, the newest generation, every live member's partitions as
compact ranges (``m1: 0-5,12``), how many partitions nobody owns right now, and how many
records were delivered so far. Lines repeat only when something changed or every 5 s.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable

from ..groups.analysis import current_ownership
from ..groups.runner import ConsumerGroupRunner

__all__ = ["LiveView", "compact_ranges"]


def compact_ranges(numbers: Iterable[int]) -> str:
    """``[0, 1, 2, 5, 7, 8]`` -> ``"0-2,5,7-8"`` ('-' for none)."""
    values = sorted(set(numbers))
    if not values:
        return "-"
    parts: list[str] = []
    start = prev = values[0]
    for value in values[1:]:
        if value == prev + 1:
            prev = value
            continue
        parts.append(f"{start}-{prev}" if prev > start else f"{start}")
        start = prev = value
    parts.append(f"{start}-{prev}" if prev > start else f"{start}")
    return ",".join(parts)


class LiveView:
    """Prints the ownership line of one group from a background thread while active."""

    def __init__(
        self,
        runner: ConsumerGroupRunner,
        label: str,
        say: Callable[[str], None] = print,
        interval_s: float = 1.0,
    ) -> None:
        self._runner = runner
        self._label = label
        self._say = say
        self._interval = interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"live-{label}", daemon=True)
        self._t0 = time.monotonic()

    def line(self) -> str:
        """The current ownership line."""
        events = self._runner.log.events()
        owned = current_ownership(events)
        live = self._runner.live_keys()
        generation = max((e.generation for e in events if e.kind == "generation"), default=-1)
        owners: list[str] = []
        covered: set[tuple[str, int]] = set()
        for name in sorted(live):
            parts = owned.get(live[name], ())
            covered.update(parts)
            owners.append(f"{name}: {compact_ranges(p for _, p in parts)}")
        unowned = len(self._runner.all_partitions() - covered)
        return (
            f"[{self._label}] gen {generation:>2} | "
            + " | ".join(owners)
            + f" | unowned {unowned:>2} | delivered {self._runner.log.delivery_count()}"
        )

    def _run(self) -> None:
        last = ""
        last_printed = 0.0
        while not self._stop.wait(self._interval):
            text = self.line()
            now = time.monotonic()
            if text.split(" | delivered")[0] != last or now - last_printed >= 5.0:
                self._say(f"{now - self._t0:6.1f}s {text}")
                last = text.split(" | delivered")[0]
                last_printed = now

    def __enter__(self) -> LiveView:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join(5)
