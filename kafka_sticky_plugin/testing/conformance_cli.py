"""``python -m kafka_sticky_plugin conformance --bootstrap HOST:PORT``: what your broker does.

Runs every measurement of :mod:`.conformance` against an existing cluster (loopback
addresses only; it creates and deletes its own topics and groups, with random names) and
prints, per capability, what was observed next to what Apache Kafka and the embedded Tansu
broker do. Takes about three minutes (two measurements wait out session timeouts);
``--only`` picks some.

Exit status: 0 when the cluster behaves as Apache Kafka on every measured capability and no
guarantee broke on the way, 1 otherwise, 2 for bad arguments or an unreachable cluster.
"""

from __future__ import annotations

import argparse
import sys

from ..errors import ConfigurationError
from .brokers import require_loopback_bootstrap
from .conformance import MEASUREMENTS, Observation, measure
from .embedded_broker import BrokerStartError, wait_until_ready
from .profile import APACHE_KAFKA_PROFILE, TANSU_PROFILE

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m kafka_sticky_plugin conformance",
        description="Measure which consumer-group behaviours a running cluster has.",
    )
    parser.add_argument("--bootstrap", required=True, metavar="HOST:PORT", help="loopback only")
    parser.add_argument(
        "--only",
        metavar="CAPABILITY[,...]",
        help=f"measure only these (of {', '.join(MEASUREMENTS)})",
    )
    return parser


def _row(observation: Observation) -> str:
    kafka = getattr(APACHE_KAFKA_PROFILE, observation.capability)
    tansu = getattr(TANSU_PROFILE, observation.capability)
    same = "same as Apache Kafka" if observation.observed == kafka else "DIFFERS from Apache Kafka"
    line = (
        f"{observation.capability:<36} {observation.observed!s:<6} (Apache Kafka {kafka!s},"
        f" Tansu {tansu!s}) {same}: {observation.detail}"
    )
    return line + "".join(f"\n    BROKEN: {v}" for v in observation.violations)


def main(argv: list[str] | None = None) -> int:
    """Run the measurements; see the module docstring for the exit status."""
    args = _parser().parse_args(argv)
    chosen = [c.strip() for c in args.only.split(",")] if args.only else list(MEASUREMENTS)
    unknown = [c for c in chosen if c not in MEASUREMENTS]
    if unknown:
        print(f"error: unknown capability {unknown}; known: {', '.join(MEASUREMENTS)}")
        return 2
    try:
        host, port = require_loopback_bootstrap(args.bootstrap)[0]
        wait_until_ready(host, port, timeout_s=10.0)
    except (ConfigurationError, BrokerStartError) as exc:
        print(f"error: {exc}")
        return 2
    print(f"measuring {len(chosen)} capabilities on {args.bootstrap}", flush=True)
    observations = measure(args.bootstrap, chosen, say=lambda o: print(_row(o), flush=True))
    differs = [o for o in observations if o.observed != getattr(APACHE_KAFKA_PROFILE, o.capability)]
    broken = [o for o in observations if o.violations]
    print(
        f"{len(observations)} measured, {len(differs)} differ from Apache Kafka,"
        f" {len(broken)} broke a guarantee"
    )
    return 1 if differs or broken else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
