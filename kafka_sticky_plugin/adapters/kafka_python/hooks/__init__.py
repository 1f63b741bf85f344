"""Coordinator hooks for every supported kafka-python version (one module per family).

- :mod:`.versions`: which client is installed and which family drives it;
- :mod:`.members`, :mod:`.listener`, :mod:`.common`: shared plumbing;
- the client-free parts they act on live in :mod:`kafka_sticky_plugin.assignor` (protocol
  selection, rebalance decisions, the assignor contract, the leader); they are re-exported
  here for compatibility;
- :mod:`.v2` (kafka-python 2.0.2 / 2.2.x / 2.3.x, kafka-python-ng 2.2.x), :mod:`.v3` (3.0.x).

The public entry point is :func:`kafka_sticky_plugin.hooks.install_hooks`.
"""

from __future__ import annotations

from ....assignor.decisions import (
    CompleteDecision,
    PrepareDecision,
    decide_complete,
    decide_prepare,
)
from ....assignor.rebalance import RebalanceProtocol, select_protocol
from .versions import SUPPORTED_CLIENTS, ClientVersion, classify, detect_client

__all__ = [
    "SUPPORTED_CLIENTS",
    "ClientVersion",
    "CompleteDecision",
    "PrepareDecision",
    "RebalanceProtocol",
    "classify",
    "decide_complete",
    "decide_prepare",
    "detect_client",
    "select_protocol",
]
