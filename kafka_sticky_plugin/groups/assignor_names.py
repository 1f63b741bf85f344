"""Assignors by short name and client, so a member configuration can cross a process boundary
as text.

Names, for a kafka-python or an aiokafka member:

- this package's strategies (:data:`~kafka_sticky_plugin.assignor.strategies.STRATEGIES`, the
  one registry; ``sticky`` and ``cooperative-sticky``): the client's face's assignor class
  (:data:`ASSIGNOR_CLASSES`);
- ``range`` and ``roundrobin``: the client's own assignors;
- kafka-python only: ``kafka-python-sticky`` and ``kafka-python-cooperative-sticky``,
  kafka-python's own sticky implementations (the baselines, spelled as the simulator spells
  them); aiokafka only: ``aiokafka-sticky``, aiokafka's own (eager) sticky assignor, for a
  member without the hooks.

Every call of :func:`make_assignor` returns a new instance: two consumers never share
assignor state.
"""

from __future__ import annotations

import importlib
from typing import Any

from ..assignor.strategies import STRATEGIES
from ..errors import ConfigurationError

__all__ = ["ASSIGNOR_CLASSES", "ASSIGNOR_NAMES", "FACES", "assignor_class", "make_assignor"]

#: Strategy name -> the class that implements it in every client's face (the registry's).
ASSIGNOR_CLASSES: dict[str, str] = {name: s.class_name for name, s in STRATEGIES.items()}

#: Client -> the public module (face) holding its assignor classes.
FACES: dict[str, str] = {
    "kafka-python": "kafka_sticky_plugin",
    "aiokafka": "kafka_sticky_plugin.aiokafka",
}

#: Client -> its own assignors, by name.
_CLIENT_ASSIGNORS: dict[str, dict[str, str]] = {
    "kafka-python": {
        "range": "kafka.coordinator.assignors.range:RangePartitionAssignor",
        "roundrobin": "kafka.coordinator.assignors.roundrobin:RoundRobinPartitionAssignor",
        "kafka-python-sticky": (
            "kafka.coordinator.assignors.sticky.sticky_assignor:StickyPartitionAssignor"
        ),
        "kafka-python-cooperative-sticky": (
            "kafka.coordinator.assignors.cooperative_sticky:CooperativeStickyAssignor"
        ),
    },
    "aiokafka": {
        "range": "aiokafka.coordinator.assignors.range:RangePartitionAssignor",
        "roundrobin": "aiokafka.coordinator.assignors.roundrobin:RoundRobinPartitionAssignor",
        "aiokafka-sticky": (
            "aiokafka.coordinator.assignors.sticky.sticky_assignor:StickyPartitionAssignor"
        ),
    },
}

#: Client -> name -> ``module:attribute`` of the assignor class a member configures.
ASSIGNOR_NAMES: dict[str, dict[str, str]] = {
    client: {
        **{name: f"{face}:{ASSIGNOR_CLASSES[name]}" for name in STRATEGIES},
        **_CLIENT_ASSIGNORS[client],
    }
    for client, face in FACES.items()
}


def assignor_class(name: str, client: str = "kafka-python") -> Any:
    """The assignor class ``client`` configures for ``name`` (see the module docstring)."""
    names = ASSIGNOR_NAMES.get(client)
    if names is None:
        raise ConfigurationError(f"no assignor names for client {client!r}; known: {list(FACES)}")
    target = names.get(name)
    if target is None:
        raise ConfigurationError(f"unknown {client} assignor {name!r}; known: {sorted(names)}")
    module_name, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module_name), attribute)


def make_assignor(name: str, client: str = "kafka-python") -> Any:
    """A fresh assignor instance for ``name`` on ``client`` (see the module docstring)."""
    return assignor_class(name, client)()
