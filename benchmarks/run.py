"""``make bench``: the engine on the fixed shapes, with kafka-python's own assignors as peers.

Every (shape, assignor) runs in its own subprocess so that peak memory is that run's own and a
peer that takes too long is cut off at ``--peer-timeout`` seconds (reported as such). Printed
per phase: wall time of the assignment call, peak RSS of the worker process (inputs included),
partitions moved against the fresh plan, and max - min load; then the peers' times and the
ratio peer / ours, measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from shapes import SHAPES, members, phase_inputs  # noqa: E402

PHASES = ("fresh", "rejoin", "leave")


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _moved(
    before: dict[str, list[tuple[str, int]]], after: dict[str, list[tuple[str, int]]]
) -> int:
    owner = {tp: m for m, tps in before.items() for tp in tps}
    return sum(1 for m, tps in after.items() for tp in tps if owner.get(tuple(tp)) != m)


def _spread(plan: dict[str, list[tuple[str, int]]]) -> int:
    loads = [len(v) for v in plan.values()]
    return max(loads) - min(loads) if loads else 0


def worker(shape_name: str, assignor: str) -> None:
    """Run the three phases of one shape with one assignor; print one JSON line per phase."""
    from kafka_sticky_plugin.core import sticky_assign

    shape = SHAPES[shape_name]
    subs = shape.subscriptions()
    member_racks = shape.member_racks(subs)
    partition_racks = shape.partition_racks()
    fresh: dict[str, list[tuple[str, int]]] = {}
    for phase in PHASES:
        if assignor == "ours":
            specs = (
                members(subs, racks=member_racks)
                if phase == "fresh"
                else phase_inputs(subs, fresh, phase, member_racks)
            )
            start = time.perf_counter()
            plan = sticky_assign(shape.partitions, specs, partition_racks=partition_racks)
            seconds = time.perf_counter() - start
        else:
            from peers import run_peer

            phase_subs = {
                s.member_id: list(s.topics)
                for s in (members(subs) if phase == "fresh" else phase_inputs(subs, fresh, phase))
            }
            start = time.perf_counter()
            plan = run_peer(
                assignor, shape.partitions, phase_subs, None if phase == "fresh" else fresh, 1
            )
            seconds = time.perf_counter() - start
        if phase == "fresh":
            fresh = plan
        row = {
            "shape": shape_name,
            "assignor": assignor,
            "phase": phase,
            "seconds": round(seconds, 3),
            "peak_mb": round(_peak_mb()),
            "moved": 0 if phase == "fresh" else _moved(fresh, plan),
            "spread": _spread(plan),
        }
        if partition_racks is not None:
            rack_of = {s.member_id: s.rack for s in specs}
            row["cross_rack"] = sum(
                1
                for m, tps in plan.items()
                for tp in tps
                if rack_of[m] not in partition_racks[(tp[0], tp[1])]
            )
        print(json.dumps(row), flush=True)


def run_one(shape: str, assignor: str, timeout: float | None) -> list[dict[str, object]]:
    cmd = [sys.executable, str(Path(__file__)), "--worker", shape, assignor]
    failure = "cut"
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
        lines = out.stdout
        if out.returncode != 0:
            last = out.stderr.strip().splitlines()[-1:] or ["?"]
            failure = "error"
            print(f"  [{assignor} on {shape} failed: {last[0][:120]}]", file=sys.stderr)
    except subprocess.TimeoutExpired as exc:
        raw = exc.stdout or b""
        lines = raw.decode() if isinstance(raw, bytes) else raw
    rows = [json.loads(line) for line in lines.splitlines() if line.startswith("{")]
    done = {r["phase"] for r in rows}
    for phase in PHASES:
        if phase not in done:
            rows.append(
                {
                    "shape": shape,
                    "assignor": assignor,
                    "phase": phase,
                    "seconds": None,
                    "failure": failure,
                }
            )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--worker", nargs=2, metavar=("SHAPE", "ASSIGNOR"), help=argparse.SUPPRESS)
    parser.add_argument("--shapes", default=",".join(SHAPES), help="comma-separated shape names")
    parser.add_argument(
        "--peers",
        default="sticky,roundrobin",
        help="kafka-python assignors to compare with ('' for none)",
    )
    parser.add_argument("--peer-timeout", type=float, default=60.0)
    parser.add_argument("--json", help="also write every row to this file")
    parser.add_argument(
        "--leader-shapes",
        default="H-1M",
        help="shapes for the leader's whole assign() (decode, engine, encode); '' for none",
    )
    args = parser.parse_args(argv)
    if args.worker:
        worker(*args.worker)
        return 0
    peers = [p for p in args.peers.split(",") if p]
    all_rows: list[dict[str, object]] = []
    print(f"engine benchmark (python {sys.version.split()[0]}, {os.cpu_count()} cpus)")
    header = f"{'shape':<16} {'phase':<7} {'ours s':>8} {'peak MB':>8} {'moved':>7} {'max-min':>7}"
    header += "".join(f" {p + ' s':>14} {'ratio':>7}" for p in peers)
    print(header)
    for shape in args.shapes.split(","):
        ours = run_one(shape, "ours", None)
        racked = SHAPES[shape].racks is not None
        theirs = {p: run_one(shape, p, args.peer_timeout) for p in ([] if racked else peers)}
        all_rows.extend(ours)
        for p in theirs:
            all_rows.extend(theirs[p])
        for row in ours:
            line = (
                f"{shape:<16} {row['phase']:<7} {row['seconds']:>8} {row.get('peak_mb')!s:>8} "
                f"{row.get('moved')!s:>7} {row.get('spread')!s:>7}"
            )
            if racked:
                line += f"  cross-rack {row.get('cross_rack')}"
            for p in theirs:
                peer = next(r for r in theirs[p] if r["phase"] == row["phase"])
                secs = peer["seconds"]
                if secs is None and peer.get("failure") == "error":
                    line += f" {'error':>14} {'-':>7}"
                elif secs is None:
                    line += f" {'>' + str(int(args.peer_timeout)) + ' (cut)':>14} {'-':>7}"
                else:
                    ratio = float(secs) / max(float(row["seconds"]), 1e-9)  # type: ignore[arg-type]
                    line += f" {secs:>14} {ratio:>6.1f}x"
            print(line, flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(all_rows, indent=1))
    if args.leader_shapes:
        print("\nleader assign() on kafka-python: decode + engine + encode, best of 2")
        subprocess.run(
            [
                sys.executable,
                str(HERE / "bench_leader.py"),
                "--shapes",
                args.leader_shapes,
                "--repeat",
                "2",
                "--kafka-python-objects",
            ],
            check=False,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
