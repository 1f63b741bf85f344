"""A plain-text progress bar on stderr (no terminal control beyond carriage returns)."""

from __future__ import annotations

import sys
import time
from typing import TextIO

__all__ = ["ProgressBar"]


class ProgressBar:
    """``label [#####.....] done/total  elapsed``; prints a new state at most once a second."""

    def __init__(
        self,
        label: str,
        *,
        unit: str = "tasks",
        enabled: bool = True,
        width: int = 30,
        stream: TextIO | None = None,
    ) -> None:
        self.label = label
        self.unit = unit
        self.enabled = enabled
        self.width = width
        self.stream = stream if stream is not None else sys.stderr
        self.start = time.perf_counter()
        self.last = ""
        self.last_time = 0.0

    def render(self, done: int, total: int) -> str:
        total = max(total, 1)
        done = max(0, min(done, total))
        filled = self.width * done // total
        elapsed = time.perf_counter() - self.start
        bar = "#" * filled + "." * (self.width - filled)
        return f"{self.label} [{bar}] {done}/{total} {self.unit}  {elapsed:6.1f} s"

    def update(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        if now - self.last_time < 1.0:
            return
        line = self.render(done, total)
        if line != self.last:
            self.last, self.last_time = line, now
            self.stream.write("\r" + line)
            self.stream.flush()

    def finish(self, total: int) -> None:
        if self.enabled:
            self.stream.write("\r" + self.render(total, total) + "\n")
            self.stream.flush()
