"""``python -m kafka_sticky_plugin conformance --bootstrap HOST:PORT``: what your broker does.

Runs every measurement of :mod:`.conformance` against an existing cluster (any address:
``kafka-1.prod:9093``, ``10.0.0.5:9092``, ``[::1]:9092``; it creates and deletes its own
topics and groups, with random names) and
prints, per capability, what was observed next to what Apache Kafka and the embedded Tansu
broker do. Takes about three minutes (two measurements wait out session timeouts);
``--only`` picks some. A measurement that cannot run in this install (the librdkafka one
without confluent-kafka) is printed as ``skipped: <why>`` and counts as neither a difference
nor a broken guarantee.

Over a secured listener it authenticates with the options of
:mod:`~kafka_sticky_plugin.cli_security` (``--security-protocol``, ``--sasl-username``, the
password from an environment variable or a file, ``--ssl-cafile``...), the same as
``migration-check``; every client it starts (admin, members, the librdkafka child) uses them.
Its principal needs to create, grow and delete the topics ``conf-*`` and to read the groups
``conformance-*`` (docs/security.md gives the ACLs); a measurement the cluster refuses ends
the run with one line naming it and the refusal.

A request the broker does not serve is named with the broker's kind in the capability's line
(``Tansu (cluster id tansu_cluster) does not serve CreatePartitions``) or, when a measurement
cannot go on without it, in the one ``error:`` line that ends the run.

Exit status: 0 when the cluster behaves as Apache Kafka on every measured capability and no
guarantee broke on the way, 1 otherwise, 2 for bad arguments, an unreachable cluster (a
refused authentication included) or a refused measurement, 4 without kafka-python (the
``kafka-python`` extra; one line, before anything is connected to), 5 when the broker does
not serve a request a measurement cannot do without.
"""

from __future__ import annotations

import argparse
import sys

from ..broker_kind import broker_kind, unreachable, unserved_request
from ..cli_security import (
    add_bootstrap_argument,
    add_security_arguments,
    open_admin,
    security_from_args,
)
from ..client_security import ClientSecurity
from ..command_line import command_parser
from ..errors import ConfigurationError
from .choose import parse_bootstrap
from .conformance import MEASUREMENTS, UNSERVED, Observation, measure
from .embedded import BrokerStartError, wait_until_ready
from .profile import APACHE_KAFKA_PROFILE, TANSU_PROFILE

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = command_parser(
        "conformance",
        "Measure which consumer-group behaviours a running cluster has.",
    )
    add_bootstrap_argument(parser, "the cluster to measure")
    parser.add_argument(
        "--only",
        metavar="CAPABILITY[,...]",
        help=f"measure only these (of {', '.join(MEASUREMENTS)})",
    )
    add_security_arguments(parser)
    return parser


EXIT_UNSERVED = 5


def _row(observation: Observation, kind: str = "the broker") -> str:
    if observation.skipped is not None:
        return f"{observation.capability:<36} skipped: {observation.skipped}"
    kafka = getattr(APACHE_KAFKA_PROFILE, observation.capability)
    tansu = getattr(TANSU_PROFILE, observation.capability)
    same = "same as Apache Kafka" if observation.observed == kafka else "DIFFERS from Apache Kafka"
    detail = observation.detail.replace(UNSERVED, f"{kind} does not serve")
    line = (
        f"{observation.capability:<36} {observation.observed!s:<6} (Apache Kafka {kafka!s},"
        f" Tansu {tansu!s}) {same}: {detail}"
    )
    return line + "".join(f"\n    BROKEN: {v}" for v in observation.violations)


def _reach(endpoints: list[tuple[str, int]], shown: str, security: ClientSecurity | None) -> None:
    """Wait for the cluster: the plaintext readiness probe, or over a secured listener (which
    that probe cannot speak to) one connection with ``security``, so a refused password or
    certificate is one :class:`ConfigurationError` line here, not a failure inside a
    measurement."""
    refused = unreachable(endpoints)
    if refused is not None:  # at once, not after the readiness probe's 10 s
        raise ConfigurationError(f"cannot reach {shown}: {refused}")
    if security is None:
        wait_until_ready(*endpoints[0], timeout_s=10.0)
    else:
        open_admin(endpoints, security, 15.0, "kafka-sticky-conformance", shown).close()


def _kind(endpoints: list[tuple[str, int]], shown: str, security: ClientSecurity | None) -> str:
    """The broker's kind (:func:`~kafka_sticky_plugin.broker_kind.broker_kind`)."""
    admin = open_admin(endpoints, security, 15.0, "kafka-sticky-conformance", shown)
    try:
        return broker_kind(admin)
    finally:
        admin.close()


#: What the command's principal needs (docs/security.md), said when the cluster refuses it.
ACLS_NEEDED = (
    "Create, Describe, Read, Alter and Delete on the topics prefixed conf-,"
    " Read on the groups prefixed conformance-"
)


def _refusal(exc: Exception) -> str:
    """One line for what a measurement raised: an authorization failure names the ACLs the
    command needs (the client's own text repeats the whole request); anything else its
    first line."""
    name = type(exc).__name__
    if "AuthorizationFailed" in name:
        return f"{name}: the cluster refused it; the principal needs {ACLS_NEEDED}"
    text = str(exc).strip().splitlines()
    return f"{name}: {text[0][:300]}" if text else name


def main(argv: list[str] | None = None) -> int:
    """Run the measurements; see the module docstring for the exit status."""
    args = _parser().parse_args(argv)
    chosen = [c.strip() for c in args.only.split(",")] if args.only else list(MEASUREMENTS)
    unknown = [c for c in chosen if c not in MEASUREMENTS]
    if unknown:
        print(f"error: unknown capability {unknown}; known: {', '.join(MEASUREMENTS)}")
        return 2
    try:
        endpoints = parse_bootstrap(args.bootstrap)
        security = security_from_args(args)
        _reach(endpoints, args.bootstrap, security)
        kind = _kind(endpoints, args.bootstrap, security)
    except (ConfigurationError, BrokerStartError) as exc:
        print(f"error: {exc}")
        return 2
    print(f"measuring {len(chosen)} capabilities on {args.bootstrap} ({kind})", flush=True)
    observations: list[Observation] = []
    for capability in chosen:
        try:
            observations += measure(
                args.bootstrap, [capability], lambda o: print(_row(o, kind), flush=True), security
            )
        except Exception as exc:  # a refusal (an ACL missing...): one line, not a traceback
            request = unserved_request(exc)
            if request is not None:
                print(f"error: {capability}: {kind} does not serve {request}")
                return EXIT_UNSERVED
            print(f"error: {capability}: {_refusal(exc)}")
            return 2
    measured = [o for o in observations if o.skipped is None]
    differs = [o for o in measured if o.observed != getattr(APACHE_KAFKA_PROFILE, o.capability)]
    broken = [o for o in measured if o.violations]
    print(
        f"{len(measured)} measured, {len(observations) - len(measured)} skipped,"
        f" {len(differs)} differ from Apache Kafka, {len(broken)} broke a guarantee"
    )
    return 1 if differs or broken else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
