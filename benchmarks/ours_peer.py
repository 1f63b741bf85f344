"""Our leader as a peer process: ``assign_from_bytes`` on the same input file as the others.

Usage: ``python benchmarks/ours_peer.py [--no-racks] PROTOCOL INPUT OUTPUT [CALLS [BUDGET_S]]``
(the call protocol: ``peer_calls.py``). Each call's ``total_s`` is the leader's whole bytes
path (decode every member, run the engine, encode every assignment), with replica racks
passed when the input has them, unless ``--no-racks``: then the leader is given none, as
franz-go on the racked shapes (the ``ours-norack`` column). Writes the assignment bytes of
the last call.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from peer_calls import call_args, emit, run_calls
from peer_files import read_input, write_output

from kafka_sticky_plugin.testing.assignor_names import assignor_class


def main(argv: list[str]) -> int:
    no_racks = bool(argv) and argv[0] == "--no-racks"
    argv = argv[1:] if no_racks else argv
    protocol, source, target = argv[:3]
    calls, budget = call_args(argv)
    partitions, metadata, racks = read_input(Path(source))
    if no_racks:
        racks = None
    assignor = assignor_class(protocol)()
    assignor.assign_from_bytes({"warm-up": 4}, {"w": assignor.metadata(["warm-up"])})

    def call() -> tuple[dict[str, bytes], dict[str, float]]:
        start = time.perf_counter()
        result = assignor.assign_from_bytes(partitions, metadata, racks)
        return result, {"total_s": time.perf_counter() - start}

    result, done = run_calls(call, calls, budget)
    write_output(Path(target), result or {})
    emit({"done": True, "racks": racks is not None, "calls": done})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
