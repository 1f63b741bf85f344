"""The leader's assignment, timed and described for :class:`~.recorder.RebalanceMetrics`.

One call for every client's hooks: the engine's plan and its encoding are timed apart (the
decode time is measured by the caller, who reads the members before asking its cluster about
their topics), the round is described by :func:`~.leader_round.leader_round`, and the bytes
are returned unchanged, so the assignment is exactly what ``DecodedGroup.assign`` returns.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping

from ..assignor.leader import DecodedGroup
from ..core.gc_pause import cyclic_gc_paused
from .leader_round import leader_round
from .recorder import RebalanceMetrics

__all__ = ["assign_observed"]


def assign_observed(
    metrics: RebalanceMetrics,
    group: DecodedGroup,
    partitions_per_topic: Mapping[str, int],
    partition_racks: Mapping[tuple[str, int], Iterable[str]] | None,
    *,
    decode_s: float,
) -> dict[str, bytes]:
    """``group.assign(...)``, recording the round on ``metrics`` (see the module docstring)."""
    started = time.perf_counter()
    dense = group.plan_dense(partitions_per_topic, partition_racks=partition_racks)
    planned = time.perf_counter()
    out = group.encode_dense(dense)
    encoded = time.perf_counter()
    with cyclic_gc_paused():  # as the leader's own steps: it builds a set per member
        round_ = leader_round(
            group.specs,
            len(group.unreadable),
            partitions_per_topic,
            dense.all_partitions(),  # the plan as tuples, for the description only
            partition_racks,
            decode_s=decode_s,
            engine_s=planned - started,
            encode_s=encoded - planned,
        )
    metrics.leader_assigned(round_)
    return out
