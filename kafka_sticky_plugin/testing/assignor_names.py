"""Assignors by short name, so a member configuration can cross a process boundary as text.

Names: ``sticky`` and ``cooperative-sticky`` are this package's assignors;
``range`` and ``roundrobin`` are kafka-python's; ``kafka-python:sticky`` and
``kafka-python:cooperative-sticky`` are kafka-python's own sticky implementations (baselines).

Every call of :func:`make_assignor` returns a new instance: two consumers never share
assignor state.
"""

from __future__ import annotations

import importlib
from typing import Any

from ..assignor.strategies import COOPERATIVE_STICKY, STICKY
from ..errors import ConfigurationError

__all__ = ["ASSIGNOR_NAMES", "make_assignor"]

ASSIGNOR_NAMES: dict[str, str] = {
    STICKY: "kafka_sticky_plugin:StickyAssignor",
    COOPERATIVE_STICKY: "kafka_sticky_plugin:CooperativeStickyAssignor",
    "range": "kafka.coordinator.assignors.range:RangePartitionAssignor",
    "roundrobin": "kafka.coordinator.assignors.roundrobin:RoundRobinPartitionAssignor",
    "kafka-python:sticky": (
        "kafka.coordinator.assignors.sticky.sticky_assignor:StickyPartitionAssignor"
    ),
    "kafka-python:cooperative-sticky": (
        "kafka.coordinator.assignors.cooperative_sticky:CooperativeStickyAssignor"
    ),
}


def make_assignor(name: str) -> Any:
    """A fresh assignor instance for ``name`` (see the module docstring)."""
    target = ASSIGNOR_NAMES.get(name)
    if target is None:
        raise ConfigurationError(f"unknown assignor {name!r}; known: {sorted(ASSIGNOR_NAMES)}")
    module_name, _, attribute = target.partition(":")
    factory = getattr(importlib.import_module(module_name), attribute)
    return factory()
