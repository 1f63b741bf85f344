"""kafka-python's own sticky assignor as a peer process, on the same input file as the others.

Usage: ``python benchmarks/kafka_python_peer.py sticky INPUT OUTPUT [CALLS [BUDGET_S]]`` (the
call protocol: ``peer_calls.py``). kafka-python 3.x has no cooperative-sticky assignor and
no rack-aware one. Timed apart in each call:

- ``decode_s``: ``ConsumerProtocolSubscription.decode`` of every member's metadata, what its
  coordinator does before it calls ``assign()``;
- ``assign_s``: ``StickyPartitionAssignor().assign(cluster, members)`` (it reads the previous
  assignment from the sticky user data);
- ``encode_s``: ``encode()`` of every member's ``ConsumerProtocolAssignment``.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from peer_calls import call_args, emit, run_calls
from peer_files import read_input, write_output


class StaticCluster:
    """The part of kafka-python's ``ClusterMetadata`` its assignors read."""

    def __init__(self, partitions: dict[str, int]) -> None:
        self._partitions = {t: set(range(n)) for t, n in partitions.items()}

    def partitions_for_topic(self, topic: str) -> set[int] | None:
        return self._partitions.get(topic)

    def topics(self, exclude_internal_topics: bool = True) -> set[str]:
        return set(self._partitions)

    def available_partitions_for_topic(self, topic: str) -> set[int] | None:
        return self._partitions.get(topic)


@dataclass
class Member:
    """The attributes kafka-python's JoinGroup member carries into ``assign()``."""

    member_id: str
    metadata: Any
    group_instance_id: str | None = None


def main(argv: list[str]) -> int:
    from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor
    from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription

    protocol, source, target = argv[:3]
    if protocol != "sticky":
        print(f"kafka-python has no {protocol} assignor", file=sys.stderr)
        return 2
    calls, budget = call_args(argv)
    partitions, metadata, _racks = read_input(Path(source))
    cluster = StaticCluster(partitions)

    def call() -> tuple[dict[str, bytes], dict[str, float]]:
        t0 = time.perf_counter()
        members = [
            Member(m, ConsumerProtocolSubscription.decode(raw)) for m, raw in metadata.items()
        ]
        t1 = time.perf_counter()
        plan = StickyPartitionAssignor().assign(cluster, members)
        t2 = time.perf_counter()
        encoded = {m: a.encode() for m, a in plan.items()}
        t3 = time.perf_counter()
        return encoded, {"decode_s": t1 - t0, "assign_s": t2 - t1, "encode_s": t3 - t2}

    encoded, done = run_calls(call, calls, budget)
    write_output(Path(target), encoded or {})
    emit({"done": True, "racks": False, "calls": done})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
