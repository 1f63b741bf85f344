"""The leader's assignment, timed and described for :class:`~.recorder.RebalanceMetrics`.

One call for every client's hooks: the engine's plan, its encoding and the round's
description (:func:`~.leader_round.leader_round`, read from the engine's dense plan) are
timed apart, the decode time and the replica racks' read time are measured by the caller
(who reads the members before asking its cluster about their topics and racks), and the
bytes are returned unchanged, so the assignment is exactly what ``DecodedGroup.assign``
returns. The cyclic garbage collector is paused over
the three steps, as ``DecodedGroup.assign`` pauses it over its two.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from ..assignor.leader import DecodedGroup
from ..assignor.rack_changes import RackTracker
from ..assignor.racks import leader_racks
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
    racks_s: float = 0.0,
) -> dict[str, bytes]:
    """``group.assign(...)``, recording the round on ``metrics`` (see the module docstring);
    ``racks_s``: the caller's time reading ``partition_racks`` from its cluster metadata."""
    with cyclic_gc_paused():
        started = time.perf_counter()
        dense = group.plan_dense(partitions_per_topic, partition_racks=partition_racks)
        planned = time.perf_counter()
        out = group.encode_dense(dense)
        encoded = time.perf_counter()
        round_ = leader_round(
            dense,
            len(group.specs),
            len(group.unreadable),
            partition_racks,
            decode_s=decode_s,
            engine_s=planned - started,
            encode_s=encoded - planned,
        )
        del dense  # freed before the collector comes back (see gc_pause's docstring)
        described = time.perf_counter() - encoded
        metrics.leader_assigned(replace(round_, describe_s=described, racks_s=racks_s))
    return out


def assign_from_cluster(
    metrics: RebalanceMetrics,
    tracker: RackTracker,
    cluster: Any,
    group: DecodedGroup,
    partitions_per_topic: Mapping[str, int],
    *,
    decode_s: float,
) -> dict[str, bytes]:
    """A hooked leader's round once its members are decoded: the replica racks read from the
    client's ``cluster`` metadata (only when some member has a rack,
    :func:`~..assignor.racks.leader_racks`), the placement remembered on ``tracker`` for
    KIP-881's rack-change check, then :func:`assign_observed`, whose latency includes the
    racks' read as Java's ``assign()`` includes reading its ``Cluster``."""
    started = time.perf_counter()
    racks, placement = leader_racks(cluster, partitions_per_topic, group.specs)
    racks_s = time.perf_counter() - started
    tracker.remember(placement, [spec.rack for spec in group.specs])
    return assign_observed(
        metrics, group, partitions_per_topic, racks, decode_s=decode_s, racks_s=racks_s
    )
