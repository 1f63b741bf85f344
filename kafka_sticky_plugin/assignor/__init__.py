"""The client-free floor between the engine/codecs and the client adapters.

Everything a Kafka client adapter needs that does not depend on the client: no client import,
no I/O. Imports only :mod:`kafka_sticky_plugin.core`, :mod:`kafka_sticky_plugin.codec` and
:mod:`kafka_sticky_plugin.errors` (checked by ``tests/test_import_boundaries.py``).

- :mod:`.leader`: the leader's path, bytes (or decoded members) in, encoded assignments out;
  every member decoded once, which also yields the group's topics; a member that cannot be
  read gets an empty assignment, never an exception;
- :mod:`.strategies`: the registry of this package's strategies (name, protocols, engine);
- :mod:`.rebalance`: the one :class:`RebalanceProtocol` and KIP-429's selection rule;
- :mod:`.decisions`: what a member does before JoinGroup and after SyncGroup;
- :mod:`.contract`: what an adapter's assignor offers the hooks (:class:`HookableAssignor`).
"""

from __future__ import annotations

from .contract import BoundAssignor, HookableAssignor, bind_assignor
from .decisions import CompleteDecision, PrepareDecision, decide_complete, decide_prepare
from .leader import DecodedGroup, MemberMetadata, assign_group, member_spec, read_group
from .rebalance import RebalanceProtocol, select_protocol
from .strategies import COOPERATIVE_STICKY, STICKY, STRATEGIES, Strategy, strategy_named

__all__ = [
    "COOPERATIVE_STICKY",
    "STICKY",
    "STRATEGIES",
    "BoundAssignor",
    "CompleteDecision",
    "DecodedGroup",
    "HookableAssignor",
    "MemberMetadata",
    "PrepareDecision",
    "RebalanceProtocol",
    "Strategy",
    "assign_group",
    "bind_assignor",
    "decide_complete",
    "decide_prepare",
    "member_spec",
    "read_group",
    "select_protocol",
    "strategy_named",
]
