"""What one rebalance cost, summed over its rounds (filled by :mod:`.rebalance` for the
classic protocol and by :mod:`.reconcile` for KIP-848)."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["RebalanceOutcome"]


@dataclass
class RebalanceOutcome:
    """What one rebalance cost (summed over its rounds)."""

    rounds: int = 0
    revoked: int = 0
    paused_partition_rounds: int = 0
    compute_s: float = 0.0
    max_compute_s: float = 0.0
    violations: int = 0
    messages: list[str] = field(default_factory=list)
    converged: bool = True
