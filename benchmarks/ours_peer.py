"""Our leader as a peer process: its bytes path on the same input file as the others.

Usage: ``python benchmarks/ours_peer.py [--no-racks] PROTOCOL INPUT OUTPUT [CALLS [BUDGET_S]]``
(the call protocol: ``peer_calls.py``). Each call is :func:`leader_split`: the hooked leader's
call as ``install_hooks`` runs it (``read_group``, then
:func:`~kafka_sticky_plugin.metrics.observe.assign_observed`: the assignment plus the rebalance
metrics' description of the round), its steps timed apart as Java's and franz-go's calls are:
``decode_s`` (``read_group``: decode every member), ``assign_s`` (the engine,
``DecodedGroup.plan_dense``; the time table's ``engine`` column), ``encode_s``
(``encode_dense``: every assignment's bytes), ``describe_s`` (the metrics' description,
:func:`~kafka_sticky_plugin.metrics.leader_round`). The first three are the plain call
(``assign_from_bytes``, the table's ``plain`` column); all four the hooked one (its ``ours``
column). Replica racks, when the input has them, are read from cluster metadata as a
consumer's leader reads them (unless ``--no-racks``: then the leader is given none, as
franz-go on the racked shapes, the ``ours-norack`` column): the input's racks are put in a
real kafka-python ``ClusterMetadata`` untimed (``racked_metadata.py``; Java's peer likewise
builds its ``PartitionInfo`` lists untimed and reads their racks inside ``assign_s``), and
each call times ``racks_s`` (``leader_racks``: the racks and the placement from one walk over
the metadata, the walk a consumer without the hooks makes too, ``assign_cluster``) and
``placement_s`` (``RackTracker.remember``: what only a hooked leader adds, remembering the
placement), both only when some member has a rack. ``plain`` is then decode + racks + engine
+ encode, ``ours`` every step. Writes the assignment bytes of the last call.

Which implementations of the wire seam and of the engine's steps the calls ran is decided
once, at import, by ``kafka_sticky_plugin.codec.implementation`` and
``kafka_sticky_plugin.core.implementation`` (the compiled twin when it is installed, the
plain-Python references when it is not or when ``KAFKA_STICKY_PURE_PYTHON=1`` is set, as for
the ``ours-reference`` peer, the time table's ``ref`` column): the ``done`` line names them,
``implementation`` / ``engine_implementation`` (``compiled`` or ``reference``) and ``seam`` /
``engine_steps`` (their ``describe()``, with why), read from those modules in this process
after the calls.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from peer_calls import call_args, emit, run_calls
from peer_files import read_input, write_output
from racked_metadata import cluster_metadata

from kafka_sticky_plugin.assignor.leader import MemberMetadata, PartitionRacks, read_group
from kafka_sticky_plugin.assignor.rack_changes import RackTracker
from kafka_sticky_plugin.assignor.racks import leader_racks
from kafka_sticky_plugin.codec import implementation
from kafka_sticky_plugin.core import implementation as engine_implementation
from kafka_sticky_plugin.core.gc_pause import cyclic_gc_paused
from kafka_sticky_plugin.groups.assignor_names import assignor_class
from kafka_sticky_plugin.metrics import LeaderRound, RebalanceMetrics
from kafka_sticky_plugin.metrics.observe import assign_observed


class _Rounds(RebalanceMetrics):
    """The recorder of one call, keeping the round it was given (its steps' seconds)."""

    def __init__(self) -> None:
        super().__init__("bench")
        self.round: LeaderRound | None = None

    def leader_assigned(self, round_: LeaderRound) -> None:
        self.round = round_
        super().leader_assigned(round_)


def leader_split(
    protocol: str,
    partitions: Mapping[str, int],
    metadata: Mapping[str, bytes],
    racks: PartitionRacks | None,
    cluster: Any = None,
) -> tuple[dict[str, bytes], dict[str, float]]:
    """The hooked leader's call on ``metadata`` (``read_group``, then ``assign_observed`` as
    the kafka-python hooks call them, in one pause of the cyclic GC from the decode to the
    plan, the decoded group freed inside it): the bytes
    ``assign_from_bytes(partitions, metadata, racks)`` of ``protocol``'s assignor returns
    (``tests/test_bench_split.py``), with its four steps' seconds. ``encode_s`` includes
    freeing the decoded members (the hooks have freed them when they return), so the four
    add up to what one timer around the call reads. With a ``cluster`` (metadata), the
    racks are read from it instead of ``racks``, in two more steps, ``racks_s`` (the hooks'
    ``leader_racks``) and ``placement_s`` (the placement remembered), as
    ``assign_from_cluster`` runs them (only when some member has a rack)."""
    with cyclic_gc_paused():
        return _split(protocol, partitions, metadata, racks, cluster)


def _split(
    protocol: str,
    partitions: Mapping[str, int],
    metadata: Mapping[str, bytes],
    racks: PartitionRacks | None,
    cluster: Any,
) -> tuple[dict[str, bytes], dict[str, float]]:
    recorder = _Rounds()
    t0 = time.perf_counter()
    group = read_group(protocol, [MemberMetadata(m, data) for m, data in metadata.items()])
    decoded = time.perf_counter()
    steps: dict[str, float] = {}
    if cluster is not None:
        member_racks = [spec.rack for spec in group.specs]
        racks, placement = leader_racks(cluster, partitions, group.specs)
        t_racks = time.perf_counter()
        if any(member_racks):
            RackTracker().remember(placement, member_racks)
        steps = {"racks_s": t_racks - decoded, "placement_s": time.perf_counter() - t_racks}
    t1 = time.perf_counter()
    result = assign_observed(
        recorder, group, partitions, racks, decode_s=decoded - t0, racks_s=t1 - decoded
    )
    del group  # freed inside the timed region, as the hooks free it before they return
    t2 = time.perf_counter()
    round_ = recorder.round
    assert round_ is not None
    engine, describe = round_.engine_s, round_.describe_s
    return result, {
        "decode_s": decoded - t0,
        **steps,
        "assign_s": engine,
        "encode_s": t2 - t1 - engine - describe,
        "describe_s": describe,
    }


def main(argv: list[str]) -> int:
    no_racks = bool(argv) and argv[0] == "--no-racks"
    argv = argv[1:] if no_racks else argv
    protocol, source, target = argv[:3]
    calls, budget = call_args(argv)
    partitions, metadata, racks = read_input(Path(source))
    if no_racks:
        racks = None
    cluster = None if racks is None else cluster_metadata(partitions, racks)
    assignor = assignor_class(protocol)()
    leader_split(assignor.name, {"warm-up": 4}, {"w": assignor.metadata(["warm-up"])}, None)

    def call() -> tuple[dict[str, bytes], dict[str, float]]:
        return leader_split(assignor.name, partitions, metadata, None, cluster)

    result, done = run_calls(call, calls, budget)
    write_output(Path(target), result or {})
    emit(
        {
            "done": True,
            "racks": racks is not None,
            "calls": done,
            "implementation": implementation.IMPLEMENTATION,
            "seam": implementation.describe(),
            "engine_implementation": engine_implementation.IMPLEMENTATION,
            "engine_steps": engine_implementation.describe(),
        }
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
