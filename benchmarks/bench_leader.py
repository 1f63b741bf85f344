"""The leader's whole ``assign()`` (decode, engine, encode) against the engine alone.

For each phase of a shape (``fresh``: nobody owns anything; ``rejoin``: every member owns
its fresh partitions at generation 1 and one new member joins), every member's JoinGroup
metadata is produced by a real assignor instance (``metadata(topics)`` after
``on_assignment``), exactly the bytes the leader would receive. Timed:

- ``engine``: ``sticky_assign``/``cooperative_assign`` on the equivalent ``MemberSpec``s;
- ``leader``: ``assign_from_bytes`` on the raw metadata (decode + engine + encode);
- ``leader_3x`` (with ``--kafka-python-objects``): ``assign(cluster, members)`` with each
  member's metadata already decoded by kafka-python 3.x's own decoder, as its coordinator
  passes it without our hooks; that decode happens before ``assign()`` and is timed apart
  (``kp dec s``): it is what ``install_hooks`` saves a 3.x leader.

The ratio ``leader / engine`` is the cost of the wire layer (target: at most 2), with the
engine timed as ``benchmarks/run.py`` does (the call only). ``ratio*`` divides by the
like-for-like engine figure ``engine*``: the call plus freeing its plan (a leader frees it
inside ``assign()``, about 0.15 s for a million partitions), under the same cyclic-GC pause
the leader takes, so the wire layer gets credit for neither.

Importable: :func:`leader_rows` returns the rows for ``benchmarks/run.py``; runnable alone:
``python benchmarks/bench_leader.py --shapes H-1M``.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from shapes import SHAPES  # noqa: E402

from kafka_sticky_plugin.assignor.leader import member_spec  # noqa: E402
from kafka_sticky_plugin.assignor.strategies import STRATEGIES, strategy_named  # noqa: E402
from kafka_sticky_plugin.codec import (  # noqa: E402
    Assignment,
    decode_assignment,
    decode_subscription,
)
from kafka_sticky_plugin.groups.assignor_names import assignor_class  # noqa: E402

PHASES = ("fresh", "rejoin")


def _timed(fn: Any, *args: Any, gc_paused: bool = False, repeat: int = 1) -> tuple[Any, float]:
    """``fn(*args)`` and its best wall time over ``repeat`` runs (the machine is shared)."""
    best = float("inf")
    out: Any = None
    for _ in range(repeat):
        out = None
        gc.collect()
        if gc_paused:
            gc.disable()
        try:
            start = time.perf_counter()
            out = fn(*args)
            best = min(best, time.perf_counter() - start)
        finally:
            gc.enable()
    return out, best


def _member_metadata(
    protocol: str,
    subs: Mapping[str, list[str]],
    previous: Mapping[str, list[tuple[str, int]]] | None,
) -> dict[str, bytes]:
    """What each member sends: a fresh assignor instance, fed its previous assignment."""
    out: dict[str, bytes] = {}
    for member_id, topics in subs.items():
        assignor = assignor_class(protocol)()
        if previous is not None and member_id in previous:
            assignor.on_assignment(Assignment(3, tuple(previous[member_id])), 1)
        out[member_id] = assignor.metadata(topics)
    return out


class _Cluster:
    """Partition counts the way kafka-python's ClusterMetadata answers (a set per topic)."""

    def __init__(self, partitions: Mapping[str, int]) -> None:
        self._sets = {t: set(range(n)) for t, n in partitions.items()}

    def partitions_for_topic(self, topic: str) -> set[int] | None:
        return self._sets.get(topic)


def leader_rows(
    shapes: list[str] | None = None,
    protocols: tuple[str, ...] = tuple(STRATEGIES),
    kafka_python_objects: bool = False,
    repeat: int = 3,
) -> list[dict[str, object]]:
    """One row per (shape, protocol, phase): engine and leader seconds (best of ``repeat``)
    and their ratio."""
    rows: list[dict[str, object]] = []
    for shape_name in shapes or ["H-1M"]:
        shape = SHAPES[shape_name]
        subs = shape.subscriptions()
        for protocol in protocols:
            engine = strategy_named(protocol).engine
            assignor = assignor_class(protocol)()
            fresh_plan: dict[str, list[tuple[str, int]]] | None = None
            for phase in PHASES:
                phase_subs = dict(subs)
                if phase == "rejoin":
                    phase_subs["member-new"] = next(iter(subs.values()))
                metadata = _member_metadata(protocol, phase_subs, fresh_plan)
                specs = [
                    member_spec(m, decode_subscription(raw), protocol)
                    for m, raw in metadata.items()
                ]
                plan, engine_s = _timed(engine, shape.partitions, specs, repeat=repeat)
                expected = {m: tuple(p) for m, p in plan.items()}
                del plan
                _, engine_nogc_s = _timed(
                    _engine_and_free, engine, shape.partitions, specs, gc_paused=True, repeat=repeat
                )
                result, leader_s = _timed(
                    assignor.assign_from_bytes, shape.partitions, metadata, repeat=repeat
                )
                got = {m: _decode_assignment_partitions(v) for m, v in result.items()}
                if got != expected:
                    raise RuntimeError(f"{shape_name}/{protocol}/{phase}: leader != engine plan")
                del expected, got
                row: dict[str, object] = {
                    "shape": shape_name,
                    "protocol": protocol,
                    "phase": phase,
                    "engine_s": round(engine_s, 3),
                    "engine_like_for_like_s": round(engine_nogc_s, 3),
                    "leader_s": round(leader_s, 3),
                    "ratio": round(leader_s / engine_s, 2) if engine_s else None,
                    "ratio_like_for_like": round(leader_s / engine_nogc_s, 2)
                    if engine_nogc_s
                    else None,
                    "metadata_mb": round(sum(map(len, metadata.values())) / 2**20, 1),
                }
                if kafka_python_objects:
                    from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription

                    decoded, kp_decode_s = _timed(
                        _kafka_python_decode, ConsumerProtocolSubscription, metadata
                    )
                    members = [_JoinMember(m, sub) for m, sub in decoded.items()]
                    del decoded
                    _, leader_3x_s = _timed(
                        assignor.assign, _Cluster(shape.partitions), members, repeat=repeat
                    )
                    row["kafka_python_decode_s"] = round(kp_decode_s, 3)
                    row["leader_3x_s"] = round(leader_3x_s, 3)
                    row["ratio_3x"] = round(leader_3x_s / engine_s, 2) if engine_s else None
                rows.append(row)
                if phase == "fresh":
                    fresh_plan = {
                        m: list(_decode_assignment_partitions(v)) for m, v in result.items()
                    }
    return rows


def _kafka_python_decode(codec: Any, metadata: Mapping[str, bytes]) -> dict[str, Any]:
    """What kafka-python 3.x's coordinator does to every member's metadata before calling
    ``assign()`` (without our hooks, which hand the leader the raw bytes instead)."""
    return {m: codec.decode(raw) for m, raw in metadata.items()}


def _engine_and_free(engine: Any, partitions: Mapping[str, int], specs: list[Any]) -> None:
    """The engine's call plus freeing its plan (the leader pays both inside ``assign()``)."""
    engine(partitions, specs)


class _JoinMember:
    """The attributes kafka-python's JoinGroup member carries into ``assign()``."""

    def __init__(self, member_id: str, metadata: object) -> None:
        self.member_id = member_id
        self.metadata = metadata
        self.group_instance_id = None


def _decode_assignment_partitions(raw: bytes) -> tuple[tuple[str, int], ...]:
    return decode_assignment(raw).partitions


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default="H-1M", help=f"comma-separated, from {list(SHAPES)}")
    parser.add_argument("--protocols", default=",".join(STRATEGIES))
    parser.add_argument("--kafka-python-objects", action="store_true")
    parser.add_argument("--repeat", type=int, default=3, help="best of N runs per figure")
    args = parser.parse_args(argv)
    print(
        f"{'shape':<11} {'protocol':<19} {'phase':<7} {'engine s':>9} {'engine*':>8} "
        f"{'leader s':>9} {'ratio':>6} {'ratio*':>6} {'meta MB':>8}"
        + (f" {'kp dec s':>8} {'3.x s':>8} {'ratio':>6}" if args.kafka_python_objects else "")
    )
    for row in leader_rows(
        args.shapes.split(","),
        tuple(args.protocols.split(",")),
        args.kafka_python_objects,
        args.repeat,
    ):
        line = (
            f"{row['shape']!s:<11} {row['protocol']!s:<19} {row['phase']!s:<7} "
            f"{row['engine_s']!s:>9} {row['engine_like_for_like_s']!s:>8} {row['leader_s']!s:>9} "
            f"{row['ratio']!s:>6} {row['ratio_like_for_like']!s:>6} {row['metadata_mb']!s:>8}"
        )
        if args.kafka_python_objects:
            line += (
                f" {row['kafka_python_decode_s']!s:>8} {row['leader_3x_s']!s:>8}"
                f" {row['ratio_3x']!s:>6}"
            )
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
