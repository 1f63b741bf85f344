"""What the rebalance metrics cost: the leader's assignment and a member's per-rebalance
bookkeeping, with metrics on (as the hooks run) and off.

Leader: for each shape (members x partitions, one topic; ``rejoin``: every member owns its
share at generation 1 and one new member joins, so claims are read and partitions move), the
members' JoinGroup bytes are decoded once (:func:`read_group`) and then timed:

- ``off``: ``DecodedGroup.assign`` (engine + encode, what the hooks did before metrics);
- ``on``: :func:`~kafka_sticky_plugin.metrics.observe.assign_observed` (engine and encode
  timed apart, plus :func:`~kafka_sticky_plugin.metrics.leader_round` classifying every claim
  and counting moves and rack locality).

Member: the recorder calls one rebalance makes (``join_attempt``, ``join_succeeded``, two
timed callbacks) against nothing. Best CPU time of ``--repeat`` runs (CPU, not wall: a
shared machine's load inflates wall time); figures, never assertions.
Run: ``python benchmarks/bench_metrics.py`` (``make bench-metrics``).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from functools import partial

from kafka_sticky_plugin.assignor.leader import MemberMetadata, read_group
from kafka_sticky_plugin.codec import Subscription, encode_subscription
from kafka_sticky_plugin.metrics import RebalanceMetrics
from kafka_sticky_plugin.metrics.observe import assign_observed

SHAPES = {"S-100x1k": (100, 1_000), "M-500x50k": (500, 50_000), "L-1000x200k": (1_000, 200_000)}


def _best(run: Callable[[], object], repeat: int) -> float:
    """Best CPU seconds of ``repeat`` runs (CPU time: the machine may be shared and loaded)."""
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        run()
        best = min(best, time.process_time() - started)
    return best


def _rejoin_members(members: int, partitions: int) -> list[MemberMetadata]:
    """``members`` owning a contiguous share each at generation 1, plus one new member."""
    topic = "t"
    share = partitions // members
    out = []
    for m in range(members):
        owned = tuple((topic, p) for p in range(m * share, (m + 1) * share))
        sub = Subscription(3, (topic,), None, owned, 1, None)
        out.append(MemberMetadata(f"m{m:05d}", encode_subscription(sub)))
    out.append(MemberMetadata("new", encode_subscription(Subscription(3, (topic,)))))
    return out


def leader_rows(shapes: list[str], repeat: int) -> list[tuple[str, float, float]]:
    rows = []
    for name in shapes:
        members, partitions = SHAPES[name]
        group = read_group("cooperative-sticky", _rejoin_members(members, partitions))
        counts = {"t": partitions}
        off = _best(partial(group.assign, counts), repeat)
        metrics = RebalanceMetrics("bench")
        on = _best(partial(assign_observed, metrics, group, counts, None, decode_s=0.0), repeat)
        rows.append((name, off, on))
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
    parser.add_argument("--shapes", nargs="*", default=list(SHAPES), choices=list(SHAPES))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    print(f"{'shape':<14}{'off cpu s':>14}{'on cpu s':>14}{'overhead':>10}")
    for name, off, on in leader_rows(args.shapes, args.repeat):
        print(f"{name:<14}{off:>14.4f}{on:>14.4f}{(on / off - 1) * 100:>9.1f}%")
    per_round = member_cost(10_000)
    print(f"member: recorder calls per rebalance {per_round * 1e6:.1f} us (metrics off: none)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
