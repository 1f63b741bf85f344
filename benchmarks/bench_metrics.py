"""What the rebalance metrics cost: the leader's assignment and a member's per-rebalance
bookkeeping, with metrics on (as the hooks run) and off.

Leader: for each shape (partitions spread over many topics, every member subscribed to all
of them; every member owns its share of the fresh plan at generation 5 and the last member
is gone, so claims are read and partitions move; ``-r3``: 3 racks, each partition with
replicas on 2 of them, members on racks in turn), the members' JoinGroup bytes are decoded
once (:func:`read_group`) and then timed:

- ``plain``: ``DecodedGroup.assign`` (engine + encode: ``assign_from_bytes`` after the
  decode);
- ``hooked``: :func:`~kafka_sticky_plugin.metrics.observe.assign_observed` (what every
  ``install_hooks`` leader runs: the same engine and encode, timed apart, plus
  :func:`~kafka_sticky_plugin.metrics.leader_round` describing the round from the engine's
  dense plan: claims honoured, moved and refused, rack locality).

Member: the recorder calls one rebalance makes (``join_attempt``, ``join_succeeded``, two
timed callbacks) against nothing. Best CPU time of ``--repeat`` runs (CPU, not wall: a
shared machine's load inflates wall time); figures, never assertions.
Run: ``python benchmarks/bench_metrics.py [--shapes ...]`` (``make bench-metrics``).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from functools import partial

from kafka_sticky_plugin.assignor.leader import MemberMetadata, read_group
from kafka_sticky_plugin.codec import encode_subscription, subscription_of
from kafka_sticky_plugin.core import MemberSpec, cooperative_assign
from kafka_sticky_plugin.metrics import RebalanceMetrics
from kafka_sticky_plugin.metrics.observe import assign_observed

#: name -> (partitions, topics, members before one is gone, racks)
SHAPES = {
    "12p-3t": (12, 3, 4, 0),
    "5k-50t": (5_000, 50, 100, 0),
    "200k-100t": (200_000, 100, 400, 0),
    "200k-100t-r3": (200_000, 100, 400, 3),
    "1M-500t": (1_000_000, 500, 2_000, 0),
}
DEFAULT_SHAPES = ["12p-3t", "5k-50t", "200k-100t", "200k-100t-r3", "1M-500t"]

PartitionRacks = dict[tuple[str, int], tuple[str, ...]]


def _best(run: Callable[[], object], repeat: int) -> float:
    """Best CPU seconds of ``repeat`` runs (CPU time: the machine may be shared and loaded)."""
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        run()
        best = min(best, time.process_time() - started)
    return best


def leader_input(name: str) -> tuple[list[MemberMetadata], dict[str, int], PartitionRacks | None]:
    """One shape's JoinGroup members (the last of the fresh plan's members gone), partition
    counts and replica racks (see the module docstring)."""
    partitions, n_topics, n_members, n_racks = SHAPES[name]
    topics = [f"topic-{t:04d}" for t in range(n_topics)]
    counts = dict.fromkeys(topics, partitions // n_topics)
    ids = [f"member-{i:05d}" for i in range(n_members)]
    rack = {m: f"rack-{i % n_racks}" if n_racks else None for i, m in enumerate(ids)}
    replicas: PartitionRacks | None = None
    if n_racks:
        replicas = {
            (t, p): (f"rack-{p % n_racks}", f"rack-{(p + 1) % n_racks}")
            for t, n in counts.items()
            for p in range(n)
        }
    specs = [MemberSpec(member_id=m, topics=topics, rack=rack[m]) for m in ids]
    fresh = cooperative_assign(counts, specs, partition_racks=replicas)
    members = [
        MemberMetadata(
            m,
            encode_subscription(
                subscription_of(topics, owned_partitions=fresh[m], generation_id=5, rack_id=rack[m])
            ),
        )
        for m in ids[:-1]
    ]
    return members, counts, replicas


def leader_rows(shapes: list[str], repeat: int) -> list[tuple[str, float, float]]:
    rows = []
    for name in shapes:
        members, counts, replicas = leader_input(name)
        group = read_group("cooperative-sticky", members)
        plain = _best(partial(group.assign, counts, partition_racks=replicas), repeat)
        metrics = RebalanceMetrics("bench")
        hooked = _best(
            partial(assign_observed, metrics, group, counts, replicas, decode_s=0.0), repeat
        )
        rows.append((name, plain, hooked))
    return rows


def member_cost(rounds: int) -> float:
    """Seconds per rebalance of the recorder calls a member makes."""
    metrics = RebalanceMetrics("bench", assigned=lambda: 0)
    started = time.process_time()
    for generation in range(rounds):
        metrics.join_attempt()
        metrics.join_succeeded(generation, added=1, revoked=1)
        with metrics.timed_callback("revoked", 1):
            pass
        with metrics.timed_callback("assigned", 1):
            pass
    return (time.process_time() - started) / rounds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", nargs="*", default=DEFAULT_SHAPES, choices=list(SHAPES))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    print(f"{'shape':<14}{'plain cpu s':>14}{'hooked cpu s':>14}{'hooked/plain':>14}")
    for name, plain, hooked in leader_rows(args.shapes, args.repeat):
        print(f"{name:<14}{plain:>14.4f}{hooked:>14.4f}{hooked / plain:>13.2f}x", flush=True)
    per_round = member_cost(10_000)
    print(f"member: recorder calls per rebalance {per_round * 1e6:.1f} us (metrics off: none)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
