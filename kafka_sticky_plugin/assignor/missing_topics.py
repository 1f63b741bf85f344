"""A member's subscribed topics the cluster does not have: said once per change, early.

Both clients keep asking for a subscribed topic that does not exist and log their own line at
every metadata refresh (kafka-python an ERROR without end, aiokafka nothing until ``start()``
gives up after ``request_timeout_ms``). The hooks say it once per member, in one WARNING line
naming the topics and what it means for the member, and one INFO line when they exist.

Pure: :meth:`MissingTopics.observe` takes what the member asked the metadata for, what the
response had and what it refused (a refused topic is :mod:`.authorization_advice`'s line,
not this one) and returns the ``(logging level, line)`` pairs to log. A topic newly absent is
said only when a second response in a row lacks it too (``confirmed`` says the caller checked
twice already): a topic being auto-created may be absent from one response.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

__all__ = ["MissingTopics"]


def _names(topics: Iterable[str]) -> str:
    return ", ".join(repr(t) for t in sorted(topics))


class MissingTopics:
    """One member's view (see the module docstring). Invariant: ``missing`` is the set last
    said; each change of it is one WARNING line (topics missing) or one INFO line (they
    exist now), never one per metadata response."""

    def __init__(self, group_id: str) -> None:
        self.group_id = group_id
        self.missing: frozenset[str] = frozenset()
        self._pending: frozenset[str] | None = None

    def observe(
        self,
        asked: Iterable[str],
        present: Iterable[str],
        refused: Iterable[str] = (),
        *,
        confirmed: bool = False,
    ) -> list[tuple[int, str]]:
        """The lines to log for this metadata response (see the module docstring)."""
        absent = frozenset(asked) - frozenset(present) - frozenset(refused)
        if absent == self.missing:
            self._pending = None
            return []
        if absent - self.missing and not confirmed and absent != self._pending:
            self._pending = absent
            return []
        self._pending = None
        appeared = self.missing - absent
        self.missing = absent
        lines: list[tuple[int, str]] = []
        if absent:
            lines.append(
                (
                    logging.WARNING,
                    f"group {self.group_id}: subscribed topic(s) {_names(absent)} do not exist"
                    " on the cluster: this member gets none of their partitions until they are"
                    " created (the client repeats its own line at each metadata refresh)",
                )
            )
        if appeared:
            lines.append(
                (logging.INFO, f"group {self.group_id}: topic(s) {_names(appeared)} exist now")
            )
        return lines
