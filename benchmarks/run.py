"""``make bench``: ours against franz-go, Apache Kafka (Java) and kafka-python, same bytes in.

For every shape, protocol and phase (``fresh``, ``rejoin``, ``leave``; see ``shapes.py``) a
generator process makes every member's JoinGroup metadata with our own assignors (what each
member sends: subscription v3 with owned partitions, generation and rack, plus sticky user
data for ``sticky``), writes it with the partition counts and replica racks to one input
file (``peer_files.py``) and times our engine (``sticky_assign``/``cooperative_assign``) on the
members read back from those bytes. Rejoin and leave inputs carry our engine's fresh plan as
every member's previous assignment, so every peer gets the same bytes.

Then every peer runs on that file in its own process (``ours``: our leader's
``assign_from_bytes``, ``benchmarks/ours_peer.py``; ``franz``: ``build/go/franz-peer``;
``java``: ``BenchPeer`` on kafka-clients; ``kafka-python``:
``benchmarks/kafka_python_peer.py``), cut at ``--peer-timeout`` seconds (kafka-python:
``--kafka-python-timeout``; once cut on a shape it is skipped on that shape's later phases;
franz-go or Java cut on a fresh plan skip that shape's rejoin, their costliest phase, and still
run its leave).
Each prints its own timings (decode, assign, encode), writes the assignment bytes its client
would send, and the plan's quality is measured here by our own code (``plan_quality.py``);
peak MB is the peer process's own peak RSS (through ``peak_rss.py``).
See docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from peer_files import read_input, read_output, write_input  # noqa: E402
from shapes import SHAPES  # noqa: E402

PHASES = ("fresh", "rejoin", "leave")
PEERS = ("ours", "franz", "java", "kafka-python")
DEFAULT_SHAPES = "H-1M,H-1M-odd,HET-100k,HET-1M,NESTED-10k,H-1M-r3f3,H-1M-r6f2,NESTED-100k-r3f1"

Plan = dict[str, list[tuple[str, int]]]


# --- generator process -------------------------------------------------------------------


def _metadata(
    protocol: str,
    subs: Mapping[str, list[str]],
    racks: Mapping[str, str | None],
    previous: Plan | None,
) -> dict[str, bytes]:
    """What each member sends: a fresh assignor instance with its rack, fed its previous
    assignment at generation 1."""
    from kafka_sticky_plugin.codec import Assignment
    from kafka_sticky_plugin.testing.assignor_names import assignor_class

    cls = assignor_class(protocol)
    out: dict[str, bytes] = {}
    for member_id, topics in subs.items():
        assignor = cls(rack_id=racks.get(member_id))
        if previous is not None and member_id in previous:
            assignor.on_assignment(Assignment(3, tuple(previous[member_id])), 1)
        out[member_id] = assignor.metadata(topics)
    return out


def generate(shape_name: str, protocol: str, workdir: Path) -> None:
    """Write the three phase inputs of one shape; print one JSON line per phase with our
    engine's time on the members read from those bytes."""
    import gc

    from plan_quality import input_members

    from kafka_sticky_plugin.assignor.strategies import STICKY, strategy_named

    engine = strategy_named(protocol).engine
    eager = strategy_named(STICKY).engine
    shape = SHAPES[shape_name]
    subs = shape.subscriptions()
    racks = shape.member_racks(subs)
    partition_racks = shape.partition_racks()
    engine(
        {"warm-up": 4}, input_members(protocol, _metadata(protocol, {"w": ["warm-up"]}, {}, None))
    )
    fresh: Plan | None = None
    for phase in PHASES:
        phase_subs = dict(subs)
        phase_racks = dict(racks)
        if phase == "rejoin":
            first = next(iter(subs))
            phase_subs["member-new"] = subs[first]
            phase_racks["member-new"] = racks[first]
        elif phase == "leave":
            del phase_subs[sorted(subs)[-1]]
        metadata = _metadata(protocol, phase_subs, phase_racks, fresh)
        path = workdir / f"{shape_name}.{protocol}.{phase}.in"
        write_input(path, shape.partitions, metadata, partition_racks)
        specs = input_members(protocol, metadata)
        del metadata
        gc.collect()
        start = time.perf_counter()
        plan = engine(shape.partitions, specs, partition_racks=partition_racks)
        seconds = time.perf_counter() - start
        if phase == "fresh":
            # Every member's previous assignment in rejoin and leave: the eager fresh plan.
            fresh = (
                plan
                if engine is eager
                else eager(shape.partitions, specs, partition_racks=partition_racks)
            )
        del plan, specs
        row = {"phase": phase, "engine_s": seconds, "input_mb": path.stat().st_size / 2**20}
        print(json.dumps(row), flush=True)


# --- peer processes ----------------------------------------------------------------------


def peer_command(peer: str) -> list[str] | str:
    """The command that runs ``peer`` (then PROTOCOL INPUT OUTPUT REPEAT), or why it cannot."""
    if peer == "ours":
        return [sys.executable, str(HERE / "ours_peer.py")]
    if peer == "kafka-python":
        return [sys.executable, str(HERE / "kafka_python_peer.py")]
    if peer == "franz":
        binary = ROOT / "build" / "go" / "franz-peer"
        return [str(binary)] if binary.exists() else "not built (make bench-peers needs go)"
    if peer == "java":
        base = ROOT / "build" / "jvm" / "bench-peer"
        java = shutil.which("java")
        if java is None or not (base / "classes" / "BenchPeer.class").exists():
            return "not built (make bench-peers needs mvn and javac)"
        return [java, "-cp", f"{base / 'classes'}{os.pathsep}{base / 'lib' / '*'}", "BenchPeer"]
    raise ValueError(peer)


def run_limited(cmd: list[str], timeout: float | None) -> dict[str, object]:
    """Run ``cmd`` under ``peak_rss.py``; kill the whole process group at ``timeout`` seconds.
    Returns the peer's JSON line (if any), ``status`` (``ok``, ``cut`` or ``error: ...``) and
    ``peak_mb``: the peer process's own peak RSS (``None`` when it was cut)."""
    launcher = [sys.executable, str(HERE / "peak_rss.py")]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([*launcher, *cmd], stdout=out, stderr=err, start_new_session=True)
        status = "ok"
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            status = "cut"
        out.seek(0)
        lines = [x for x in out.read().decode(errors="replace").splitlines() if x.startswith("{")]
        rows = [json.loads(x) for x in lines]
        peak = next((r["peak_kb"] for r in rows if "peak_kb" in r), None)
        found = [r for r in rows if "peak_kb" not in r]
        row: dict[str, object] = found[-1] if found and status == "ok" else {}
        if status == "ok" and (proc.returncode != 0 or not found):
            err.seek(0)
            tail = err.read().decode(errors="replace").strip().splitlines()[-1:] or ["?"]
            status = f"error: {tail[0][:160]}"
        row["status"] = status
        row["peak_mb"] = None if peak is None else peak / 1024
        return row


def total_seconds(row: Mapping[str, object]) -> float | None:
    """Decode + assign + encode (ours: the leader's whole call)."""
    if row.get("status") != "ok":
        return None
    if "total_s" in row:
        return _seconds(row["total_s"])
    return sum(_seconds(row[k]) for k in ("decode_s", "assign_s", "encode_s"))


def _seconds(value: object) -> float:
    """A row's figure in seconds, as ``float()`` reads it (a TypeError for anything else)."""
    if not isinstance(value, int | float | str):
        raise TypeError(f"not a number of seconds: {value!r}")
    return float(value)


# --- orchestration -----------------------------------------------------------------------


def bench_shape(
    shape: str,
    protocol: str,
    peers: list[str],
    timeouts: Mapping[str, float | None],
    workdir: Path,
) -> list[dict[str, object]]:
    """Every phase of one shape for one protocol: our engine, then every peer on the same
    input file, with quality measured on each peer's output."""
    from plan_quality import input_members, plan_of, quality

    spent = dict.fromkeys(("generate", "peers", "quality"), 0.0)
    t0 = time.monotonic()
    gen = subprocess.run(
        [sys.executable, str(Path(__file__)), "--generate", shape, protocol, str(workdir)],
        capture_output=True,
        text=True,
        check=False,
    )
    if gen.returncode != 0:
        raise RuntimeError(f"generator failed on {shape}/{protocol}: {gen.stderr[-2000:]}")
    engine = {r["phase"]: r for r in map(json.loads, gen.stdout.splitlines())}
    spent["generate"] += time.monotonic() - t0
    rows: list[dict[str, object]] = []
    skipped: dict[str, str] = {}
    cut_fresh: set[str] = set()
    for phase in PHASES:
        source = workdir / f"{shape}.{protocol}.{phase}.in"
        t0 = time.monotonic()
        partitions, metadata, racks = read_input(source)
        members = input_members(protocol, metadata)
        del metadata
        spent["quality"] += time.monotonic() - t0
        base = {"shape": shape, "protocol": protocol, "phase": phase}
        rows.append({**base, "peer": "engine", "status": "ok", **engine[phase]})
        for peer in peers:
            row: dict[str, object] = {**base, "peer": peer}
            cmd = peer_command(peer)
            if peer == "kafka-python" and protocol != "sticky":
                row["status"] = "n/a"
            elif isinstance(cmd, str):
                row["status"] = f"unavailable: {cmd}"
            elif peer in skipped:
                row["status"] = skipped[peer]
            elif phase == "rejoin" and peer in cut_fresh:
                row["status"] = "skipped (cut on fresh)"
            else:
                target = workdir / f"{shape}.{protocol}.{phase}.{peer}.out"
                t0 = time.monotonic()
                row.update(run_limited([*cmd, protocol, str(source), str(target)], timeouts[peer]))
                t1 = time.monotonic()
                if row["status"] == "ok":
                    plan = plan_of(read_output(target), members)
                    row.update(quality(partitions, members, plan, racks))
                    del plan
                elif row["status"] == "cut" and peer == "kafka-python":
                    skipped[peer] = f"skipped (cut on {phase})"
                elif row["status"] == "cut" and phase == "fresh":
                    cut_fresh.add(peer)
                spent["peers"] += t1 - t0
                spent["quality"] += time.monotonic() - t1
                target.unlink(missing_ok=True)
            row["seconds"] = total_seconds(row)
            rows.append(row)
        source.unlink()
    print("  " + ", ".join(f"{k} {v:.0f} s" for k, v in spent.items()), end="", flush=True)
    return rows


def _cell(row: Mapping[str, object] | None, timeouts: Mapping[str, float | None]) -> str:
    if row is None:
        return "-"
    status = str(row.get("status"))
    if status == "cut":
        return f"cut >{timeouts[str(row['peer'])]:.0f}s"
    if status != "ok":
        return status.split(":")[0].split(" (")[0]
    return f"{row['seconds']:.3f}"


def _ratio(peer: Mapping[str, object] | None, ours: Mapping[str, object] | None) -> str:
    if not peer or not ours or peer.get("seconds") is None or ours.get("seconds") is None:
        return "-"
    return f"{float(peer['seconds']) / max(float(ours['seconds']), 1e-9):.1f}x"  # type: ignore[arg-type]


def print_tables(
    rows: list[dict[str, object]], peers: list[str], timeouts: Mapping[str, float | None]
) -> None:
    """Time table (ratios: peer's whole bytes path / our leader's, and peer's assign call /
    our engine), then quality and memory per peer."""
    index = {(r["shape"], r["protocol"], r["phase"], r["peer"]): r for r in rows}
    keys = sorted(
        {(r["shape"], r["protocol"], r["phase"]) for r in rows},
        key=lambda k: (
            str(k[1]) != "sticky",
            str(k[1]),
            _order(str(k[0])),
            PHASES.index(str(k[2])),
        ),
    )
    others = [p for p in peers if p != "ours"]
    print(
        "\ntime (s): engine = our engine call; ours = our leader's bytes path (decode + engine + "
        "encode);\npeers: decode + assign + encode; ratio = peer / ours; assign/eng = peer's "
        "assign call / our engine"
    )
    head = f"{'shape':<16} {'protocol':<7} {'phase':<6} {'engine':>7} {'ours':>7}"
    for p in others:
        head += f" {p:>12} {'ratio':>7} {'asg/eng':>7}"
    print(head)
    for shape, protocol, phase in keys:
        eng = index.get((shape, protocol, phase, "engine"))
        ours = index.get((shape, protocol, phase, "ours"))
        line = (
            f"{shape!s:<16} {_short(str(protocol)):<7} {phase!s:<6} "
            f"{float(eng['engine_s']) if eng else float('nan'):>7.3f} {_cell(ours, timeouts):>7}"  # type: ignore[arg-type]
        )
        for p in others:
            r = index.get((shape, protocol, phase, p))
            asg = "-"
            if r and r.get("status") == "ok" and eng and "assign_s" in r:
                asg = f"{float(r['assign_s']) / max(float(eng['engine_s']), 1e-9):.1f}x"  # type: ignore[arg-type]
            line += f" {_cell(r, timeouts):>12} {_ratio(r, ours):>7} {asg:>7}"
        print(line)
    print("\nquality (measured by our code on each peer's assignment bytes) and peak RSS")
    print(
        f"{'shape':<16} {'protocol':<7} {'phase':<6} {'peer':<12} {'peak MB':>8} {'max-min':>7} "
        f"{'moved':>7} {'twice':>5} {'invalid':>7} {'unasg':>7} {'optimal':>7} {'x-rack':>7}"
    )
    for shape, protocol, phase in keys:
        for p in peers:
            r = index.get((shape, protocol, phase, p))
            if not r or r.get("status") != "ok":
                continue
            opt = {True: "yes", False: "NO", None: "-"}[r.get("optimal")]  # type: ignore[index]
            print(
                f"{shape!s:<16} {_short(str(protocol)):<7} {phase!s:<6} {p:<12} "
                f"{float(r['peak_mb']):>8.0f} {r['spread']!s:>7} {r['moved']!s:>7} "  # type: ignore[arg-type]
                f"{r['twice']!s:>5} {r['invalid']!s:>7} {r['unassigned']!s:>7} {opt:>7} "
                f"{r.get('cross_rack', '-')!s:>7}"
            )


def _short(protocol: str) -> str:
    return "coop" if protocol == "cooperative-sticky" else protocol


def _order(shape: str) -> int:
    names = list(SHAPES)
    return names.index(shape) if shape in names else len(names)


def build_peers() -> None:
    """``make bench-peers``, or one line per peer that cannot be built (its column then
    reads "unavailable")."""
    result = subprocess.run(["make", "-s", "-C", str(ROOT), "bench-peers"], check=False)
    if result.returncode != 0:
        print("bench: building the peers failed; missing ones are marked unavailable")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--generate", nargs=3, metavar=("SHAPE", "PROTOCOL", "DIR"), help=argparse.SUPPRESS
    )
    parser.add_argument("--shapes", default=DEFAULT_SHAPES, help="comma-separated shape names")
    parser.add_argument("--protocols", default="sticky", help="sticky,cooperative-sticky")
    parser.add_argument(
        "--cooperative-shapes",
        default="H-1M",
        help="shapes also run with cooperative-sticky (added to --protocols)",
    )
    parser.add_argument("--peers", default=",".join(PEERS), help=f"from {PEERS}")
    parser.add_argument("--peer-timeout", type=float, default=20.0, help="per call, franz/java")
    parser.add_argument("--kafka-python-timeout", type=float, default=5.0)
    parser.add_argument("--build", action="store_true", help="run make bench-peers first")
    parser.add_argument("--json", help="also write every row to this file")
    args = parser.parse_args(argv)
    if args.generate:
        generate(args.generate[0], args.generate[1], Path(args.generate[2]))
        return 0
    if args.build:
        build_peers()
    peers = [p for p in args.peers.split(",") if p]
    for p in peers:
        cmd = peer_command(p)
        if isinstance(cmd, str):
            print(f"bench: {p} peer {cmd}: its column reads unavailable")
    timeouts: dict[str, float | None] = {
        "ours": None,
        "franz": args.peer_timeout,
        "java": args.peer_timeout,
        "kafka-python": args.kafka_python_timeout,
    }
    runs = [(s, p) for s in args.shapes.split(",") if s for p in args.protocols.split(",") if p]
    runs += [
        (s, "cooperative-sticky")
        for s in args.cooperative_shapes.split(",")
        if s and (s, "cooperative-sticky") not in runs
    ]
    began = time.monotonic()
    print(f"bench (python {sys.version.split()[0]}, {os.cpu_count()} cpus): {len(runs)} runs")
    rows: list[dict[str, object]] = []
    workdir = ROOT / "build" / "bench"
    workdir.mkdir(parents=True, exist_ok=True)
    for shape, protocol in runs:
        t0 = time.monotonic()
        rows.extend(bench_shape(shape, protocol, peers, timeouts, workdir))
        print(f" -- {shape} {protocol}: {time.monotonic() - t0:.0f} s", flush=True)
    print_tables(rows, peers, timeouts)
    print(f"\nwhole run: {time.monotonic() - began:.0f} s")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
