"""A watch on the cyclic collector: did a collection start while a tracked object lived?

Inside ``with CollectionWatch() as watch:`` the collector's first threshold is 1, so any
allocation with the collector running starts a collection; ``watch.track(obj)`` follows
``obj`` by a weak reference and ``watch.scanned`` lists the generation of every collection
that started while some tracked object was alive. Thresholds and callbacks are restored on
exit.
"""

from __future__ import annotations

import gc
import weakref
from types import TracebackType
from typing import Any


class CollectionWatch:
    """See the module docstring."""

    def __init__(self) -> None:
        self.tracked: list[weakref.ref[Any]] = []
        self.scanned: list[int] = []
        self._thresholds = gc.get_threshold()

    def track(self, obj: Any) -> Any:
        """Follow ``obj`` (returned unchanged)."""
        self.tracked.append(weakref.ref(obj))
        return obj

    def alive(self) -> bool:
        """Whether some tracked object is still alive."""
        return any(ref() is not None for ref in self.tracked)

    def _started(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start" and self.alive():
            self.scanned.append(info["generation"])

    def __enter__(self) -> CollectionWatch:
        self._thresholds = gc.get_threshold()
        gc.callbacks.append(self._started)
        gc.set_threshold(1)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        gc.set_threshold(*self._thresholds)
        gc.callbacks.remove(self._started)
