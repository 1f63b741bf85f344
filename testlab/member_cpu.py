"""What one member costs its machine in steady state, per client: where the group-size curve
stops on a small machine, and why (issue 38).

``python -m testlab.member_cpu`` (``make bench-member-cpu``) starts Apache Kafka on loopback,
creates ``--topics`` topics of ``--partitions-per-topic`` partitions (the first produced to at
``--rate`` records a second by one keyed producer, the others subscribed and idle: the
layout of ``make bench-scale``), and for every ``--peers`` row (:data:`.rolling_compare.PEERS`
keys) starts ``--members`` members ``--per-process`` per child process (Python members:
:mod:`kafka_sticky_plugin.groups.member_pack`; Java: one JVM per pack), waits until the group
is stable, lets it run ``--settle-s`` seconds, then reads the CPU time (user + system, all
threads, from ``/proc/<pid>/stat``) of the member processes over ``--window-s`` seconds of
steady state. Nothing else changes in the window: no restart, no rebalance; the members poll
(``poll_timeout_ms`` 100 ms, as in every group run), fetch, heartbeat and commit every second.

Per row: CPU milliseconds per second per member, the cores the whole group needs at that
rate, and how many such members two cores would hold if nothing else ran (the broker and the
producer run too, so fewer fit). The 1-minute load average is printed beside each row: read
the figures of a loaded machine as upper bounds (a starved process spends more per second
than an idle one waiting on its sockets).
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from kafka_sticky_plugin.errors import StickyPluginError
from kafka_sticky_plugin.groups.admin import create_topic, unique_name
from kafka_sticky_plugin.groups.producer import KeyedProducer
from kafka_sticky_plugin.groups.runner import ConsumerGroupRunner
from testlab.brokers import open_broker
from testlab.rolling_compare import Peer, choose_peers

__all__ = ["CpuRow", "main", "process_cpu_s"]

#: Two cores, the CI machine's size.
CORES = 2


def process_cpu_s(stat_line: str, ticks_per_s: int) -> float:
    """User + system CPU seconds of every thread of a process, from its ``/proc/<pid>/stat``
    line (fields 14 and 15, counted after the command name, which may hold spaces and
    parentheses: the last ``)`` ends it)."""
    fields = stat_line.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / ticks_per_s


def _cpu_s(pids: set[int]) -> float:
    ticks = os.sysconf("SC_CLK_TCK")
    return sum(
        process_cpu_s(Path(f"/proc/{pid}/stat").read_text(encoding="utf-8"), ticks) for pid in pids
    )


@dataclass(frozen=True)
class CpuRow:
    """One peer's steady-state cost."""

    peer: Peer
    members: int
    cpu_ms_per_s_per_member: float
    load_average: float

    @property
    def cores_needed(self) -> float:
        """Cores the whole group needs at this rate."""
        return self.cpu_ms_per_s_per_member * self.members / 1000.0

    @property
    def members_on_two_cores(self) -> int:
        """Members two cores hold at this rate with nothing else running."""
        if self.cpu_ms_per_s_per_member <= 0:
            return 0
        return int(CORES * 1000.0 / self.cpu_ms_per_s_per_member)


def measure_peer(
    bootstrap: str,
    peer: Peer,
    topics: Sequence[str],
    partitions_per_topic: int,
    members: int,
    per_process: int,
    settle_s: float,
    window_s: float,
) -> CpuRow:
    """Start the group, wait until it is stable, measure one window (module docstring)."""
    group = unique_name(f"cpu-{peer.key.replace('/', '-')}")
    with ConsumerGroupRunner(
        bootstrap,
        group,
        {topic: partitions_per_topic for topic in topics},
        (peer.assignor,),
        client=peer.client,
        group_protocol=peer.protocol,
    ) as runner:
        names = [f"m{i}" for i in range(members)]
        for first in range(0, members, per_process):
            runner.start_pack(names[first : first + per_process])
        runner.wait_stable(timeout_s=180.0, quiet_s=1.0)
        time.sleep(settle_s)
        pids, held = runner.child_processes()
        if held != members:
            raise StickyPluginError(f"{peer.key}: {held} of {members} members in child processes")
        before, t0 = _cpu_s(pids), time.monotonic()
        time.sleep(window_s)
        spent, elapsed = _cpu_s(pids) - before, time.monotonic() - t0
        return CpuRow(peer, members, 1000.0 * spent / elapsed / members, os.getloadavg()[0])


def table(rows: Sequence[CpuRow]) -> str:
    """The rows as a Markdown table."""
    lines = [
        "| client, assignor | protocol | members | CPU ms/s /member | cores for the group "
        "| members on 2 cores | load avg |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in rows:
        lines.append(
            f"| {row.peer.name}: {row.peer.assignor} | {row.peer.protocol} | {row.members} "
            f"| {row.cpu_ms_per_s_per_member:.1f} | {row.cores_needed:.2f} "
            f"| {row.members_on_two_cores} | {row.load_average:.1f} |"
        )
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m testlab.member_cpu", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--members", type=int, default=20)
    parser.add_argument("--per-process", type=int, default=10)
    parser.add_argument("--topics", type=int, default=24)
    parser.add_argument("--partitions-per-topic", type=int, default=50)
    parser.add_argument("--rate", type=float, default=200.0)
    parser.add_argument("--settle-s", type=float, default=5.0)
    parser.add_argument("--window-s", type=float, default=30.0)
    parser.add_argument(
        "--peers",
        default="kafka-python/cooperative-sticky,aiokafka/cooperative-sticky,"
        "confluent/cooperative-sticky,java/cooperative-sticky",
        help="rows of testlab.rolling_compare's PEERS, by key",
    )
    return parser


def _commit() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main(argv: list[str] | None = None) -> int:
    """Measure every peer (module docstring); 2 for bad arguments."""
    args = _parser().parse_args(argv)
    try:
        peers = choose_peers(args.peers)
    except StickyPluginError as exc:
        print(f"error: {exc}")
        return 2
    if args.members < 1 or args.per_process < 1 or args.topics < 1 or args.window_s <= 0:
        print("--members, --per-process and --topics at least 1, --window-s above 0")
        return 2
    rows: list[CpuRow] = []
    with open_broker("kafka") as broker:
        bootstrap = broker.bootstrap
        topics = [
            create_topic(bootstrap, unique_name("cpu"), args.partitions_per_topic)
            for _ in range(args.topics)
        ]
        producer = KeyedProducer(bootstrap, topics[0], keys=max(64, args.partitions_per_topic))
        producer.start(args.rate)
        try:
            for peer in peers:
                reason = peer.unavailable()
                if reason is not None:
                    print(f"{peer.key} ({peer.protocol}) skipped: {reason}", flush=True)
                    continue
                row = measure_peer(
                    bootstrap,
                    peer,
                    topics,
                    args.partitions_per_topic,
                    args.members,
                    args.per_process,
                    args.settle_s,
                    args.window_s,
                )
                rows.append(row)
                print(table([row]).splitlines()[-1], flush=True)
        finally:
            producer.stop()
            producer.close()
    print(
        f"\ncommit {_commit()}, {platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}; {args.members} members, {args.per_process} per "
        f"process, {args.topics} x {args.partitions_per_topic} partitions, {args.rate:g} rec/s, "
        f"{args.window_s:g} s window\n"
    )
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
