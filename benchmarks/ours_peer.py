"""Our leader as a peer process: its bytes path on the same input file as the others.

Usage: ``python benchmarks/ours_peer.py [--no-racks] PROTOCOL INPUT OUTPUT [CALLS [BUDGET_S]]``
(the call protocol: ``peer_calls.py``). Each call is :func:`leader_split`: the steps of
``assign_from_bytes`` (``assign_group``) one by one, timed apart as Java's and franz-go's
calls are: ``decode_s`` (``read_group``: decode every member), ``assign_s`` (the engine,
``DecodedGroup.plan``; the time table's ``engine`` column), ``encode_s`` (``encode``: every
assignment's bytes). Replica racks are passed when the input has them, unless
``--no-racks``: then the leader is given none, as franz-go on the racked shapes (the
``ours-norack`` column). Writes the assignment bytes of the last call.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from peer_calls import call_args, emit, run_calls
from peer_files import read_input, write_output

from kafka_sticky_plugin.assignor.leader import MemberMetadata, PartitionRacks, read_group
from kafka_sticky_plugin.core.gc_pause import cyclic_gc_paused
from kafka_sticky_plugin.groups.assignor_names import assignor_class


def leader_split(
    protocol: str,
    partitions: Mapping[str, int],
    metadata: Mapping[str, bytes],
    racks: PartitionRacks | None,
) -> tuple[dict[str, bytes], dict[str, float]]:
    """``assign_from_bytes(partitions, metadata, racks)`` of ``protocol``'s assignor, the
    same bytes out (``tests/test_bench_split.py``), with its three steps' seconds: the
    cyclic GC paused over all three, as ``assign_group`` pauses it; ``encode_s`` includes
    freeing the decoded members and the plan (``assign_from_bytes`` has freed them when it
    returns), so the three add up to what one timer around ``assign_from_bytes`` reads."""
    with cyclic_gc_paused():
        t0 = time.perf_counter()
        group = read_group(protocol, [MemberMetadata(m, data) for m, data in metadata.items()])
        t1 = time.perf_counter()
        plan = group.plan_dense(partitions, partition_racks=racks)
        t2 = time.perf_counter()
        result = group.encode_dense(plan)
        # freed inside the timed region, as ``assign_from_bytes`` frees them before it returns
        del group, plan
        t3 = time.perf_counter()
    return result, {"decode_s": t1 - t0, "assign_s": t2 - t1, "encode_s": t3 - t2}


def main(argv: list[str]) -> int:
    no_racks = bool(argv) and argv[0] == "--no-racks"
    argv = argv[1:] if no_racks else argv
    protocol, source, target = argv[:3]
    calls, budget = call_args(argv)
    partitions, metadata, racks = read_input(Path(source))
    if no_racks:
        racks = None
    assignor = assignor_class(protocol)()
    leader_split(assignor.name, {"warm-up": 4}, {"w": assignor.metadata(["warm-up"])}, None)

    def call() -> tuple[dict[str, bytes], dict[str, float]]:
        return leader_split(assignor.name, partitions, metadata, racks)

    result, done = run_calls(call, calls, budget)
    write_output(Path(target), result or {})
    emit({"done": True, "racks": racks is not None, "calls": done})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
