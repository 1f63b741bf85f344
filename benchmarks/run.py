"""``make bench``: ours against franz-go, Apache Kafka (Java) and kafka-python, same bytes in.

For every shape, protocol and phase (``fresh``, ``rejoin``, ``leave``; see ``shapes.py``) a
generator process writes two inputs (``peer_files.py``), each with the partition counts,
replica racks and every member's JoinGroup metadata:

- ``ours``: what members of ours send (our assignor classes' ``metadata()``: subscription v3
  with owned partitions, generation and rack, plus sticky user data for ``sticky``);
- ``java``: what Java members send (``java_form.py``: for eager ``sticky`` no owned
  partitions, the previous assignment only in the KIP-341 sticky user data).

Where both are the same bytes (every ``fresh`` phase, every ``cooperative-sticky`` phase)
only the ``ours`` input is written, each peer runs once and the ``java`` row says ``same``.
Rejoin and leave inputs carry our engine's fresh plan as every member's previous assignment.

Then every peer runs on each input in its own process (``ours``: our leader's bytes path as
the hooks run it, ``benchmarks/ours_peer.py``: the assignment plus the rebalance metrics'
description of the round, timed in four steps: decode, engine (the ``engine`` column),
encode, describe, and on racked shapes two more before the engine, the replica racks and
the placement read from a kafka-python ``ClusterMetadata`` as a consumer's leader reads them
(Java's ``assign_s`` reads its ``PartitionInfo`` racks likewise); every step but describe and
placement is the plain call (what ``assign_cluster`` does), the ``plain`` column; on racked
shapes also ``ours-norack``, the same without replica racks, as franz-go gets them;
``ours-reference``: the same peer as ``ours`` with ``KAFKA_STICKY_PURE_PYTHON=1`` in its
environment, the wire seam's plain-Python reference alone (the ``ref`` column), where ``ours``
runs whatever implementation is installed (the compiled twin under ``make bench``); each
reports the implementation it ran, and where ``ours`` itself ran the reference (no twin) the
``ref`` row is not run, with one line saying so (:data:`REFERENCE_SKIP`);
``franz``: ``build/go/franz-peer``; ``java``: ``BenchPeer`` on kafka-clients;
``kafka-python``: ``benchmarks/kafka_python_peer.py``).
Each makes up to ``--calls`` calls in one process (the first cold, the best of the others
warm; ``peer_calls.py``), each call cut at ``--peer-timeout`` seconds counted from the call's
start only (kafka-python: ``--kafka-python-timeout``; once cut on a shape it is skipped on
that shape's later phases; franz-go or Java cut on a fresh plan skip that shape's rejoin,
their costliest phase, and still run its leave). Each call prints its decode, assign and
encode seconds, CPU seconds and GC seconds; the load average is read before and after each
peer process. Each peer writes the assignment bytes its client would send, and the plan's
quality is measured here by our own code (``plan_quality.py``); peak MB is the peer
process's own peak RSS (through ``peak_rss.py``). See docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import queue
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from peer_files import rack_section, read_input_compact, read_output, write_input  # noqa: E402
from shapes import SHAPES  # noqa: E402

from kafka_sticky_plugin.codec.implementation import PURE_PYTHON_ENV  # noqa: E402

PHASES = ("fresh", "rejoin", "leave")
PEERS = ("ours", "ours-reference", "franz", "java", "kafka-python")
#: ``ours`` forced onto the wire seam's plain-Python reference (:data:`PURE_PYTHON_ENV`): the
#: time table's ``ref`` column, run right after ``ours`` on each input.
REFERENCE_PEER = "ours-reference"
#: The status of a ``ref`` row not run because ``ours`` itself ran the reference on that input
#: (no compiled twin installed, or forced off): the same work again, so it is not repeated.
REFERENCE_SKIP = "skipped (ours ran the reference)"
INPUTS = ("ours", "java")
DEFAULT_SHAPES = (
    "H-1M,H-1M-odd,HET-100k,HET-1M,NESTED-10k,H-1M-r3f3,H-1M-r6f2,NESTED-100k-r3f1,H-1M-numbered"
)
#: Calls per peer process and the budget (seconds) after which no further warm call starts.
#: The first two calls (cold, one warm) always run; the budget only stops further warm calls.
#: Ours and franz-go make the same number of calls on every row they are compared on (each
#: call under a second: four calls, three warm), so neither's best warm call is the best of more.
#: ``ours-reference`` makes the calls of ``ours``, whose twin it is.
DEFAULT_CALLS = {
    "ours": 4,
    "ours-reference": 4,
    "ours-norack": 4,
    "franz": 4,
    "java": 3,
    "kafka-python": 1,
}
DEFAULT_BUDGET = {
    "ours": 3.0,
    "ours-reference": 3.0,
    "ours-norack": 3.0,
    "franz": 3.0,
    "java": 8.0,
    "kafka-python": 0.0,
}
#: Seconds a peer may take before its first call and between calls (reading its input,
#: starting, writing its output); never part of the time limit.
SETUP_TIMEOUT = 300.0

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
    from kafka_sticky_plugin.groups.assignor_names import assignor_class

    cls = assignor_class(protocol)
    out: dict[str, bytes] = {}
    for member_id, topics in subs.items():
        assignor = cls(rack_id=racks.get(member_id))
        if previous is not None and member_id in previous:
            assignor.on_assignment(Assignment(3, tuple(previous[member_id])), 1)
        out[member_id] = assignor.metadata(topics)
    return out


MetadataMaker = Callable[
    [str, Mapping[str, list[str]], Mapping[str, str | None], Plan | None], dict[str, bytes]
]


def _remembered(
    make: MetadataMaker,
    source: str,
    protocol: str,
    subs: Mapping[str, list[str]],
    racks: Mapping[str, str | None],
    previous: Plan | None,
    memo: dict[str, dict[str, bytes]],
) -> dict[str, bytes]:
    """``make(protocol, subs, racks, previous)``; with a ``previous`` plan, members already
    made (in the other phase from the same plan) are taken from ``memo[source]``."""
    if previous is None:
        return make(protocol, subs, racks, previous)
    known = memo[source]
    todo = {m: topics for m, topics in subs.items() if m not in known}
    known.update(make(protocol, todo, racks, previous))
    return {m: known[m] for m in subs}


def generate(shape_name: str, protocol: str, workdir: Path) -> None:
    """Write the three phase inputs of one shape: the ``java`` input only where its bytes
    differ from the ``ours`` input (:func:`java_form.same_as_ours`); print one JSON line per
    phase (``same_inputs``: no ``java`` file was written, it would be the ``ours`` one).

    Nothing here is timed: the ``engine`` column is the engine step of our leader's own
    calls (``ours_peer.py``). The one engine call left, untimed, is the eager fresh plan that
    every member of ``rejoin`` and ``leave`` owns."""
    import gc

    from java_form import java_metadata, same_as_ours
    from plan_quality import input_members

    from kafka_sticky_plugin.assignor.strategies import STICKY, strategy_named

    clock = StepClock()
    eager = strategy_named(STICKY).engine
    shape = SHAPES[shape_name]
    subs = shape.subscriptions()
    racks = shape.member_racks(subs)
    partition_racks = shape.partition_racks()
    rack_bytes = rack_section(shape.partitions, partition_racks)
    clock.lap("shape")
    fresh: Plan | None = None
    # A member's bytes depend only on its topics, rack and previous assignment, the same in
    # rejoin and leave: made once per member and source for both.
    memo: dict[str, dict[str, bytes]] = {"ours": {}, "java": {}}
    for phase in PHASES:
        phase_subs = dict(subs)
        phase_racks = dict(racks)
        if phase == "rejoin":
            first = next(iter(subs))
            phase_subs["member-new"] = subs[first]
            phase_racks["member-new"] = racks[first]
        elif phase == "leave":
            del phase_subs[sorted(subs)[-1]]
        same = same_as_ours(protocol, fresh)
        if not same:
            java_bytes = _remembered(
                java_metadata, "java", protocol, phase_subs, phase_racks, fresh, memo
            )
            clock.lap("java metadata")
            java_path = input_path(workdir, shape_name, protocol, phase, "java")
            write_input(java_path, shape.partitions, java_bytes, rack_bytes=rack_bytes)
            del java_bytes
            clock.lap("write inputs")
        metadata = _remembered(_metadata, "ours", protocol, phase_subs, phase_racks, fresh, memo)
        clock.lap("our metadata")
        path = input_path(workdir, shape_name, protocol, phase, "ours")
        write_input(path, shape.partitions, metadata, rack_bytes=rack_bytes)
        clock.lap("write inputs")
        if phase == "fresh":
            # Every member's previous assignment in rejoin and leave: the eager fresh plan
            # on the members our leader reads from these bytes.
            specs = input_members(protocol, metadata)
            del metadata
            gc.collect()
            clock.lap("decode for the fresh plan")
            fresh = eager(shape.partitions, specs, partition_racks=partition_racks)
            del specs
            clock.lap("fresh plan")
        else:
            del metadata
        row = {"phase": phase, "same_inputs": same, "input_mb": path.stat().st_size / 2**20}
        print(json.dumps({**row, "parts": clock.take()}), flush=True)


class StepClock:
    """Wall seconds per named step of the generator (``lap`` charges the time since the
    previous lap to ``name``; ``take`` returns and clears the sums)."""

    def __init__(self) -> None:
        self.last = time.perf_counter()
        self.sums: defaultdict[str, float] = defaultdict(float)

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.sums[name] += now - self.last
        self.last = now

    def take(self) -> dict[str, float]:
        out = dict(self.sums)
        self.sums.clear()
        return out


def input_path(workdir: Path, shape: str, protocol: str, phase: str, source: str) -> Path:
    """Where the generator writes one input (``source``: ``ours`` or ``java``)."""
    return workdir / f"{shape}.{protocol}.{phase}.{source}.in"


# --- peer processes ----------------------------------------------------------------------


def peer_command(peer: str) -> list[str] | str:
    """The command that runs ``peer`` (then PROTOCOL INPUT OUTPUT REPEAT), or why it cannot.
    ``ours-reference`` is ``ours`` under ``env`` with :data:`PURE_PYTHON_ENV` set to 1 (the
    wire seam's reference even where the twin is installed); every other peer inherits this
    process's environment as it is."""
    if peer == "ours":
        return [sys.executable, str(HERE / "ours_peer.py")]
    if peer == REFERENCE_PEER:
        return ["env", f"{PURE_PYTHON_ENV}=1", sys.executable, str(HERE / "ours_peer.py")]
    if peer == "ours-norack":
        return [sys.executable, str(HERE / "ours_peer.py"), "--no-racks"]
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


def run_limited(
    cmd: list[str], timeout: float | None, setup_timeout: float = SETUP_TIMEOUT
) -> dict[str, object]:
    """Run ``cmd`` (a peer following ``peer_calls.py``'s protocol) under ``peak_rss.py``.

    The time limit ``timeout`` runs from each ``{"begin": i}`` line to that call's result
    line only; before the first call, between calls and after the last, ``setup_timeout``
    applies. Past either, the whole process group is killed. Returns :func:`summarise` of
    the call lines, ``status`` (``ok``, ``cut`` (a call ran past ``timeout``), ``error: ...``),
    ``peak_mb`` (the peer process's own peak RSS; ``None`` when killed) and the ``done`` line's
    fields."""
    launcher = [sys.executable, str(HERE / "peak_rss.py")]
    started = time.monotonic()
    marks = ProcessClock(started)
    cpu0 = _children_cpu()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            [*launcher, *cmd], stdout=subprocess.PIPE, stderr=err, start_new_session=True
        )
        lines: queue.Queue[bytes | None] = queue.Queue()

        def pump() -> None:
            assert proc.stdout is not None
            for raw in proc.stdout:
                lines.put(raw)
            lines.put(None)

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        calls: list[dict[str, object]] = []
        extra: dict[str, object] = {}
        peak: float | None = None
        status = "ok"
        in_call = False
        deadline = time.monotonic() + setup_timeout
        while True:
            try:
                wait = deadline - time.monotonic()
                raw = lines.get(timeout=None if wait == float("inf") else max(0.0, wait))
            except queue.Empty:
                os.killpg(proc.pid, signal.SIGKILL)
                status = "cut" if in_call else f"error: no progress in {setup_timeout:.0f} s"
                break
            if raw is None:
                break
            text = raw.decode(errors="replace").strip()
            if not text.startswith("{"):
                continue
            line = json.loads(text)
            if "begin" in line:
                in_call = True
                marks.begin()
                deadline = time.monotonic() + (float("inf") if timeout is None else timeout)
            elif "call" in line:
                in_call = False
                marks.end()
                calls.append(line)
                deadline = time.monotonic() + setup_timeout
            elif "peak_kb" in line:
                peak = float(line["peak_kb"])
            else:
                extra.update(line)
        proc.wait()
        marks.exit(in_call)
        marks.cpu = None if status == "cut" else _children_cpu() - cpu0
        reader.join(10)
        assert proc.stdout is not None
        proc.stdout.close()
        if status == "ok" and (proc.returncode != 0 or not calls or not extra.get("done")):
            err.seek(0)
            tail = err.read().decode(errors="replace").strip().splitlines()[-1:] or ["?"]
            status = f"error: {tail[0][:160]}"
    row: dict[str, object] = {**summarise(calls), **extra} if status == "ok" else {}
    if status == "cut" and calls:
        row["cold_s"] = call_seconds(calls[0])  # cut in a warm call: the cold one finished
    row["status"] = status
    row["peak_mb"] = None if peak is None or status != "ok" else peak / 1024
    row["wall"] = marks.parts()
    return row


def _children_cpu() -> float:
    """CPU seconds (user + system) of this process's waited-for descendants so far: a peer
    (through ``peak_rss.py``, which waits for it) or the generator. A killed peer's own
    CPU is not counted (nobody here waits for it)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class ProcessClock:
    """Where a peer process's wall time goes, as the orchestrator sees it (``--timings``):
    ``setup_s`` from the start to the first ``begin`` line (interpreter or JVM start-up,
    reading the input, the peer's warm-up), ``calls_s`` inside calls (``begin`` to result,
    or to the kill of a cut call), ``between_s`` between calls, ``after_s`` from the last
    result to the process's exit (writing the output), ``process_s`` the whole, ``cpu_s``
    the CPU seconds of the process and its launcher (``None`` when it was killed)."""

    def __init__(self, started: float) -> None:
        self.cpu: float | None = None
        self.started = started
        self.first: float | None = None
        self.last = started
        self.calls = 0.0
        self.between = 0.0
        self.opened: float | None = None
        self.ended: float | None = None

    def begin(self) -> None:
        now = time.monotonic()
        if self.first is None:
            self.first = now
        else:
            self.between += now - self.last
        self.opened = now

    def end(self) -> None:
        now = time.monotonic()
        if self.opened is not None:
            self.calls += now - self.opened
        self.opened = None
        self.last = now

    def exit(self, in_call: bool) -> None:
        if in_call:
            self.end()
        self.ended = time.monotonic()

    def parts(self) -> dict[str, float | None]:
        ended = time.monotonic() if self.ended is None else self.ended
        first = ended if self.first is None else self.first
        return {
            "process_s": ended - self.started,
            "setup_s": first - self.started,
            "calls_s": self.calls,
            "between_s": self.between,
            "after_s": ended - self.last if self.first is not None else 0.0,
            "cpu_s": self.cpu,
        }


#: The timed steps of a call: every peer's three, and our leader's reading of the replica racks
#: and placement from cluster metadata and its hooked description of the round
#: (``ours_peer.py``).
STEPS = ("decode_s", "racks_s", "placement_s", "assign_s", "encode_s", "describe_s")


def call_seconds(call: Mapping[str, object]) -> float:
    """One call's whole time: ``total_s``, or the sum of its steps (:data:`STEPS`)."""
    if "total_s" in call:
        return _seconds(call["total_s"])
    return sum(_seconds(call[k]) for k in STEPS if k in call)


def summarise(calls: Sequence[Mapping[str, object]]) -> dict[str, object]:
    """The figures of a peer's calls: ``cold_s`` (the first call), ``warm_s`` (the best of the
    others; ``None`` with one call) and ``seconds`` (warm where there is one, else cold);
    the split, ``cpu_s`` and ``gc_s`` are those of the call ``seconds`` comes from, and
    ``cold_*`` the cold call's split."""
    if not calls:
        return {}
    cold = calls[0]
    warm = min(calls[1:], key=call_seconds) if len(calls) > 1 else None
    chosen = warm or cold
    out: dict[str, object] = {
        "calls": len(calls),
        "cold_s": call_seconds(cold),
        "warm_s": None if warm is None else call_seconds(warm),
        "seconds": call_seconds(chosen),
    }
    for key in (*STEPS, "cpu_s", "gc_s"):
        if key in chosen:
            out[key] = _seconds(chosen[key])
        if key in cold:
            out[f"cold_{key}"] = _seconds(cold[key])
    return out


def total_seconds(row: Mapping[str, object]) -> float | None:
    """The row's headline seconds (warm if measured, else cold); ``None`` unless ``ok``."""
    if row.get("status") != "ok":
        return None
    return _seconds(row["seconds"])


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
    calls: Mapping[str, int] = DEFAULT_CALLS,
    budget: Mapping[str, float] = DEFAULT_BUDGET,
    totals: defaultdict[str, float] | None = None,
    smaller_cuts: dict[str, tuple[str, int, int]] | None = None,
) -> list[dict[str, object]]:
    """Every phase of one shape for one protocol on both inputs: every peer on the same input
    file, with quality measured on each peer's output (a plan whose bytes
    were already judged in this phase against the same members gets the same figures).

    Skips, each printed with its reason: kafka-python after a cut on this shape (its later
    phases) or, through ``smaller_cuts`` (shared across shapes; ``None``: not applied), on a
    shape at least as large as one it was cut on (:data:`SIZE_SKIP`); franz-go or Java on
    ``rejoin`` after a cut on ``fresh``; Java on eager ``sticky``'s ``ours`` input after a cut
    on the ``java`` input of the same phase (:data:`JAVA_INPUT_RULE`; ``java`` runs first);
    ``ours-reference`` (run right after ``ours``) on an input where ``ours`` reported that it
    ran the reference itself (:data:`REFERENCE_SKIP`). Every finished row carries
    ``plan_sha256``, the hash of the assignment bytes its peer wrote."""
    import numpy as np
    from bulk_quality import RackIndex, bulk_quality, members_view
    from plan_quality import input_members

    spent = dict.fromkeys(("generate", "peers", "quality"), 0.0)
    parts = PARTS if totals is None else totals
    t0 = time.monotonic()
    cpu0 = _children_cpu()
    gen = subprocess.run(
        [sys.executable, str(Path(__file__)), "--generate", shape, protocol, str(workdir)],
        capture_output=True,
        text=True,
        check=False,
    )
    if gen.returncode != 0:
        raise RuntimeError(f"generator failed on {shape}/{protocol}: {gen.stderr[-2000:]}")
    generated = {r["phase"]: r for r in map(json.loads, gen.stdout.splitlines())}
    spent["generate"] += time.monotonic() - t0
    parts["generate"] += time.monotonic() - t0
    CPU["generate"] += _children_cpu() - cpu0
    for r in generated.values():
        for key, seconds in dict(r.pop("parts", {})).items():
            parts[f"generate: {key}"] += seconds
    racked = SHAPES[shape].racks is not None
    run_peers = run_order(peers, racked)
    rows: list[dict[str, object]] = []
    skipped: dict[str, str] = {}
    cut_fresh: set[str] = set()
    size = shape_size(shape)
    for phase in PHASES:
        paths = {i: input_path(workdir, shape, protocol, phase, i) for i in INPUTS}
        same = bool(generated[phase]["same_inputs"])
        # Where the inputs differ, Java members' bytes run first (JAVA_INPUT_RULE).
        order = INPUTS if same else tuple(reversed(INPUTS))
        first: dict[str, dict[str, object]] = {}
        judged = PlanJudge()
        view = None
        for source_name in order:
            source = paths[source_name]
            here: dict[str, dict[str, object]] = {}  # this input's rows so far, by peer
            base = {"shape": shape, "protocol": protocol, "phase": phase, "input": source_name}
            if source_name == "java" and same:
                for peer in run_peers:
                    rows.append({**first[peer], **base, "same_bytes": True})
                continue
            if view is None:
                # Both inputs of a phase give our leader the same members (partitions, racks,
                # topics, claims: tests/test_bench_fairness.py), so they are read once, from
                # the ``ours`` input (Java's sticky user data takes 3x longer to decode), and
                # a plan's figures hold for both (PlanJudge).
                t0, c0 = time.monotonic(), time.process_time()
                partitions, metadata, compact = read_input_compact(paths["ours"])
                racks = None if compact is None else RackIndex(compact[0], np.asarray(compact[1]))
                members = input_members(protocol, metadata)
                del metadata
                judged.members(members)
                view = members_view(partitions, members)
                spent["quality"] += time.monotonic() - t0
                parts["quality: read members"] += time.monotonic() - t0
                CPU["quality: read members"] += time.process_time() - c0
            for peer in run_peers:
                row: dict[str, object] = {**base, "peer": peer}
                cmd = peer_command(peer)
                earlier = first.get(peer)
                smaller = (smaller_cuts or {}).get(peer)
                if peer == "kafka-python" and protocol != "sticky":
                    row["status"] = "n/a"
                elif isinstance(cmd, str):
                    row["status"] = f"unavailable: {cmd}"
                elif peer in skipped:
                    row["status"] = skipped[peer]
                elif smaller is not None and smaller[0] != shape and _at_least(size, smaller):
                    row["status"] = f"skipped (cut on {smaller[0]})"
                elif phase == "rejoin" and peer in cut_fresh:
                    row["status"] = "skipped (cut on fresh)"
                elif peer == REFERENCE_PEER and ran_reference(here.get("ours")):
                    row["status"] = REFERENCE_SKIP
                elif (
                    peer == "java"
                    and protocol == "sticky"
                    and earlier is not None
                    and earlier.get("status") == "cut"
                ):
                    row["status"] = f"skipped (cut on input {earlier['input']})"
                else:
                    target = workdir / f"{shape}.{protocol}.{phase}.{source_name}.{peer}.out"
                    args = [protocol, str(source), str(target)]
                    args += [str(calls.get(peer, 1)), str(budget.get(peer, 0.0))]
                    row["load_before"] = os.getloadavg()[0]
                    t0 = time.monotonic()
                    row["limit_s"] = timeouts.get(peer)
                    row.update(run_limited([*cmd, *args], timeouts.get(peer)))
                    t1, c1 = time.monotonic(), time.process_time()
                    row["load_after"] = os.getloadavg()[0]
                    if row["status"] == "ok":
                        out_bytes = target.read_bytes()
                        row["plan_sha256"] = hashlib.sha256(out_bytes).hexdigest()
                        figures = judged.get(out_bytes)
                        if figures is None:
                            assignments = read_output(target)
                            figures = bulk_quality(partitions, members, assignments, racks, view)
                            del assignments
                            judged.put(out_bytes, figures)
                        row.update(figures)
                        del out_bytes
                    elif row["status"] == "cut" and peer == "kafka-python":
                        skipped[peer] = f"skipped (cut on {phase})"
                        if smaller_cuts is not None and peer in SIZE_SKIP:
                            smaller_cuts.setdefault(peer, (shape, *size))
                    elif row["status"] == "cut" and phase == "fresh":
                        cut_fresh.add(peer)
                    spent["peers"] += t1 - t0
                    spent["quality"] += time.monotonic() - t1
                    _add_wall(parts, peer, row, t1 - t0)
                    parts["quality: judge plans"] += time.monotonic() - t1
                    CPU["quality: judge plans"] += time.process_time() - c1
                    target.unlink(missing_ok=True)
                row["seconds"] = total_seconds(row)
                rows.append(row)
                here[peer] = row
                first.setdefault(peer, row)
        del members, view
        for source in paths.values():
            source.unlink(missing_ok=True)
    print("  " + ", ".join(f"{k} {v:.0f} s" for k, v in spent.items()), end="", flush=True)
    return rows


def run_order(peers: Sequence[str], racked: bool) -> list[str]:
    """The peers run on each input, in order: ``peers`` as given, with ``ours-reference`` moved
    right after ``ours`` (its skip rule reads the ``ours`` row of the same input), and on a
    racked shape ``ours-norack`` last when ``ours`` is run."""
    out = [p for p in peers if p != REFERENCE_PEER or "ours" not in peers]
    if REFERENCE_PEER in peers and "ours" in peers:
        out.insert(out.index("ours") + 1, REFERENCE_PEER)
    if racked and "ours" in peers:
        out.append("ours-norack")
    return out


def ran_reference(ours: Mapping[str, object] | None) -> bool:
    """Whether the ``ours`` row reports that its process ran the references of both the wire
    seam and the engine's steps (its ``implementation`` and ``engine_implementation``, from
    ``ours_peer.py``'s ``done`` line; a row from before the engine's steps had a twin names
    the wire alone): the ``ref`` row would repeat it."""
    return (
        ours is not None
        and ours.get("status") == "ok"
        and ours.get("implementation") == "reference"
        and ours.get("engine_implementation", "reference") == "reference"
    )


#: Where the run's wall seconds went (``--timings`` prints it): generator, peers' processes
#: split by :class:`ProcessClock`, quality. Filled by :func:`bench_shape` unless it is given
#: its own dict.
PARTS: defaultdict[str, float] = defaultdict(float)
#: CPU seconds of the same parts where they can be counted (the generator, our quality
#: measure, each peer process that finished), for an idle-machine estimate (``--timings``).
CPU: defaultdict[str, float] = defaultdict(float)


def _add_wall(
    parts: defaultdict[str, float], peer: str, row: Mapping[str, object], whole: float
) -> None:
    """Add one peer process's wall parts (``row["wall"]``) to ``parts``: its calls (cut calls
    apart), its time outside calls, and the orchestrator's own time around it."""
    wall = row.get("wall")
    if not isinstance(wall, dict):
        return
    name = peer.split("-norack")[0] if peer.startswith("ours") else peer
    kind = "cut calls" if row.get("status") == "cut" else "calls"
    parts[f"peers: {name} {kind}"] += wall["calls_s"]
    parts[f"peers: {name} start-up + input"] += wall["setup_s"]
    parts[f"peers: {name} between calls + output"] += wall["between_s"] + wall["after_s"]
    if wall.get("cpu_s") is not None and row.get("status") == "ok":
        CPU[f"peers: {name} processes (ok)"] += wall["cpu_s"]
        CPU[f"peers: {name} processes (ok), wall"] += wall["process_s"]
    parts["peers: launching, load average"] += whole - wall["process_s"]


def print_timings(parts: Mapping[str, float], total: float) -> None:
    """Where the run's wall seconds went, largest first within each part, then the CPU
    seconds of the parts that can be counted (:data:`CPU`)."""
    print(f"\nwhere the run's {total:.0f} s went (wall seconds, this machine, this load):")
    for group in ("generate", "peers", "quality"):
        keys = sorted((k for k in parts if k.split(":")[0] == group), key=lambda k: -parts[k])
        whole = sum(parts[k] for k in keys if ":" in k) if group != "generate" else parts[group]
        print(f"  {group:<8} {whole:7.1f}")
        for key in keys:
            if ":" in key:
                print(f"    {key.split(': ', 1)[1]:<40} {parts[key]:7.1f}")
    print("CPU seconds (user + system) of the parts that can be counted, beside their wall:")
    for key in sorted(CPU):
        if not key.endswith(", wall"):
            wall = CPU.get(f"{key}, wall", parts.get(key, 0.0))
            print(f"  {key:<46} cpu {CPU[key]:7.1f}  wall {wall:7.1f}")


#: Peers skipped on a shape at least as large (partitions and members) as one they were cut
#: on: kafka-python only, whose every earlier run was cut on every default shape; the runs go
#: smallest shape first (``--no-size-skip`` runs it everywhere).
SIZE_SKIP = ("kafka-python",)

#: Why Java is not run on eager ``sticky``'s ``ours`` input after a cut on the ``java``
#: input: Java's ``StickyAssignor`` reads the previous assignment from the sticky user data
#: only, and both inputs carry the same user data (tests/test_bench_fairness.py), so its
#: ``assign`` does the same work on both; the ``ours`` input only adds owned partitions for
#: ``deserializeSubscription`` to decode. A call cut on ``java`` would be cut on ``ours``.
JAVA_INPUT_RULE = "Java cut on input java is skipped on input ours (same user data, more bytes)"


def shape_size(name: str) -> tuple[int, int]:
    """A shape's partitions and members (the size :data:`SIZE_SKIP` compares)."""
    shape = SHAPES[name]
    return sum(shape.partitions.values()), len(shape.subscriptions())


def _at_least(size: tuple[int, int], cut: tuple[str, int, int]) -> bool:
    return size[0] >= cut[1] and size[1] >= cut[2]


class PlanJudge:
    """Quality figures already measured in one phase, by the plan's bytes: the same bytes
    judged against the same members (as our leader reads them) give the same figures, so
    they are measured once. Forgets everything when the members differ."""

    def __init__(self) -> None:
        self._members: list[object] | None = None
        self._figures: dict[bytes, dict[str, object]] = {}

    def members(self, members: Sequence[object]) -> None:
        if self._members != list(members):
            self._figures.clear()
            self._members = list(members)

    def get(self, plan_bytes: bytes) -> dict[str, object] | None:
        figures = self._figures.get(hashlib.sha256(plan_bytes).digest())
        return None if figures is None else dict(figures)

    def put(self, plan_bytes: bytes, figures: Mapping[str, object]) -> None:
        self._figures[hashlib.sha256(plan_bytes).digest()] = dict(figures)


def _cell(row: Mapping[str, object] | None, timeouts: Mapping[str, float | None]) -> str:
    if row is None:
        return "-"
    status = str(row.get("status"))
    if status == "cut":
        limit = row.get("limit_s") or timeouts[str(row["peer"])]
        return f"cut >{_seconds(limit):.0f}s"
    if status != "ok":
        return status.split(":")[0].split(" (")[0]
    mark = "" if row.get("warm_s") is not None or row.get("calls") != 1 else "c"
    return f"{_seconds(row['seconds']):.3f}{mark}"


def _ratio(peer: Mapping[str, object] | None, ours: Mapping[str, object] | None) -> str:
    if not peer or not ours or peer.get("seconds") is None or ours.get("seconds") is None:
        return "-"
    return f"{_seconds(peer['seconds']) / max(_seconds(ours['seconds']), 1e-9):.1f}x"


def _engine_seconds(
    engine: Mapping[str, object] | None, ours: Mapping[str, object] | None
) -> float | None:
    """The ``engine`` column: the engine step (``assign_s``) of our leader's call in the time
    table (``ours_peer.py``), or, in a ``--json`` file from before that split, the generator's
    own engine call (an ``engine`` row)."""
    if ours is not None and ours.get("status") == "ok" and ours.get("assign_s") is not None:
        return _seconds(ours["assign_s"])
    if engine is not None and engine.get("engine_s") is not None:
        return _seconds(engine["engine_s"])
    return None


def _engine_fig(engine: Mapping[str, object] | None, ours: Mapping[str, object] | None) -> str:
    seconds = _engine_seconds(engine, ours)
    return "-" if seconds is None else f"{seconds:.3f}"


def _plain_cell(ours: Mapping[str, object] | None) -> str:
    """The ``plain`` column: our leader's call without what only the hooks add, the metrics'
    description and the placement a hooked leader remembers (decode + replica racks read
    from metadata + engine + encode of the call in the ``ours`` column); ``-`` for a run (or
    a ``--json`` file from before the description was timed) without it."""
    if ours is None or ours.get("status") != "ok" or ours.get("describe_s") is None:
        return "-"
    hooks_only = _seconds(ours["describe_s"]) + _seconds(ours.get("placement_s", 0.0))
    return f"{_seconds(ours['seconds']) - hooks_only:.3f}"


def _fig(row: Mapping[str, object] | None, key: str, digits: int = 3) -> str:
    value = None if row is None or row.get("status") != "ok" else row.get(key)
    return "-" if value is None else f"{_seconds(value):.{digits}f}"


def _keys(rows: list[dict[str, object]]) -> list[tuple[str, str, str, str]]:
    keys = {
        (str(r["shape"]), str(r["protocol"]), str(r["phase"]), str(r.get("input", "ours")))
        for r in rows
    }
    return sorted(
        keys,
        key=lambda k: (
            k[1] != "sticky",
            k[1],
            _order(k[0]),
            PHASES.index(k[2]),
            INPUTS.index(k[3]),
        ),
    )


def print_tables(
    rows: list[dict[str, object]], peers: list[str], timeouts: Mapping[str, float | None]
) -> None:
    """The time table (ratios: peer / our leader, both on the same input; ``ref``, our leader on
    the wire seam's reference, beside ``ours``, with :func:`seam_line` under it), Java's split
    and cold call, then CPU, GC and load per peer, then quality and memory."""
    index: dict[tuple[object, ...], dict[str, object]] = {
        (r["shape"], r["protocol"], r["phase"], r.get("input", "ours"), r["peer"]): r for r in rows
    }
    keys = _keys(rows)
    others = [p for p in peers if p not in ("ours", REFERENCE_PEER)]
    print(
        "\ntime (s; warm: best of the calls after the first in one process, c = cold only): "
        "engine = the engine step of ours;\n"
        "plain = our leader's bytes path (decode + engine + encode, assign_from_bytes); "
        "ours = the same call as install_hooks runs it (plain + the rebalance metrics);\n"
        f"ref = ours with {PURE_PYTHON_ENV}=1 (the plain-Python references of the wire seam and "
        "the engine's steps; ours runs the compiled twin where installed: the lines under the "
        "table say which each ran); r-eng = ref's engine step;\n"
        "no-rack = ours without replica racks (racked shapes); peers: decode + assign + encode; "
        "ratio = peer / ours on the same input (franz on racked shapes: / no-rack)"
    )
    head = f"{'shape':<16} {'protocol':<6} {'phase':<6} {'input':<5} {'engine':>6} {'plain':>7}"
    head += f" {'ours':>7} {'ref':>7} {'r-eng':>6}"
    head += f" {'no-rack':>7}"
    for p in others:
        head += f" {p:>12} {'ratio':>6}"
    print(head)
    for shape, protocol, phase, source in keys:
        at = {p: index.get((shape, protocol, phase, source, p)) for p in ["engine", *peers]}
        at["ours-norack"] = index.get((shape, protocol, phase, source, "ours-norack"))
        reference = index.get((shape, protocol, phase, source, REFERENCE_PEER))
        ours, norack = at.get("ours"), at["ours-norack"]
        label = source + ("=" if ours and ours.get("same_bytes") else "")
        line = (
            f"{shape:<16} {_short(protocol):<6} {phase:<6} {label:<5} "
            f"{_engine_fig(at['engine'], ours):>6} {_plain_cell(ours):>7} "
            f"{_cell(ours, timeouts):>7} {_cell(reference, timeouts):>7} "
            f"{_fig(reference, 'assign_s'):>6} "
            f"{(_cell(norack, timeouts) if norack else '-'):>7}"
        )
        for p in others:
            r = at[p]
            against = norack if p == "franz" and norack else ours
            line += f" {_cell(r, timeouts):>12} {_ratio(r, against):>6}"
        print(line)
    print_skips(rows)
    for report in (WIRE_REPORT, ENGINE_REPORT):
        said = seam_line(rows, report)
        if said is not None:
            print(said)
    if "java" in peers:
        print(
            "\nJava's split (s): warm call (best of the calls after the first) and the cold "
            "first call; asg/eng = Java's assign / our engine"
        )
        print(
            f"{'shape':<16} {'protocol':<6} {'phase':<6} {'input':<5} {'decode':>7} {'assign':>7} "
            f"{'encode':>7} {'warm':>7} {'c-dec':>7} {'c-asg':>7} {'c-enc':>7} {'cold':>7} "
            f"{'asg/eng':>7}"
        )
        for shape, protocol, phase, source in keys:
            r = index.get((shape, protocol, phase, source, "java"))
            eng = _engine_seconds(
                index.get((shape, protocol, phase, source, "engine")),
                index.get((shape, protocol, phase, source, "ours")),
            )
            if not r or r.get("status") != "ok":
                continue
            warm = r.get("warm_s") is not None
            asg = "-"
            if eng is not None:
                asg = f"{_seconds(r['assign_s']) / max(eng, 1e-9):.1f}x"
            print(
                f"{shape:<16} {_short(protocol):<6} {phase:<6} {source:<5} "
                + "".join(
                    f" {(_fig(r, k) if warm else '-'):>7}"
                    for k in ("decode_s", "assign_s", "encode_s", "warm_s")
                )
                + "".join(
                    f" {_fig(r, k):>7}"
                    for k in ("cold_decode_s", "cold_assign_s", "cold_encode_s", "cold_s")
                )
                + f" {asg:>7}"
            )
    print(
        "\nCPU and GC (s) of the call in the time table, load average (1 min) before/after "
        "the peer's process; gc: Java the collectors' time, Go the runtime's GC CPU estimate, "
        "Python wall time in the cyclic GC"
    )
    print(
        f"{'shape':<16} {'protocol':<6} {'phase':<6} {'input':<5} {'peer':<14} {'wall':>7} "
        f"{'cpu':>7} {'cpu/our':>7} {'gc':>6} {'load':>9}"
    )
    for lead, r, ours in _measured(index, keys, [*peers, "ours-norack"]):
        load = f"{_seconds(r['load_before']):.1f}/{_seconds(r['load_after']):.1f}"
        cpu_ratio = "-"
        if ours and r.get("cpu_s") is not None and ours.get("cpu_s") is not None:
            cpu_ratio = f"{_seconds(r['cpu_s']) / max(_seconds(ours['cpu_s']), 1e-9):.1f}x"
        print(
            f"{lead} {_fig(r, 'seconds'):>7} {_fig(r, 'cpu_s'):>7} {cpu_ratio:>7} "
            f"{_fig(r, 'gc_s', 2):>6} {load:>9}"
        )
    print("\nquality (measured by our code on each peer's assignment bytes) and peak RSS")
    print(
        f"{'shape':<16} {'protocol':<6} {'phase':<6} {'input':<5} {'peer':<14} {'peak MB':>8} "
        f"{'max-min':>7} {'moved':>7} {'twice':>5} {'invalid':>7} {'unasg':>7} {'optimal':>7} "
        f"{'x-rack':>7}"
    )
    for lead, r, _ in _measured(index, keys, [*peers, "ours-norack"]):
        opt = {True: "yes", False: "NO", None: "-"}[r.get("optimal")]  # type: ignore[index]
        print(
            f"{lead} {_fig(r, 'peak_mb', 0):>8} {r['spread']!s:>7} {r['moved']!s:>7} "
            f"{r['twice']!s:>5} {r['invalid']!s:>7} {r['unassigned']!s:>7} {opt:>7} "
            f"{r.get('cross_rack', '-')!s:>7}"
        )


def print_skips(rows: Sequence[Mapping[str, object]]) -> None:
    """Under the time table: why each ``skipped`` cell was not run, with how many rows."""
    reasons: dict[tuple[str, str], int] = defaultdict(int)
    for r in rows:
        status = str(r.get("status", ""))
        if status.startswith("skipped (") and not r.get("same_bytes") and status != REFERENCE_SKIP:
            reasons[(str(r["peer"]), status[len("skipped (") : -1])] += 1
    if reasons:
        print(
            "skipped (not run): "
            + "; ".join(f"{peer} {why} ({n} rows)" for (peer, why), n in sorted(reasons.items()))
        )


class Report(NamedTuple):
    """Which of a peer's ``done`` fields name one seam's implementation (``ours_peer.py``)."""

    implementation: str  # "compiled" or "reference"
    describe: str  # the picker's describe() line, starting with ``label: ``
    label: str


WIRE_REPORT = Report("implementation", "seam", "wire seam")
ENGINE_REPORT = Report("engine_implementation", "engine_steps", "engine steps")


def seam_line(rows: Sequence[Mapping[str, object]], report: Report = WIRE_REPORT) -> str | None:
    """Under the time table, one line per seam (``report``: the wire's, or the engine
    steps'): which implementation ``ours`` and ``ref`` each ran, as each peer process
    reported it (from ``ours_peer.py``'s ``done`` line), with how many rows; on the wire's
    line also how many ``ref`` rows wrote the same assignment bytes as ``ours`` on the same
    input (``plan_sha256``) and how many ``ref`` rows were not run because ``ours`` itself
    ran the references there (:data:`REFERENCE_SKIP`). Rows that only copy another input's
    (``same_bytes``) are not counted. ``None`` when no row reports that implementation (a
    ``--json`` file from before)."""
    ran: dict[tuple[str, str], int] = defaultdict(int)
    index = {
        (r["shape"], r["protocol"], r["phase"], r.get("input", "ours"), r["peer"]): r for r in rows
    }
    same = compared = skipped = 0
    for r in rows:
        peer = r.get("peer")
        if peer not in ("ours", REFERENCE_PEER) or r.get("same_bytes"):
            continue
        if r.get("status") == REFERENCE_SKIP:
            skipped += 1
        if r.get("status") != "ok" or r.get(report.implementation) is None:
            continue
        said = r.get(report.describe) or r[report.implementation]
        ran[(str(peer), str(said).removeprefix(f"{report.label}: "))] += 1
        if peer == REFERENCE_PEER:
            key = (r["shape"], r["protocol"], r["phase"], r.get("input", "ours"), "ours")
            ours_hash = (index.get(key) or {}).get("plan_sha256")
            if ours_hash is not None and r.get("plan_sha256") is not None:
                compared += 1
                same += ours_hash == r["plan_sha256"]
    if not ran and (not skipped or report != WIRE_REPORT):
        return None
    parts = [
        f"{'ours' if peer == 'ours' else 'ref'} ran {seam} on {n} rows"
        for (peer, seam), n in sorted(ran.items())
    ]
    if compared and report == WIRE_REPORT:
        parts.append(f"ref wrote the same assignment bytes as ours on {same} of {compared} rows")
    if skipped and report == WIRE_REPORT:
        parts.append(
            f"ref not run on {skipped} rows: ours ran the references itself there "
            "(it would repeat the same work)"
        )
    return f"{report.label} (each peer's own report): " + "; ".join(parts)


def _measured(
    index: Mapping[tuple[object, ...], dict[str, object]],
    keys: list[tuple[str, str, str, str]],
    peers: list[str],
) -> list[tuple[str, dict[str, object], dict[str, object] | None]]:
    """Per row key and peer that ran on that input (not a ``same bytes`` copy) and
    finished: the row's leading columns, the row, and our leader's row on the same input
    (``no-rack`` for franz-go where there is one)."""
    out = []
    for shape, protocol, phase, source in keys:
        for p in peers:
            r = index.get((shape, protocol, phase, source, p))
            if not r or r.get("status") != "ok" or r.get("same_bytes"):
                continue
            ours = index.get((shape, protocol, phase, source, "ours"))
            if p == "franz":
                ours = index.get((shape, protocol, phase, source, "ours-norack")) or ours
            lead = f"{shape:<16} {_short(protocol):<6} {phase:<6} {source:<5} {p:<14}"
            out.append((lead, r, ours))
    return out


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
    parser.add_argument(
        "--calls",
        type=int,
        help="calls per peer process (default: Java 3, ours (and ours-reference) and franz 4, "
        "kafka-python 1); "
        "the first is the cold call",
    )
    parser.add_argument(
        "--warm-budget",
        type=float,
        help="no further warm call starts once a peer's calls took this many seconds "
        "(default: Java 8, ours (and ours-reference) and franz 3); the cold call and one warm "
        "call always run",
    )
    parser.add_argument(
        "--no-size-skip",
        action="store_true",
        help="run kafka-python on every shape (default: skipped on a shape at least as large "
        "as one it was cut on, shapes run smallest first)",
    )
    parser.add_argument("--build", action="store_true", help="run make bench-peers first")
    parser.add_argument("--json", help="also write every row to this file")
    parser.add_argument(
        "--timings",
        action="store_true",
        help="print where the run's wall time went (generator steps, each peer's start-up, "
        "calls, cut calls and output, quality)",
    )
    parser.add_argument(
        "--tables", metavar="JSON", help="print the tables of an earlier run's --json file only"
    )
    args = parser.parse_args(argv)
    if args.generate:
        generate(args.generate[0], args.generate[1], Path(args.generate[2]))
        return 0
    peers = [p for p in args.peers.split(",") if p]
    calls = {p: args.calls or n for p, n in DEFAULT_CALLS.items()}
    calls["kafka-python"] = 1 if args.calls is None else args.calls
    budget = {p: args.warm_budget or b for p, b in DEFAULT_BUDGET.items()}
    timeouts: dict[str, float | None] = {
        "ours": None,
        "ours-reference": None,
        "ours-norack": None,
        "franz": args.peer_timeout,
        "java": args.peer_timeout,
        "kafka-python": args.kafka_python_timeout,
    }
    if args.tables:
        print_tables(json.loads(Path(args.tables).read_text()), peers, timeouts)
        return 0
    if args.build:
        build_peers()
    for p in peers:
        cmd = peer_command(p)
        if isinstance(cmd, str):
            print(f"bench: {p} peer {cmd}: its column reads unavailable")
    runs = [(s, p) for s in args.shapes.split(",") if s for p in args.protocols.split(",") if p]
    runs += [
        (s, "cooperative-sticky")
        for s in args.cooperative_shapes.split(",")
        if s and (s, "cooperative-sticky") not in runs
    ]
    smaller_cuts: dict[str, tuple[str, int, int]] | None = None
    if not args.no_size_skip:
        smaller_cuts = {}
        sizes = {s: shape_size(s) for s, _ in runs}
        runs.sort(key=lambda run: sizes[run[0]])  # stable: protocols keep their order
    began = time.monotonic()
    load = "/".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"bench (python {sys.version.split()[0]}, {os.cpu_count()} cpus, load average {load}): "
        f"{len(runs)} runs"
    )
    rows: list[dict[str, object]] = []
    announced = False  # the line saying that ref is not run (ours ran the reference) printed
    workdir = ROOT / "build" / "bench"
    workdir.mkdir(parents=True, exist_ok=True)
    for shape, protocol in runs:
        t0 = time.monotonic()
        rows.extend(
            bench_shape(
                shape, protocol, peers, timeouts, workdir, calls, budget, None, smaller_cuts
            )
        )
        print(f" -- {shape} {protocol}: {time.monotonic() - t0:.0f} s", flush=True)
        if not announced and any(r.get("status") == REFERENCE_SKIP for r in rows):
            announced = True
            print(f"bench: {seam_line(rows)}", flush=True)
        if args.json:  # after every shape, so that a stopped run keeps what it measured
            Path(args.json).write_text(json.dumps(rows, indent=1))
    print_tables(rows, peers, timeouts)
    if args.timings:
        print_timings(PARTS, time.monotonic() - began)
    load = "/".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"\nwhole run: {time.monotonic() - began:.0f} s (load average at the end {load})")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
