"""The same rolling restart, classic protocol against KIP-848, one row per client and strategy.

``python -m testlab.rolling_compare`` (``make bench-rolling``) starts Apache Kafka on loopback (the
jars ``make kafka-broker`` resolved, :mod:`testlab.kafka_broker`, whose settings give KIP-848 groups
the same 6 s session / 1 s heartbeat the classic members use) and runs the demo's rolling restart
(:func:`kafka_sticky_plugin.demo.scenario.run_rolling_restart`) once per *peer*: a fresh topic and
group, a burst then a steady keyed producer (the same
:class:`~kafka_sticky_plugin.groups.producer.KeyedProducer` at the same rate for every peer), every
member started and the group stable (so a Java member's JIT has seen its first rebalance) before
member ``m0``, then ``m1``, ... is restarted in turn: a clean close (commit on revoke, leave the
group), a wait until the group is stable without it, then a new consumer under the same name (a new
JVM for Java, so its JIT is cold again) and a wait until the group is stable again. The settle in
the middle gives every client the same two rebalances per restart: a thread member would otherwise
be back within the leave's rebalance and a JVM seconds later, which compares start-up times rather
than protocols. Members commit their delivered positions every second and in
``on_partitions_revoked``.

The peers (:data:`PEERS`): this package's ``sticky`` and ``cooperative-sticky`` on hooked
kafka-python and aiokafka members, confluent-kafka classic (librdkafka's own
``cooperative-sticky`` behind this package's listener bridge), Java kafka-clients 4.4.0's
classic ``CooperativeStickyAssignor``, and confluent-kafka and Java with
``group.protocol=consumer`` and the broker's ``uniform`` assignor. A peer whose client is not
installed (Java tools, confluent-kafka) is skipped with one line saying why.

Figures (:mod:`kafka_sticky_plugin.demo.bounce_metrics` defines them): paused partition-seconds per
bounce, the mean and worst time until every paused partition delivered a record again, rebalance
rounds per bounce (generation ids, or KIP-848 member epochs, first seen; librdkafka exposes neither,
so "n/a" for confluent), partitions handed to another consumer per bounce, duplicate deliveries
and lost records (acknowledged, never delivered: must be 0). The table is printed and written
as Markdown and JSON under ``--out`` (default ``build/rolling-compare``). Exit status 0 when
every run kept its guarantees (nothing lost, never two owners), 1 otherwise, 2 for bad
arguments.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from kafka_sticky_plugin.assignor.prompt_heartbeats import TALLY
from kafka_sticky_plugin.demo.bounce_metrics import (
    BounceFigures,
    KeptMoved,
    bounce_figures,
    bounce_windows,
    kept_moved_pause,
    unable_to_consume,
)
from kafka_sticky_plugin.demo.kill_metrics import KillFigures, kill_figures, split_at
from kafka_sticky_plugin.demo.report import broken_guarantees, markdown_table
from kafka_sticky_plugin.demo.scenario import (
    RestartRecord,
    Strategy,
    StrategyResult,
    run_rolling_restart,
)
from kafka_sticky_plugin.errors import ConfigurationError, StickyPluginError
from kafka_sticky_plugin.groups.analysis import find_overlaps
from testlab.brokers import open_broker

__all__ = [
    "PEERS",
    "Peer",
    "PeerRow",
    "choose_peers",
    "format_markdown",
    "main",
    "measure",
    "run_peers",
    "targets",
    "write_report",
]


@dataclass(frozen=True)
class Peer:
    """One row: which client runs every member, with which assignor and group protocol."""

    name: str
    client: str
    assignor: str
    protocol: str = "classic"

    @property
    def client_key(self) -> str:
        """The client part of :attr:`key` (``java`` for every Java version)."""
        return "java" if self.client.startswith("java-") else self.client

    @property
    def key(self) -> str:
        """Short id for ``--peers`` (``kafka-python/sticky``, ``java/uniform``...)."""
        return f"{self.client_key}/{self.assignor}"

    def strategy(self, label: str) -> Strategy:
        """The rolling restart's strategy for this peer: every member configured with its
        one assignor, from start to end (no switch between assignors)."""
        return Strategy(label, (self.assignor,), ((self.assignor,),))

    def unavailable(self) -> str | None:
        """Why this peer cannot run here, or ``None``."""
        if self.client.startswith("java-"):
            from testlab.java_member import java_tools_missing

            return java_tools_missing()
        module = {"kafka-python": "kafka", "aiokafka": "aiokafka", "confluent": "confluent_kafka"}
        try:
            __import__(module[self.client])
        except ImportError:
            return f"{self.client} is not installed"
        return None


JAVA = "java-4.4.0"

#: Every row of the comparison, in table order.
PEERS: tuple[Peer, ...] = (
    Peer("kafka-python (hooked), ours", "kafka-python", "sticky"),
    Peer("kafka-python (hooked), ours", "kafka-python", "cooperative-sticky"),
    Peer("aiokafka (hooked), ours", "aiokafka", "sticky"),
    Peer("aiokafka (hooked), ours", "aiokafka", "cooperative-sticky"),
    Peer("confluent-kafka classic, librdkafka's", "confluent", "cooperative-sticky"),
    Peer("Java 4.4.0 classic, CooperativeStickyAssignor", JAVA, "cooperative-sticky"),
    Peer("confluent-kafka KIP-848, broker's", "confluent", "uniform", "consumer"),
    Peer("Java 4.4.0 KIP-848, broker's", JAVA, "uniform", "consumer"),
)


@dataclass(frozen=True)
class PeerRow:
    """The measured figures of one peer's run (per bounce: means over its restarts)."""

    peer: str
    client: str
    assignor: str
    protocol: str
    bounces: int
    paused_ps_per_bounce: float
    #: The same split into the leave phase and the join phase (None without a settle).
    paused_leave_ps_per_bounce: float | None
    paused_join_ps_per_bounce: float | None
    worst_bounce_paused_ps: float
    recovery_s_mean: float | None
    recovery_s_worst: float | None
    rounds_per_bounce: float | None
    handovers_per_bounce: float
    rebalancing_s_per_bounce: float
    consumed: int
    duplicates: int
    lost: int
    overlaps: int
    problems: tuple[str, ...]
    #: Heartbeats per member per second over the run, and the share sent early by prompt
    #: heartbeats (hooked Python members only: None for confluent-kafka and Java)
    heartbeats_per_member_s: float | None = None
    prompt_heartbeat_share: float | None = None
    #: paused_ps_per_bounce split into partitions that kept their owner through the restart
    #: and partitions that moved (:func:`~kafka_sticky_plugin.demo.bounce_metrics.
    #: kept_moved_pause`), and the seconds a staying member owned nothing, per member per
    #: restart (:func:`~kafka_sticky_plugin.demo.bounce_metrics.unable_to_consume`)
    paused_kept_ps_per_bounce: float | None = None
    paused_moved_ps_per_bounce: float | None = None
    unable_s_per_member_bounce: float | None = None
    #: The kill step after the restarts (:mod:`kafka_sticky_plugin.demo.kill_metrics`), or
    #: None; with it, ``duplicates``, ``lost`` and ``overlaps`` above are the restarts' only
    #: (before the kill) and the kill's are here.
    kill: KillFigures | None = None


@dataclass(frozen=True)
class _RestartCost:
    """One restart's figures; ``leave``/``join``: the same over each phase (None without a
    settle between the stop and the start)."""

    whole: BounceFigures
    recovery_s: float
    rebalancing_s: float
    leave: BounceFigures | None = None
    join: BounceFigures | None = None
    split: KeptMoved | None = None
    #: seconds each staying member owned nothing in the window, averaged over those members
    unable_s: float | None = None


def _restart_cost(
    result: StrategyResult, restart: RestartRecord, t0: float, t1: float
) -> _RestartCost:
    """One restart's figures over its window ``[t0, t1]``, its recovery time and its
    rebalancing time. With a settle between the stop and the start (``t_rejoin`` known) both
    are the sums over the leave phase ``[t0, t_rejoin]`` and the join phase ``[t_rejoin,
    t1]``, so a process's start-up time (a JVM's seconds) counts in neither."""

    def figures(a: float, b: float) -> BounceFigures:
        return bounce_figures(result.intervals, result.delivery_log, result.partitions, a, b)

    whole = figures(t0, t1)
    split = kept_moved_pause(result.intervals, result.partitions, t0, t1)
    idle = list(unable_to_consume(result.intervals, t0, t1).values())
    unable = sum(idle) / len(idle) if idle else None
    if restart.t_rejoin is None or restart.t_down_stable is None:
        return _RestartCost(
            whole, whole.recovery_s, restart.t_stable - t0, split=split, unable_s=unable
        )
    leave, join = figures(t0, restart.t_rejoin), figures(restart.t_rejoin, t1)
    busy = (restart.t_down_stable - t0) + (restart.t_stable - restart.t_rejoin)
    return _RestartCost(whole, leave.recovery_s + join.recovery_s, busy, leave, join, split, unable)


def _mean(values: Sequence[float | None]) -> float | None:
    """The mean, or None when a value is unknown or there is none."""
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known and len(known) == len(values) else None


def _worst(values: Sequence[float | None]) -> float | None:
    """The largest value, or None when a value is unknown or there is none."""
    known = [v for v in values if v is not None]
    return max(known) if known and len(known) == len(values) else None


def measure(
    peer: Peer, result: StrategyResult, heartbeats: tuple[int, int, float] | None = None
) -> PeerRow:
    """Turn one run into its row (:mod:`kafka_sticky_plugin.demo.bounce_metrics` for the
    definitions); ``heartbeats``: (sent, sent promptly, member-seconds) of hooked Python members."""
    windows = bounce_windows([r.t_start for r in result.restarts], result.window[1])
    costs = [
        _restart_cost(result, restart, t0, t1)
        for restart, (t0, t1) in zip(result.restarts, windows, strict=True)
    ]
    bounces = max(1, len(costs))
    recoveries = [c.recovery_s for c in costs]
    duplicates, lost, overlaps = (
        result.deliveries.duplicates,
        len(result.deliveries.lost),
        result.overlaps,
    )
    kill = None
    if result.kill is not None:
        restarts_part, kill_part = split_at(
            result.kill.t_kill,
            result.delivery_log,
            result.deliveries.lost,
            find_overlaps(result.intervals),
        )
        duplicates, lost, overlaps = (
            restarts_part.duplicates,
            restarts_part.lost,
            restarts_part.overlaps,
        )
        kill = kill_figures(
            result.kill.killed_key,
            result.kill.t_kill,
            result.kill.t_stable,
            result.intervals,
            result.partitions,
            kill_part,
        )
    return PeerRow(
        peer=peer.name,
        client=peer.client,
        assignor=peer.assignor,
        protocol=peer.protocol,
        bounces=len(costs),
        paused_ps_per_bounce=sum(c.whole.paused_partition_s for c in costs) / bounces,
        paused_leave_ps_per_bounce=_mean(
            [c.leave.paused_partition_s if c.leave else None for c in costs]
        ),
        paused_join_ps_per_bounce=_mean(
            [c.join.paused_partition_s if c.join else None for c in costs]
        ),
        worst_bounce_paused_ps=max((c.whole.paused_partition_s for c in costs), default=0.0),
        recovery_s_mean=_mean(recoveries),
        recovery_s_worst=_worst(recoveries),
        rounds_per_bounce=None if peer.client == "confluent" else result.rounds / bounces,
        handovers_per_bounce=sum(c.whole.handovers for c in costs) / bounces,
        rebalancing_s_per_bounce=sum(c.rebalancing_s for c in costs) / bounces,
        consumed=result.deliveries.consumed,
        duplicates=duplicates,
        lost=lost,
        overlaps=overlaps,
        problems=tuple(broken_guarantees(result)),
        heartbeats_per_member_s=(
            heartbeats[0] / heartbeats[2] if heartbeats and heartbeats[2] > 0 else None
        ),
        prompt_heartbeat_share=(
            heartbeats[1] / heartbeats[0] if heartbeats and heartbeats[0] else None
        ),
        paused_kept_ps_per_bounce=_mean(
            [c.split.kept_paused_s if c.split else None for c in costs]
        ),
        paused_moved_ps_per_bounce=_mean(
            [c.split.moved_paused_s if c.split else None for c in costs]
        ),
        unable_s_per_member_bounce=_mean([c.unable_s for c in costs]),
        kill=kill,
    )


def run_peers(
    bootstrap: str,
    peers: Sequence[Peer],
    members: int,
    partitions: int,
    rate_per_s: float,
    say: Callable[[str], None] = print,
    heartbeat_ms: int = 1000,
    prompt_heartbeats: bool = True,
    idle_s: float = 0.0,
) -> tuple[list[PeerRow], list[str]]:
    """Run the rolling restart for every peer on ``bootstrap``; the rows, and one line per
    peer that could not run. ``heartbeat_ms`` is the classic members' heartbeat interval
    (a KIP-848 member's is the broker's ``group.consumer.heartbeat.interval.ms``);
    ``prompt_heartbeats``: the hooked members' prompt heartbeats on (the default) or off;
    ``idle_s``: seconds the group runs stable before each stop."""
    rows: list[PeerRow] = []
    skipped: list[str] = []
    for peer in peers:
        reason = peer.unavailable()
        if reason is not None:
            skipped.append(f"{peer.key} ({peer.protocol}) skipped: {reason}")
            say(skipped[-1])
            continue
        label = f"{peer.key.replace('/', '-')}-{peer.protocol}"
        say(f"== {peer.name}: {peer.assignor}, group.protocol={peer.protocol}")
        sent_before, prompt_before = TALLY.read()
        started = time.monotonic()
        result = run_rolling_restart(
            bootstrap,
            peer.strategy(label),
            members=members,
            partitions=partitions,
            rate_per_s=rate_per_s,
            say=say,
            client=peer.client,
            member_settings={
                "group_protocol": peer.protocol,
                "heartbeat_interval_ms": heartbeat_ms,
                "prompt_heartbeats": prompt_heartbeats,
            },
            settle_between=True,
            idle_before_stop_s=idle_s,
        )
        sent, prompt = TALLY.read()
        hooked = peer.client in ("kafka-python", "aiokafka")
        member_s = members * (time.monotonic() - started)
        tally = (sent - sent_before, prompt - prompt_before, member_s) if hooked else None
        rows.append(measure(peer, result, tally))
    return rows, skipped


_HEADERS = (
    "client, assignor",
    "protocol",
    "paused p*s /bounce",
    "leave + join p*s",
    "worst bounce p*s",
    "all consumed again s (mean / worst)",
    "rounds /bounce",
    "moved /bounce",
    "rebalancing s /bounce",
    "consumed",
    "dups",
    "lost",
    "heartbeats /member /s (prompt)",
)


def _number(value: float | None, digits: int = 1) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _cells(row: PeerRow) -> tuple[str, ...]:
    protocol = "classic" if row.protocol == "classic" else "consumer (KIP-848)"
    return (
        f"{row.peer}: {row.assignor}",
        protocol,
        _number(row.paused_ps_per_bounce),
        f"{_number(row.paused_leave_ps_per_bounce)} + {_number(row.paused_join_ps_per_bounce)}",
        _number(row.worst_bounce_paused_ps),
        f"{_number(row.recovery_s_mean)} / {_number(row.recovery_s_worst)}",
        _number(row.rounds_per_bounce),
        _number(row.handovers_per_bounce),
        _number(row.rebalancing_s_per_bounce),
        str(row.consumed),
        str(row.duplicates),
        str(row.lost),
        _heartbeats(row),
    )


def _heartbeats(row: PeerRow) -> str:
    if row.heartbeats_per_member_s is None:
        return "n/a"
    share = row.prompt_heartbeat_share
    return f"{row.heartbeats_per_member_s:.2f} ({0 if share is None else share:.0%})"


def format_markdown(rows: Sequence[PeerRow]) -> str:
    """The rows as a Markdown table (readable as plain text)."""
    return markdown_table([_HEADERS, *(_cells(r) for r in rows)], left=2)


def targets(rows: Sequence[PeerRow]) -> list[str]:
    """Issue 23's speed targets, as sentences: our classic cooperative-sticky (each hooked
    client) against Java's classic cooperative-sticky and the best KIP-848 row."""
    ours = [r for r in rows if r.assignor == "cooperative-sticky" and "ours" in r.peer]
    java = [r for r in rows if r.client.startswith("java-") and r.protocol == "classic"]
    kip848 = [r for r in rows if r.protocol == "consumer"]
    lines: list[str] = []
    for row in ours:
        if java:
            ratio = row.paused_ps_per_bounce / max(java[0].paused_ps_per_bounce, 1e-9)
            verdict = "met" if ratio <= 1.0 else "missed"
            lines.append(
                f"{row.peer} cooperative-sticky vs Java classic: {ratio:.2f}x paused p*s"
                f" per bounce (target <= 1.0x: {verdict})"
            )
        if kip848:
            best = min(kip848, key=lambda r: r.paused_ps_per_bounce)
            ratio = row.paused_ps_per_bounce / max(best.paused_ps_per_bounce, 1e-9)
            verdict = "met" if ratio <= 1.5 else "missed"
            lines.append(
                f"{row.peer} cooperative-sticky vs {best.peer}: {ratio:.2f}x paused p*s"
                f" per bounce (target <= 1.5x: {verdict})"
            )
    return lines


LEGEND = """\
Each restart: stop the member (commit on revoke, leave), wait until the group is stable
without it, start its successor, wait until stable again (the same two rebalances for every
client, whatever its start-up costs).
paused p*s /bounce: partition-seconds nobody owned a partition, per restart (mean); leave +
join: the same in the leave phase and in the join phase; worst bounce p*s: the costliest
single restart; all consumed again s: from the stop (and from the successor's subscribe)
until every partition paused by the leave (and by the join) delivered a record again, the
two summed (mean / worst restart); rounds /bounce: generations (KIP-848: member epochs) first
seen, n/a where the client does not expose them (librdkafka); moved /bounce: partitions
handed to another consumer; rebalancing s /bounce: until the group was stable after the
leave, plus after the join; dups: re-deliveries (records polled after the last commit, read
again by the next owner); lost: never delivered (must be 0); heartbeats /member /s: Heartbeat
requests a hooked Python member sent per second over the whole run (prompt: the share sent
inside a prompt-heartbeat window), n/a where the client is not ours."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m testlab.rolling_compare",
        description="One rolling restart per client and strategy, classic and KIP-848, on"
        " Apache Kafka (loopback).",
    )
    parser.add_argument("--members", type=int, default=6, help="group members (default 6)")
    parser.add_argument("--partitions", type=int, default=24, help="partitions (default 24)")
    parser.add_argument("--rate", type=float, default=200.0, help="records/s (default 200)")
    parser.add_argument(
        "--heartbeat-ms",
        type=int,
        default=1000,
        help="classic members' heartbeat.interval.ms (default 1000, as the broker's KIP-848"
        " heartbeat here; session 6000)",
    )
    parser.add_argument(
        "--idle-s",
        type=float,
        default=0.0,
        help="seconds the group runs stable before each stop (default 0: at once; 3 puts"
        " every stop outside the prompt-heartbeat window of the previous rebalance)",
    )
    parser.add_argument(
        "--no-prompt-heartbeats",
        action="store_true",
        help="hooked members without prompt heartbeats after a cooperative SyncGroup (the"
        " hooks' default is on; this measures what they change)",
    )
    parser.add_argument(
        "--peers",
        default="all",
        help="comma-separated peer keys (default all): " + ", ".join(p.key for p in PEERS),
    )
    parser.add_argument(
        "--out", type=Path, default=Path("build/rolling-compare"), help="output directory"
    )
    return parser


def choose_peers(spec: str) -> list[Peer]:
    """``all`` or comma-separated :attr:`Peer.key` values (every peer with that key)."""
    if spec == "all":
        return list(PEERS)
    wanted = [s.strip() for s in spec.split(",") if s.strip()]
    unknown = [w for w in wanted if w not in {p.key for p in PEERS}]
    if unknown or not wanted:
        raise ConfigurationError(
            f"unknown peer {', '.join(unknown) or repr(spec)}; choose from"
            f" {', '.join(sorted({p.key for p in PEERS}))} or all"
        )
    return [p for p in PEERS if p.key in wanted]


def write_report(
    out: Path,
    heading: str,
    rows: Sequence[PeerRow],
    skipped: Sequence[str],
    meta: Mapping[str, object],
) -> str:
    """Write ``rolling-compare.md`` (heading, table, legend, the speed targets' verdicts and
    the skipped peers) and ``rolling-compare.json`` (``meta``, every row's figures, the same
    verdicts) into ``out``; return the Markdown text."""
    verdicts = targets(rows)
    text = "\n".join([heading, "", format_markdown(rows), "", LEGEND, "", *verdicts, *skipped])
    out.mkdir(parents=True, exist_ok=True)
    (out / "rolling-compare.md").write_text(text + "\n", encoding="utf-8")
    document = {
        **meta,
        "rows": [asdict(r) for r in rows],
        "targets": verdicts,
        "skipped": list(skipped),
    }
    (out / "rolling-compare.json").write_text(json.dumps(document, indent=2) + "\n", "utf-8")
    return text


def _say(text: str) -> None:
    print(text, flush=True)


def main(argv: list[str] | None = None) -> int:
    """Run the comparison (module docstring); the exit status says whether guarantees held."""
    args = _parser().parse_args(argv)
    if args.members < 2 or args.partitions < args.members or args.rate <= 0:
        _say("--members must be at least 2, --partitions at least --members, --rate above 0")
        return 2
    if not 0 <= args.idle_s <= 60:
        _say("--idle-s must be between 0 and 60")
        return 2
    if not 0 < args.heartbeat_ms < 6000:
        _say("--heartbeat-ms must be above 0 and below the 6000 ms session timeout")
        return 2
    try:
        peers = choose_peers(args.peers)
    except StickyPluginError as exc:
        _say(f"error: {exc}")
        return 2
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with open_broker("kafka", log_dir=out / "broker") as broker:
        _say(f"broker: {broker.kind} at {broker.bootstrap}")
        rows, skipped = run_peers(
            broker.bootstrap,
            peers,
            args.members,
            args.partitions,
            args.rate,
            say=_say,
            heartbeat_ms=args.heartbeat_ms,
            prompt_heartbeats=not args.no_prompt_heartbeats,
            idle_s=args.idle_s,
        )
    wall = time.monotonic() - started
    heading = (
        f"Rolling restart of {args.members} members, {args.partitions} partitions,"
        f" {args.rate:.0f} records/s, classic heartbeat {args.heartbeat_ms} ms, prompt"
        f" heartbeats {'off' if args.no_prompt_heartbeats else 'on'}, {args.idle_s:g} s idle"
        f" before each stop, on"
        f" {broker.kind} (wall time {wall:.0f} s,"
        f" {platform.machine()}, {os.cpu_count() or 1} CPUs):"
    )
    meta = {
        "members": args.members,
        "partitions": args.partitions,
        "rate_per_s": args.rate,
        "classic_heartbeat_ms": args.heartbeat_ms,
        "prompt_heartbeats": not args.no_prompt_heartbeats,
        "idle_before_stop_s": args.idle_s,
        "broker": broker.kind,
        "wall_s": round(wall, 1),
    }
    _say("\n" + write_report(out, heading, rows, skipped, meta))
    _say(f"\nwritten: {out / 'rolling-compare.md'} and {out / 'rolling-compare.json'}")
    found = [f"[{r.peer}: {r.assignor}] {p}" for r in rows for p in r.problems]
    for line in found:
        _say(f"PROBLEM: {line}")
    return 1 if found or not rows else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
