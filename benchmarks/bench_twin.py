"""The wire seam's cost, compiled twin against the plain-Python reference, on the benchmark
shapes (``make bench-twin``; figures only, nothing is asserted).

Per shape, the ``rejoin`` phase (every member owns its fresh partitions at generation 1, one
newcomer with the first member's topics), for ``cooperative-sticky`` (our members' bytes:
owned partitions in the subscription, 4-byte user data) and ``sticky`` (Java members'
bytes: the previous assignment in the user data): the seam's two steps, each timed with
:mod:`kafka_sticky_plugin.codec.seam` (the reference) and with
:mod:`kafka_sticky_plugin.codec.implementation` (the twin), CPU seconds, best of
``--repeat`` calls with the cyclic collector paused as the leader does:

- ``read``: ``read_subscriptions`` of every member's metadata (with its user data's claim);
- ``write``: ``write_assignments`` of the engine's plan for the same members;

then the leader's whole call (``assign_group``: read, claims, engine, write) both ways.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from bench_leader import _member_metadata  # noqa: E402
from java_form import java_metadata  # noqa: E402
from shapes import SHAPES  # noqa: E402

from kafka_sticky_plugin.assignor.leader import (  # noqa: E402
    MemberMetadata,
    assign_group,
    read_group,
)
from kafka_sticky_plugin.assignor.strategies import strategy_named  # noqa: E402
from kafka_sticky_plugin.codec import decode_assignment, implementation, seam  # noqa: E402

DEFAULT_SHAPES = ("NESTED-10k", "HET-100k", "H-1M", "HET-1M")
#: protocol -> whose bytes the members send
INPUTS = {"cooperative-sticky": "ours", "sticky": "java"}


def _best(fn: Callable[[], Any], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        try:
            start = time.process_time()
            fn()
            best = min(best, time.process_time() - start)
        finally:
            gc.enable()
    return best


def _rejoin(shape_name: str, protocol: str) -> tuple[Any, list[MemberMetadata]]:
    shape = SHAPES[shape_name]
    subs = shape.subscriptions()
    racks = shape.member_racks(subs)
    fresh = assign_group(
        protocol,
        shape.partitions,
        [MemberMetadata(m, raw) for m, raw in _member_metadata(protocol, subs, None).items()],
    )
    previous = {m: list(decode_assignment(raw).partitions) for m, raw in fresh.items()}
    if INPUTS[protocol] == "java":
        metadata = java_metadata(protocol, subs, racks, previous)
    else:
        metadata = _member_metadata(protocol, subs, previous)
    metadata.update(_member_metadata(protocol, {"member-new": next(iter(subs.values()))}, None))
    return shape, [MemberMetadata(m, raw) for m, raw in metadata.items()]


def row(shape_name: str, protocol: str, repeat: int) -> dict[str, Any]:
    """One shape and input: each step's (reference, compiled) CPU seconds."""
    twin = implementation.twin
    shape, members = _rejoin(shape_name, protocol)
    payloads = [bytes(m.metadata) for m in members]
    cooperative = protocol == "cooperative-sticky"
    reads = [
        r
        for r in seam.read_subscriptions(payloads, cooperative)
        if isinstance(r, seam.SubscriptionRead)
    ]
    group = read_group(protocol, members)
    dense = strategy_named(protocol).assign_dense(shape.partitions, group.specs)
    layout = dense.layout
    plans = [dense.indices(m) for m in range(len(layout.member_ids))]
    write_args = (group.version, layout.topics, layout.counts, plans)
    steps: dict[str, tuple[Callable[[], Any], Callable[[], Any]]] = {
        "read": (
            lambda: seam.read_subscriptions(payloads, cooperative),
            lambda: implementation.read_subscriptions(payloads, cooperative),
        ),
        "write": (
            lambda: seam.write_assignments(*write_args),
            lambda: implementation.write_assignments(*write_args),
        ),
    }
    out: dict[str, Any] = {
        "shape": shape_name,
        "input": f"{protocol} ({INPUTS[protocol]})",
        "pairs": sum(len(r.owned[2]) for r in reads),
    }
    for step, (reference, compiled) in steps.items():
        out[step] = (_best(reference, repeat), _best(compiled, repeat))
    assert steps["write"][0]() == steps["write"][1]()

    def leader() -> Any:
        return assign_group(protocol, shape.partitions, members)

    compiled_leader = _best(leader, repeat)
    implementation.twin = None
    try:
        out["leader"] = (_best(leader, repeat), compiled_leader)
    finally:
        implementation.twin = twin
    return out


def _format(row: dict[str, Any]) -> str:
    cells = [f"{row['shape']:<11}", f"{row['input']:<28}", f"{row['pairs']:>9,}"]
    for step in ("read", "write", "leader"):
        reference, compiled = row[step]
        speedup = reference / compiled if compiled > 0 else float("inf")
        cells.append(f"{reference:8.3f} {compiled:7.3f} ({speedup:5.1f}x)")
    return " | ".join(cells)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", nargs="*", default=list(DEFAULT_SHAPES))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    print(implementation.describe())
    print(
        "shape       | input                        |     owned | read: reference compiled"
        " | write | leader (assign_group), CPU s"
    )
    if implementation.twin is None:
        raise SystemExit(f"bench-twin: {implementation.describe()} (make twin)")
    for shape_name in args.shapes:
        for protocol in INPUTS:
            print(_format(row(shape_name, protocol, args.repeat)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
