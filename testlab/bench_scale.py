"""The group-size curve (issue 38): :mod:`.rolling_compare`'s rolling restart at 10, 50, 100
and 200 members, then one member killed, one table from one run.

``python -m testlab.bench_scale`` (``make bench-scale``) starts Apache Kafka on
loopback, then for every size and every peer (:data:`.rolling_compare.PEERS`, the same rows
and the same row figures as ``make bench-rolling``) runs
:func:`.scenario.run_rolling_restart` with its kill step over many topics (``--topics``
topics of ``--partitions-per-topic`` partitions, the first one produced to at ``--rate``
records a second, the others subscribed and idle).

How each row is fed and timed: members run ``--per-process`` per child process
(kafka-python, aiokafka and confluent-kafka: :mod:`kafka_sticky_plugin.groups.member_pack`;
Java: one JVM running that many ``KafkaConsumer`` threads, ``kafkasticky.JavaMemberPack``; a
restarted member's successor runs in the same process), except the last member, which runs
alone in a process of its own (a Python member process, or a JVM of its own for Java) so
that SIGKILL kills exactly that one member. Every member started and the group stable, the
first ``--restarts`` members are restarted one at a time (a clean stop, the group stable
without it, a successor, stable again); then the lone member's process is SIGKILLed (no
LeaveGroup, no commit) and the run waits until the group is stable without it (the broker
notices when its session times out: the members' ``session.timeout.ms`` of 10 s under the
classic protocol, the broker's ``group.consumer.session.timeout.ms`` under KIP-848). The
producer and the broker are the same for every row; times are monotonic clock readings of
this process, from the members' own event reports.

Per row: time to stable (first member started -> every member joined and the group stable;
it includes starting the lone member's process, one process or JVM more than the packs),
rebalance rounds per restart, paused partition-seconds per restart (nobody owned the
partition), the same split into partitions that kept their owner through the restart and
partitions that moved, the partitions handed over, the seconds a staying member (neither the
restarted one nor its successor) owned no partition per member per restart
(:mod:`kafka_sticky_plugin.demo.bounce_metrics` defines the three), the time a hooked member
spent inside rebalances
per member per restart (its ``rebalance-latency-total``; with the hooks a cooperative member
keeps consuming what it keeps meanwhile, see docs/hooks.md), the leader's assign time (mean
and worst, from the hooked members' metrics), the resident memory of the members' child
processes per member once the group is stable (the lone member's process left out; n/a for
members that are threads of this process), lost and duplicated records and two-owner
overlaps of the restarts (up to the kill), and the 1-minute load average when the row ended.
The kill step (:mod:`kafka_sticky_plugin.demo.kill_metrics` defines its figures): the
seconds from the kill to the group stable without the member (next to the session timeout
that bounds the broker's wait), the paused partition-seconds in that time, split into kept
and moved partitions as the restarts' are, and its own lost records, duplicates and two
owners. Duplicates after a kill are expected (records the killed member delivered but never
committed come again) and break no guarantee; lost records and two owners do, in either
step. Not measured: a stall of a member that owns partitions but returns nothing (no
callback shows it; every peer here keeps consuming what it owns, docs/hooks.md).
``--largest kafka-python=100,aiokafka=100`` skips a client's rows above that size with a line
in the output (where the machine cannot hold that many of its members: on 2 cores 200
kafka-python members need about 6 cores of their own, ``make bench-member-cpu``).
Output: the table, and Markdown + JSON under ``--out`` (default ``build/bench-scale``). Exit
status 0 when every row kept its guarantees, 1 otherwise, 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from kafka_sticky_plugin.brokers.choose import FAST_GROUP_SETTINGS
from kafka_sticky_plugin.demo.metrics_table import aggregate
from kafka_sticky_plugin.demo.report import broken_guarantees, markdown_table
from kafka_sticky_plugin.demo.scenario import StrategyResult, run_rolling_restart
from kafka_sticky_plugin.errors import StickyPluginError
from kafka_sticky_plugin.groups.admin import admin_client
from kafka_sticky_plugin.groups.runner import GroupNotStable
from testlab.brokers import open_broker
from testlab.rolling_compare import Peer, PeerRow, _number, choose_peers, measure

__all__ = ["ScaleRow", "format_table", "main", "parse_largest", "run_sizes", "session_timeout_s"]


@dataclass(frozen=True)
class ScaleRow:
    """One (size, peer) run: :class:`.rolling_compare.PeerRow`'s figures plus the curve's."""

    members: int
    partitions: int
    row: PeerRow
    time_to_stable_s: float | None
    in_rebalance_s_per_member_bounce: float | None
    leader_assign_ms_avg: float | None
    leader_assign_ms_max: float | None
    load_average: float
    rss_per_member_mb: float | None = None
    #: The session timeout that bounds the kill step's wait (module docstring).
    session_timeout_s: float | None = None


def _finite(value: float) -> float | None:
    return None if math.isnan(value) else value


#: The classic members' ``session.timeout.ms`` in every row.
CLASSIC_SESSION_TIMEOUT_MS = 10000


def session_timeout_s(protocol: str) -> float:
    """How long the broker waits for a vanished member of a ``protocol`` group: the members'
    own session timeout (classic), or the broker's (KIP-848: the lab broker runs
    :data:`~kafka_sticky_plugin.brokers.choose.FAST_GROUP_SETTINGS`)."""
    if protocol == "consumer":
        return int(FAST_GROUP_SETTINGS["group.consumer.session.timeout.ms"]) / 1000
    return CLASSIC_SESSION_TIMEOUT_MS / 1000


def run_sizes(
    bootstrap: str,
    sizes: Sequence[int],
    peers: Sequence[Peer],
    *,
    topics: int,
    partitions_per_topic: int,
    rate_per_s: float,
    per_process: int,
    restarts: int,
    largest: Mapping[str, int] | None = None,
    say: Callable[[str], None] = print,
    on_row: Callable[[list[ScaleRow], list[str]], None] | None = None,
) -> tuple[list[ScaleRow], list[str]]:
    """Every size with every peer (module docstring); the rows and the skipped peers (and
    the runs that failed: a group that never became stable, a member that did not start,
    with the reason). ``largest`` caps a client's group size (``{"kafka-python": 100}``:
    its rows above 100 members are skipped with a line saying so, where this machine cannot
    hold that many of its members). ``on_row(rows, skipped)`` is called after each run (the
    partial table is written as the curve goes)."""
    rows: list[ScaleRow] = []
    skipped: list[str] = []
    for peer in peers:
        reason = peer.unavailable()
        if reason is not None:
            skipped.append(f"{peer.key} ({peer.protocol}) skipped: {reason}")
            say(skipped[-1])
    runnable = [p for p in peers if p.unavailable() is None]
    for size in sizes:
        for peer in runnable:
            client = peer.client_key
            cap = (largest or {}).get(client)
            if cap is not None and size > cap:
                skipped.append(
                    f"{size} members, {peer.key} ({peer.protocol}) skipped: --largest"
                    f" {client}={cap} (more of its members than this machine holds)"
                )
                say(skipped[-1])
                continue
            label = f"{size}-{peer.key.replace('/', '-')}-{peer.protocol}"
            say(f"== {size} members, {peer.name}: {peer.assignor}, {peer.protocol}")
            try:
                result = _run_one(
                    bootstrap,
                    label,
                    peer,
                    size,
                    partitions_per_topic,
                    rate_per_s,
                    say,
                    topics,
                    per_process,
                    restarts,
                )
            except (GroupNotStable, TimeoutError, RuntimeError, OSError) as exc:
                _drop_topics(bootstrap, say)
                skipped.append(
                    f"{size} members, {peer.key} ({peer.protocol}) failed: {exc!r}"[:400]
                )
                say(skipped[-1])
                if on_row is not None:
                    on_row(rows, skipped)
                continue
            _drop_topics(bootstrap, say)
            metrics = aggregate(label, result.metrics)
            bounces = max(1, len(result.restarts))
            in_rebalance = None
            if metrics.incarnations and not math.isnan(metrics.latency_avg_ms):
                total_s = metrics.latency_avg_ms * metrics.rebalances / 1000
                in_rebalance = total_s / size / bounces
            rows.append(
                ScaleRow(
                    members=size,
                    partitions=topics * partitions_per_topic,
                    row=measure(peer, result),
                    time_to_stable_s=result.time_to_stable_s,
                    in_rebalance_s_per_member_bounce=in_rebalance,
                    leader_assign_ms_avg=_finite(metrics.assign_avg_ms),
                    leader_assign_ms_max=_finite(metrics.assign_max_ms),
                    load_average=os.getloadavg()[0],
                    rss_per_member_mb=result.rss_per_member_mb,
                    session_timeout_s=session_timeout_s(peer.protocol),
                )
            )
            problems = broken_guarantees(result)
            say(f"   done: {', '.join(problems) if problems else 'guarantees kept'}")
            if on_row is not None:
                on_row(rows, skipped)
    return rows, skipped


def _drop_topics(bootstrap: str, say: Callable[[str], None]) -> None:
    """Delete the finished run's topics (every ``demo-`` topic): the broker keeps open files
    for every partition it holds, and 20 runs of 1,200 partitions exhausted its file
    descriptors (``Too many open files``; one run of the curve then failed to bootstrap)."""
    try:
        with admin_client(bootstrap) as admin:
            names = [t for t in admin.list_topics() if t.startswith("demo-")]
            if names:
                admin.delete_topics(names)
    except Exception as exc:  # the next run still works, on a fuller broker
        say(f"   (could not delete the finished run's topics: {exc!r})")


def _run_one(
    bootstrap: str,
    label: str,
    peer: Peer,
    size: int,
    partitions_per_topic: int,
    rate_per_s: float,
    say: Callable[[str], None],
    topics: int,
    per_process: int,
    restarts: int,
) -> StrategyResult:
    """One rolling restart of ``size`` members of ``peer``, then the kill (module
    docstring)."""
    return run_rolling_restart(
        bootstrap,
        peer.strategy(label),
        members=size,
        partitions=partitions_per_topic,
        rate_per_s=rate_per_s,
        say=say,
        client=peer.client,
        member_settings={
            "group_protocol": peer.protocol,
            "session_timeout_ms": CLASSIC_SESSION_TIMEOUT_MS,
            "max_poll_interval_ms": 60000,
        },
        settle_between=True,
        stable_timeout_s=max(90.0, 3.0 * size),
        idle_topics=topics - 1,
        per_process=per_process,
        restart_count=restarts,
        kill_one=True,
    )


_HEADERS = (
    "members",
    "client, assignor",
    "protocol",
    "time to stable s",
    "rounds /restart",
    "paused p*s /restart",
    "kept + moved p*s",
    "moved /restart",
    "unable s /member /restart",
    "in rebalance s /member /restart",
    "leader assign ms (mean / worst)",
    "memory /member",
    "lost",
    "dups",
    "two owners",
    "kill: stable s (session s)",
    "kill: paused p*s",
    "kill: kept + moved p*s",
    "kill: lost / dups / two owners",
    "load avg",
)


def _cells(scale: ScaleRow) -> tuple[str, ...]:
    row = scale.row
    return (
        str(scale.members),
        f"{row.peer}: {row.assignor}",
        "classic" if row.protocol == "classic" else "consumer (KIP-848)",
        _number(scale.time_to_stable_s),
        _number(row.rounds_per_bounce),
        _number(row.paused_ps_per_bounce),
        f"{_number(row.paused_kept_ps_per_bounce)} + {_number(row.paused_moved_ps_per_bounce)}",
        _number(row.handovers_per_bounce),
        _number(row.unable_s_per_member_bounce, 2),
        _number(scale.in_rebalance_s_per_member_bounce, 2),
        f"{_number(scale.leader_assign_ms_avg)} / {_number(scale.leader_assign_ms_max)}",
        "n/a" if scale.rss_per_member_mb is None else f"{scale.rss_per_member_mb:.0f} MB",
        str(row.lost),
        str(row.duplicates),
        str(row.overlaps),
        *_kill_cells(scale),
        f"{scale.load_average:.1f}",
    )


def _kill_cells(scale: ScaleRow) -> tuple[str, str, str, str]:
    kill = scale.row.kill
    if kill is None:
        return ("n/a", "n/a", "n/a", "n/a")
    session = "n/a" if scale.session_timeout_s is None else f"{scale.session_timeout_s:g}"
    return (
        f"{kill.stable_s:.1f} ({session})",
        _number(kill.paused_partition_s),
        f"{_number(kill.pause.kept_paused_s)} + {_number(kill.pause.moved_paused_s)}",
        f"{kill.guarantees.lost} / {kill.guarantees.duplicates} / {kill.guarantees.overlaps}",
    )


def format_table(rows: Sequence[ScaleRow]) -> str:
    """The rows as one Markdown table (readable as plain text)."""
    return markdown_table([_HEADERS, *(_cells(r) for r in rows)], left=3)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m testlab.bench_scale",
        description="The rolling restart at several group sizes, every client, one table"
        " (Apache Kafka on loopback).",
    )
    parser.add_argument("--sizes", default="10,50,100,200", help="member counts (comma list)")
    parser.add_argument("--topics", type=int, default=24, help="topics (default 24)")
    parser.add_argument(
        "--partitions-per-topic", type=int, default=50, help="partitions per topic (default 50)"
    )
    parser.add_argument("--rate", type=float, default=200.0, help="records/s (default 200)")
    parser.add_argument(
        "--per-process",
        type=int,
        default=10,
        help="Python members per process, Java members per JVM (default 10)",
    )
    parser.add_argument("--restarts", type=int, default=5, help="members restarted (default 5)")
    parser.add_argument("--peers", default="all", help="peer keys as for bench-rolling")
    parser.add_argument(
        "--largest",
        default="",
        help="per-client size caps, CLIENT=N comma list (kafka-python=100,aiokafka=100):"
        " that client's larger rows are skipped with a line",
    )
    parser.add_argument("--out", type=Path, default=Path("build/bench-scale"))
    return parser


def parse_largest(text: str) -> dict[str, int]:
    """``--largest``: ``"kafka-python=100,aiokafka=100"`` -> ``{"kafka-python": 100, ...}``;
    ``ValueError`` naming the entry for anything else (a client name no peer has, a size
    that is not a whole number of at least 2)."""
    clients = {peer.client_key for peer in choose_peers("all")}
    caps: dict[str, int] = {}
    for entry in (e.strip() for e in text.split(",")):
        if not entry:
            continue
        client, sep, size = entry.partition("=")
        if not sep or client not in clients or not size.isdigit() or int(size) < 2:
            raise ValueError(
                f"--largest {entry!r}: want CLIENT=N with N >= 2 and CLIENT one of"
                f" {', '.join(sorted(clients))}"
            )
        caps[client] = int(size)
    return caps


def _write_partial(out: Path, rows: Sequence[ScaleRow], skipped: Sequence[str]) -> None:
    """The table so far, in ``bench-scale.partial.md`` (a curve interrupted keeps its rows)."""
    text = "\n".join([format_table(rows), "", *skipped])
    (out / "bench-scale.partial.md").write_text(text + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """Run the curve (module docstring); the exit status says whether guarantees held."""
    args = _parser().parse_args(argv)
    try:
        sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
        peers = choose_peers(args.peers)
        largest = parse_largest(args.largest)
    except (ValueError, StickyPluginError) as exc:
        print(f"error: {exc}")
        return 2
    if not sizes or min(sizes) < 2 or args.topics < 1 or args.partitions_per_topic < 1:
        print("--sizes must list member counts of at least 2; --topics and partitions >= 1")
        return 2
    if args.rate <= 0 or args.per_process < 1 or not 1 <= args.restarts <= min(sizes):
        print("--rate above 0, --per-process >= 1, 1 <= --restarts <= the smallest size")
        return 2
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with open_broker("kafka", log_dir=out / "broker") as broker:
        print(f"broker: {broker.kind} at {broker.bootstrap}", flush=True)
        rows, skipped = run_sizes(
            broker.bootstrap,
            sizes,
            peers,
            topics=args.topics,
            partitions_per_topic=args.partitions_per_topic,
            rate_per_s=args.rate,
            per_process=args.per_process,
            restarts=args.restarts,
            largest=largest,
            on_row=lambda done, failed: _write_partial(out, done, failed),
        )
    wall = time.monotonic() - started
    heading = (
        f"Group-size curve: {args.topics} topics x {args.partitions_per_topic} partitions,"
        f" {args.rate:.0f} records/s on one topic, {args.restarts} restarts then one member"
        f" killed, members {args.per_process} per process (Python) or JVM (Java), the killed"
        f" one alone, on {broker.kind} (wall time"
        f" {wall:.0f} s,"
        f" {platform.machine()}, {os.cpu_count() or 1} CPUs):"
    )
    text = "\n".join([heading, "", format_table(rows), "", *skipped])
    (out / "bench-scale.md").write_text(text + "\n", encoding="utf-8")
    document = {
        "sizes": sizes,
        "wall_s": round(wall, 1),
        "rows": [asdict(r) for r in rows],
        "skipped": skipped,
    }
    (out / "bench-scale.json").write_text(json.dumps(document, indent=2) + "\n", "utf-8")
    print("\n" + text)
    bad = [r for r in rows if r.row.problems]
    for scale in bad:
        print(f"PROBLEM: [{scale.members} {scale.row.peer}] {'; '.join(scale.row.problems)}")
    return 1 if bad or not rows else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
