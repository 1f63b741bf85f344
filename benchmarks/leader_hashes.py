"""The leader's call on bench inputs: CPU seconds per step and a hash of the bytes it writes.

Usage: ``python benchmarks/leader_hashes.py OUT.json CALLS INPUT...`` where each INPUT is a
file written by ``benchmarks/run.py --generate SHAPE PROTOCOL DIR`` (its name says the
protocol). For each input, the best of CALLS calls of the leader's bytes path as
``ours_peer.py`` runs it (``read_group``, ``plan_dense``, ``encode_dense``; cyclic GC paused;
``time.process_time``, so other processes on a shared machine count less), and the SHA-256
of every member's id and assignment bytes in output order. Two checkouts' JSON files compare
implementations of the wire seam: equal hashes are equal plans and equal bytes (issue 37).
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from peer_files import read_input

from kafka_sticky_plugin.assignor.leader import MemberMetadata, read_group
from kafka_sticky_plugin.core.gc_pause import cyclic_gc_paused


def measure(path: Path, calls: int) -> dict[str, float | str]:
    """The best call's seconds (total, decode, engine, encode) and the output's hash."""
    protocol = "cooperative-sticky" if ".cooperative-sticky." in path.name else "sticky"
    partitions, metadata, racks = read_input(path)
    best: tuple[float, float, float, float] | None = None
    result: dict[str, bytes] = {}
    for _ in range(calls):
        with cyclic_gc_paused():
            t0 = time.process_time()
            group = read_group(protocol, [MemberMetadata(m, d) for m, d in metadata.items()])
            t1 = time.process_time()
            plan = group.plan_dense(partitions, partition_racks=racks)
            t2 = time.process_time()
            result = group.encode_dense(plan)
            del group, plan
            t3 = time.process_time()
        row = (t3 - t0, t1 - t0, t2 - t1, t3 - t2)
        if best is None or row[0] < best[0]:
            best = row
    assert best is not None
    digest = hashlib.sha256()
    for member_id, raw in result.items():
        digest.update(member_id.encode() + b"\0" + len(raw).to_bytes(4, "big") + raw)
    total, decode, engine, encode = best
    return {
        "total": total,
        "decode": decode,
        "engine": engine,
        "encode": encode,
        "hash": digest.hexdigest(),
    }


def main(argv: list[str]) -> int:
    out, calls, inputs = Path(argv[0]), int(argv[1]), [Path(a) for a in argv[2:]]
    rows: dict[str, dict[str, float | str]] = {}
    for path in inputs:
        rows[path.name] = measure(path, calls)
        print(path.name, json.dumps(rows[path.name]), flush=True)
    out.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
