"""Our leader as a peer process: ``assign_from_bytes`` on the same input file as the others.

Usage: ``python benchmarks/ours_peer.py PROTOCOL INPUT OUTPUT [REPEAT]``. Prints one JSON
line: ``total_s``, the best of REPEAT calls of the leader's whole bytes path (decode every
member, run the engine, encode every assignment), with replica racks passed when the input
has them; writes the assignment bytes of the last call.
"""

from __future__ import annotations

import gc
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from peer_files import read_input, write_output

from kafka_sticky_plugin.testing.assignor_names import assignor_class


def main(argv: list[str]) -> int:
    protocol, source, target = argv[:3]
    repeat = int(argv[3]) if len(argv) > 3 else 1
    partitions, metadata, racks = read_input(Path(source))
    assignor = assignor_class(protocol)()
    assignor.assign_from_bytes({"warm-up": 4}, {"w": assignor.metadata(["warm-up"])})
    best = float("inf")
    result: dict[str, bytes] = {}
    for _ in range(repeat):
        result = {}
        gc.collect()
        start = time.perf_counter()
        result = assignor.assign_from_bytes(partitions, metadata, racks)
        best = min(best, time.perf_counter() - start)
    write_output(Path(target), result)
    print(json.dumps({"total_s": best, "racks": racks is not None, "repeat": repeat}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
