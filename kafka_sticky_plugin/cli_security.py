"""The security options of the project's commands that read a user's cluster
(``migration-check``, ``conformance``): how the command authenticates, parsed into one
:class:`~.client_security.ClientSecurity`, which gives kafka-python's and
librdkafka's settings; and :func:`open_admin`, the commands' first connection, whose failure
(a refused password, an untrusted certificate) is one line naming the client's last reason.

Options: ``--security-protocol`` (``PLAINTEXT``, ``SASL_PLAINTEXT``, ``SSL``, ``SASL_SSL``),
``--sasl-mechanism`` (``SCRAM-SHA-512``, ``SCRAM-SHA-256``, ``PLAIN``), ``--sasl-username``,
the password from ``--sasl-password-env NAME`` (an environment variable, default
:data:`PASSWORD_ENV`) or ``--sasl-password-file PATH`` (its first line), ``--ssl-cafile``,
``--ssl-certfile`` with ``--ssl-keyfile``.

Invariants: a password is never taken from the command line (it would show in ``ps`` and in
shell history), never printed, and never part of an error message; every inconsistent
combination is refused with one :class:`~.errors.ConfigurationError` line before anything
connects; no option at all gives ``None`` (PLAINTEXT, the settings the command had before).
"""

from __future__ import annotations

import argparse
import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .client_security import ClientSecurity, kafka_python_settings
from .errors import ConfigurationError

__all__ = [
    "PASSWORD_ENV",
    "add_bootstrap_argument",
    "add_security_arguments",
    "bootstrap_servers",
    "open_admin",
    "security_from_args",
]

#: The environment variable the SASL password is read from unless ``--sasl-password-env``
#: names another.
PASSWORD_ENV = "KAFKA_STICKY_SASL_PASSWORD"
_PROTOCOLS = ("PLAINTEXT", "SASL_PLAINTEXT", "SSL", "SASL_SSL")
_MECHANISMS = ("SCRAM-SHA-512", "SCRAM-SHA-256", "PLAIN")


def add_bootstrap_argument(parser: argparse.ArgumentParser, cluster: str) -> None:
    """The required ``--bootstrap`` of a command that reads a user's cluster (its help starts
    with ``cluster``); :func:`~.brokers.choose.parse_bootstrap` reads the value."""
    parser.add_argument(
        "--bootstrap",
        required=True,
        metavar="HOST:PORT",
        help=f"{cluster}: HOST:PORT[,HOST:PORT...], IPv6 as [::1]:9092",
    )


def add_security_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of the module docstring to ``parser`` (one argument group)."""
    group = parser.add_argument_group(
        "security", "how to authenticate (the password never on the command line)"
    )
    _add_choice(group, "--security-protocol", _PROTOCOLS, "the listener's protocol")
    _add_choice(group, "--sasl-mechanism", _MECHANISMS, "SASL mechanism")
    group.add_argument("--sasl-username", metavar="USER", help="SASL user name")
    group.add_argument(
        "--sasl-password-env",
        metavar="NAME",
        default=PASSWORD_ENV,
        help=f"environment variable holding the SASL password (default {PASSWORD_ENV})",
    )
    group.add_argument(
        "--sasl-password-file",
        metavar="PATH",
        help="file whose first line is the SASL password (instead of the environment)",
    )
    group.add_argument("--ssl-cafile", metavar="PEM", help="CA certificate(s) to trust")
    group.add_argument("--ssl-certfile", metavar="PEM", help="client certificate (mutual TLS)")
    group.add_argument("--ssl-keyfile", metavar="PEM", help="the client certificate's key")


def _add_choice(
    group: argparse._ArgumentGroup, option: str, choices: Sequence[str], about: str
) -> None:
    """``option``: one of ``choices`` in any case, the first by default (its help says so)."""
    group.add_argument(
        option,
        type=str.upper,
        choices=choices,
        default=choices[0],
        help=f"{about} (default {choices[0]})",
    )


def _password(args: argparse.Namespace, environ: Mapping[str, str]) -> str:
    if args.sasl_password_file:
        path = Path(args.sasl_password_file)
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            why = exc.strerror or type(exc).__name__
            refused = f"--sasl-password-file {path}: cannot read it ({why})"
            raise ConfigurationError(refused) from None
        if not lines or not lines[0]:
            raise ConfigurationError(f"--sasl-password-file {path}: its first line is empty")
        return lines[0]
    password = environ.get(args.sasl_password_env)
    if not password:
        raise ConfigurationError(
            f"{args.security_protocol} needs the SASL password: set the environment variable"
            f" {args.sasl_password_env} or give --sasl-password-file"
        )
    return password


def _readable(option: str, value: str | None) -> None:
    if value is not None and not Path(value).is_file():
        raise ConfigurationError(f"{option} {value}: no such file")


def security_from_args(
    args: argparse.Namespace, environ: Mapping[str, str] | None = None
) -> ClientSecurity | None:
    """The command's :class:`ClientSecurity` (``None`` for PLAINTEXT); ``environ`` defaults
    to ``os.environ``. Raises :class:`ConfigurationError` (one line, no secret) for options
    that cannot work together or files that are not there; connects to nothing."""
    environ = os.environ if environ is None else environ
    protocol: str = args.security_protocol
    sasl = protocol.startswith("SASL")
    tls = protocol.endswith("SSL")
    if not sasl and (args.sasl_username or args.sasl_password_file):
        raise ConfigurationError(
            f"--sasl-username/--sasl-password-file need --security-protocol SASL_PLAINTEXT"
            f" or SASL_SSL (not {protocol})"
        )
    if not tls and (args.ssl_cafile or args.ssl_certfile or args.ssl_keyfile):
        raise ConfigurationError(
            f"--ssl-* options need --security-protocol SSL or SASL_SSL (not {protocol})"
        )
    if bool(args.ssl_certfile) != bool(args.ssl_keyfile):
        raise ConfigurationError("--ssl-certfile and --ssl-keyfile go together: give both")
    for option, value in (
        ("--ssl-cafile", args.ssl_cafile),
        ("--ssl-certfile", args.ssl_certfile),
        ("--ssl-keyfile", args.ssl_keyfile),
    ):
        _readable(option, value)
    if protocol == "PLAINTEXT":
        return None
    if sasl and not args.sasl_username:
        raise ConfigurationError(f"{protocol} needs --sasl-username")
    return ClientSecurity(
        protocol=protocol,
        username=args.sasl_username if sasl else None,
        password=_password(args, environ) if sasl else None,
        cafile=args.ssl_cafile,
        certfile=args.ssl_certfile,
        keyfile=args.ssl_keyfile,
        mechanism=args.sasl_mechanism,
    )


class _BootstrapFailures(logging.Handler):
    """The last reason kafka-python gave for a failed bootstrap connection (it logs it and
    retries until its timeout, then raises a bare timeout): a refused SASL authentication
    or a TLS certificate the client does not trust is then named in the error line. The
    reason is the broker's or the TLS library's text, which carries no credential."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.last: str | None = None

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().startswith("Bootstrap connection to") and record.args:
            args = record.args if isinstance(record.args, tuple) else (record.args,)
            reason = args[1] if len(args) > 1 else None
            if isinstance(reason, BaseException):
                self.last = f"{type(reason).__name__}: {reason}"

    def __str__(self) -> str:
        return "" if self.last is None else f" (last connection failure: {self.last})"


def bootstrap_servers(endpoints: Sequence[tuple[str, int]]) -> list[str]:
    """``(host, port)`` pairs as the clients take them (an IPv6 host in brackets)."""
    return [f"[{h}]:{p}" if ":" in h else f"{h}:{p}" for h, p in endpoints]


def open_admin(
    endpoints: Sequence[tuple[str, int]],
    security: ClientSecurity | None,
    timeout_s: float,
    client_id: str,
    shown: str,
) -> Any:
    """A connected kafka-python ``KafkaAdminClient`` (the caller closes it) of the cluster at
    ``endpoints`` (from :func:`~.brokers.choose.parse_bootstrap`), which the user gave as
    ``shown``; raises
    :class:`ConfigurationError` "cannot reach SHOWN: ..." in one line, with the last
    connection failure kafka-python logged, when it cannot connect within ``timeout_s``."""
    from kafka.admin import KafkaAdminClient
    from kafka.errors import KafkaError

    settings = kafka_python_settings(security)
    if "bootstrap_timeout_ms" in KafkaAdminClient.DEFAULT_CONFIG:  # kafka-python 3.x
        settings["bootstrap_timeout_ms"] = int(timeout_s * 1000)
    failures = _BootstrapFailures()
    logging.getLogger("kafka.net.manager").addHandler(failures)
    try:
        return KafkaAdminClient(
            bootstrap_servers=bootstrap_servers(endpoints),
            client_id=client_id,
            request_timeout_ms=int(timeout_s * 1000),
            **settings,
        )
    except KafkaError as exc:
        raise ConfigurationError(
            f"cannot reach {shown}: {type(exc).__name__}: {exc}{failures}"
        ) from None
    finally:
        logging.getLogger("kafka.net.manager").removeHandler(failures)
