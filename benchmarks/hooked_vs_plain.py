"""The hooked leader against the plain call on ``make bench``'s inputs, in one process.

Usage: ``python benchmarks/hooked_vs_plain.py [--calls N] [--reference COMMIT] [--given-racks]
[--dict-racks] [INPUT...]``
(inputs: ``build/bench/*.in`` by default, as ``run.py --generate SHAPE PROTOCOL build/bench``
writes them). For each input, ``plain`` (``read_group``, then ``DecodedGroup.assign``: what
``assign_from_bytes`` and a consumer without the hooks run) and ``hooked`` (``read_group``,
then :func:`~kafka_sticky_plugin.metrics.observe.assign_observed`: what every
``install_hooks`` leader runs), each in one pause of the cyclic collector that frees the
decoded group inside it, as those paths do, are called in turn, ``--calls`` times after one
warm-up each, and the best CPU seconds of each are printed with their ratio; the bytes of
every call are checked equal. ``--reference COMMIT`` also times the hooked call with that commit's
``metrics/leader_round.py`` (read with ``git show``), in the same turns. Both calls run in
the same process, one after the other, so the ratio holds on a loaded machine where the
seconds do not.

Replica racks (the racked shapes): ``plain`` is given them as a
:class:`~kafka_sticky_plugin.core.replica_racks.ReplicaRacks` built untimed (what an
``assign_from_bytes`` caller holding them passes; ``--dict-racks``: the plain dict). A
consumer reads them from its cluster metadata on every leader assignment, so by default
(unless ``--given-racks``) the input's racks are also put in a real kafka-python
``ClusterMetadata`` (``racked_metadata.py``, untimed: the client holds it already) and two
calls read them from it, timed: ``cluster`` (``assign_cluster``: a kafka-python consumer
without the hooks) and ``hooked`` (the hooks' path, ``assign_from_cluster``: ``leader_racks``,
the replica racks and the placement a racked leader remembers on a ``RackTracker``, then
``assign_observed``). The row then prints
hooked / cluster (both read the metadata: the user's two paths) and hooked / plain, and
``racks``: the best seconds of the hooked call's ``leader_racks``. Figures only
(docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from peer_files import read_input  # noqa: E402
from racked_metadata import cluster_metadata  # noqa: E402

import kafka_sticky_plugin.metrics.observe as observe  # noqa: E402
from kafka_sticky_plugin.assignor.leader import (  # noqa: E402
    MemberMetadata,
    PartitionRacks,
    read_group,
)
from kafka_sticky_plugin.assignor.rack_changes import RackTracker  # noqa: E402
from kafka_sticky_plugin.assignor.racks import leader_racks  # noqa: E402
from kafka_sticky_plugin.core.gc_pause import cyclic_gc_paused  # noqa: E402
from kafka_sticky_plugin.core.replica_racks import ReplicaRacks  # noqa: E402
from kafka_sticky_plugin.groups.assignor_names import assignor_class  # noqa: E402
from kafka_sticky_plugin.metrics import RebalanceMetrics  # noqa: E402

Call = Callable[[], dict[str, bytes]]


def reference_module(commit: str, workdir: Path) -> ModuleType:
    """``metrics/leader_round.py`` of ``commit``, imported on its own (its relative imports
    made absolute: the rest of the package is this checkout's)."""
    source = subprocess.run(
        ["git", "show", f"{commit}:kafka_sticky_plugin/metrics/leader_round.py"],
        cwd=HERE.parent,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.replace("from ..", "from kafka_sticky_plugin.")
    path = workdir / "reference_leader_round.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("reference_leader_round", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def best_cpu(calls: dict[str, Call], n: int) -> dict[str, float]:
    """Best CPU seconds of each call over ``n`` turns (each call once per turn, in order,
    after one warm-up turn); every call's bytes must equal the first's."""
    best = dict.fromkeys(calls, float("inf"))
    for turn in range(n + 1):
        outs = []
        for name, call in calls.items():
            started = time.process_time()
            outs.append(call())
            if turn:
                best[name] = min(best[name], time.process_time() - started)
        if any(out != outs[0] for out in outs):
            raise AssertionError("the calls returned different bytes")
        del outs
        gc.collect()
    return best


def calls_on(
    protocol: str,
    members: list[MemberMetadata],
    partitions: dict[str, int],
    racks: PartitionRacks | None,
    describers: dict[str, Callable[..., object]],
    cluster: Any = None,
    racks_cpu: list[float] | None = None,
) -> dict[str, Call]:
    """``plain`` and one hooked call per ``describers`` entry (a ``leader_round`` function
    that ``assign_observed`` calls) on one input; with a ``cluster`` (metadata holding the
    input's replica racks), ``cluster`` too, and the hooked calls read the racks from it
    (their ``leader_racks`` CPU seconds appended to ``racks_cpu``)."""

    def plain() -> dict[str, bytes]:
        with cyclic_gc_paused():  # as assign_from_bytes: the group freed inside the pause
            return read_group(protocol, members).assign(partitions, partition_racks=racks)

    def on_cluster() -> dict[str, bytes]:
        out: dict[str, bytes] = assignor_class(protocol)().assign_cluster(cluster, members)
        return out

    def hooked(describe: Callable[..., object]) -> dict[str, bytes]:
        with cyclic_gc_paused():  # as the kafka-python hooks: the group freed inside the pause
            return hooked_round(describe)

    def hooked_round(describe: Callable[..., object]) -> dict[str, bytes]:
        setattr(observe, "leader_round", describe)  # noqa: B010 (the module's own name)
        started = time.perf_counter()
        group = read_group(protocol, members)
        decode_s = time.perf_counter() - started
        recorder = RebalanceMetrics("bench")
        if cluster is None:
            return observe.assign_observed(recorder, group, partitions, racks, decode_s=decode_s)
        return observe.assign_from_cluster(
            recorder, RackTracker(), cluster, group, partitions, decode_s=decode_s
        )

    def timed_racks(*args: Any) -> Any:
        """``leader_racks`` as ``assign_from_cluster`` calls it, its CPU seconds kept."""
        cpu = time.process_time()
        out = leader_racks(*args)
        if racks_cpu is not None:
            racks_cpu.append(time.process_time() - cpu)
        return out

    setattr(observe, "leader_racks", timed_racks)  # noqa: B010 (the module's own name)

    calls: dict[str, Call] = {"plain": plain}
    if cluster is not None:
        calls["cluster"] = on_cluster
    for name, describe in describers.items():
        calls[name] = partial(hooked, describe)
    return calls


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("inputs", nargs="*", type=Path)
    parser.add_argument("--calls", type=int, default=4)
    parser.add_argument("--reference", metavar="COMMIT")
    parser.add_argument(
        "--dict-racks", action="store_true", help="replica racks as a plain dict, not as the hooks"
    )
    parser.add_argument(
        "--given-racks",
        action="store_true",
        help="no call reads the replica racks from cluster metadata (all are given them)",
    )
    args = parser.parse_args(argv)
    inputs = args.inputs or sorted((HERE.parent / "build" / "bench").glob("*.in"))
    current = getattr(observe, "leader_round")  # noqa: B009
    describers: dict[str, Callable[..., object]] = {"hooked": current}
    if args.reference:
        with tempfile.TemporaryDirectory() as tmp:
            describers["reference"] = reference_module(args.reference, Path(tmp)).leader_round
    for path in inputs:
        shape, protocol, phase, source = path.name.removesuffix(".in").split(".")
        partitions, metadata, pairs = read_input(path)
        racks = pairs if args.dict_racks or pairs is None else ReplicaRacks.from_pairs(pairs)
        cluster = None if args.given_racks or pairs is None else cluster_metadata(partitions, pairs)
        del pairs
        members = [MemberMetadata(m, data) for m, data in metadata.items()]
        del metadata
        racks_cpu: list[float] = []
        calls = calls_on(protocol, members, partitions, racks, describers, cluster, racks_cpu)
        try:
            best = best_cpu(calls, args.calls)
        finally:
            setattr(observe, "leader_round", current)  # noqa: B010
            setattr(observe, "leader_racks", leader_racks)  # noqa: B010
        del calls, cluster
        cells = [f"plain {best['plain']:.3f}"]
        if "cluster" in best:
            cells.append(f"cluster {best['cluster']:.3f}")
        cells.append(f"hooked {best['hooked']:.3f}")
        if "cluster" in best:
            cells.append(f"hooked/cluster {best['hooked'] / best['cluster']:.2f}x")
        cells.append(f"hooked/plain {best['hooked'] / best['plain']:.2f}x")
        if racks_cpu:
            cells.append(f"racks {min(racks_cpu):.3f}")
        if args.reference:
            cells.append(f"{args.reference[:7]} {best['reference'] / best['plain']:.2f}x")
        print(f"{shape:<17} {protocol:<18} {phase:<6} {source:<4} " + "  ".join(cells), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
