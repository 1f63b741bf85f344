"""The consumer-group part (``cgrp``) of librdkafka's statistics JSON, as typed values.

librdkafka emits its statistics every ``statistics.interval.ms`` as one JSON object string
(its STATISTICS.md); the ``cgrp`` object says what librdkafka itself saw of the group:

- ``rebalance_cnt``: rebalances (each assign or revoke), counted since the handle started;
- ``rebalance_age``: milliseconds since the last of them, at the moment of the statistics;
- ``assignment_size``: partitions in the current assignment;
- ``state`` / ``join_state``: the group handler's state (``"up"`` once it knows its
  coordinator) and join state (``"steady"`` between rebalances);
- ``rebalance_reason``: why the last rebalance happened, or ``""``.

Invariant: :func:`parse_group_stats` never raises; it returns ``None`` for anything that is
not a JSON object with a ``cgrp`` object holding the three integers (a producer's statistics,
a consumer's before it joins a group, malformed or truncated text). Strings default to ``""``.
Pure: no I/O, no client import.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

__all__ = ["RdkafkaGroupStats", "parse_group_stats"]


@dataclass(frozen=True)
class RdkafkaGroupStats:
    """One statistics emission's ``cgrp`` values (see the module docstring for meanings)."""

    rebalance_cnt: int
    rebalance_age_ms: int
    assignment_size: int
    state: str = ""
    join_state: str = ""
    rebalance_reason: str = ""


def _integer(group: dict[str, object], key: str) -> int | None:
    value = group.get(key)
    # bool is an int subclass; librdkafka never writes one here, so refuse it
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


def _text(group: dict[str, object], key: str) -> str:
    value = group.get(key)
    return value if isinstance(value, str) else ""


def parse_group_stats(text: str | bytes) -> RdkafkaGroupStats | None:
    """The ``cgrp`` values of one statistics JSON string, or ``None`` (see the invariant)."""
    try:
        document = json.loads(text)
    except (ValueError, TypeError, RecursionError):
        return None
    group = document.get("cgrp") if isinstance(document, dict) else None
    if not isinstance(group, dict):
        return None
    count = _integer(group, "rebalance_cnt")
    age = _integer(group, "rebalance_age")
    size = _integer(group, "assignment_size")
    if count is None or age is None or size is None:
        return None
    return RdkafkaGroupStats(
        rebalance_cnt=count,
        rebalance_age_ms=age,
        assignment_size=size,
        state=_text(group, "state"),
        join_state=_text(group, "join_state"),
        rebalance_reason=_text(group, "rebalance_reason"),
    )
