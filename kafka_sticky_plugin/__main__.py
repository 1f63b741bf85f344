"""Command line: ``python -m kafka_sticky_plugin COMMAND ...`` (broker, demo, simulate, assign,
conformance, migration-check).

Each sub-command lives in its own module and is imported only when chosen. ``--version``
prints the package version and the wire seam's implementation in use (``compiled``: the
twin, or ``reference``: plain Python; see :mod:`kafka_sticky_plugin.codec.implementation`);
an unknown command prints what is wrong and the usage to stderr and exits with status 2
(argparse's convention).
"""

from __future__ import annotations

import importlib
import sys

from . import __version__

_COMMANDS = {
    "broker": (
        "kafka_sticky_plugin.broker_cli",
        "run the embedded Kafka broker on 127.0.0.1 for your own app",
    ),
    "demo": ("kafka_sticky_plugin.demo.cli", "the rolling-restart demo on the embedded broker"),
    "simulate": ("kafka_sticky_plugin.simulate.cli", "the rebalance simulation pipeline (PySpark)"),
    "assign": ("kafka_sticky_plugin.example_assign", "assign an example group and print the plan"),
    "conformance": (
        "kafka_sticky_plugin.testing.conformance_cli",
        "measure which group behaviours your broker has (--bootstrap HOST:PORT)",
    ),
    "migration-check": (
        "kafka_sticky_plugin.migration_check",
        "can group G move online to KIP-848 and back? (--bootstrap HOST:PORT --group G)",
    ),
}

_PROG = "python -m kafka_sticky_plugin"


def usage() -> str:
    """The top-level usage text."""
    lines = [
        f"usage: {_PROG} [--version] COMMAND [options]",
        "",
        "commands:",
        *(f"  {name:<16} {about}" for name, (_, about) in _COMMANDS.items()),
        "",
        f"{_PROG} COMMAND --help shows a command's options.",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in ("-h", "--help"):
        print(usage())
        return 0
    if args and args[0] in ("-V", "--version"):
        from .codec.implementation import describe

        print(f"kafka-sticky-plugin {__version__}")
        print(describe())
        return 0
    if not args or args[0] not in _COMMANDS:
        problem = "no command given" if not args else f"unknown command {args[0]!r}"
        print(f"{_PROG}: error: {problem}\n\n{usage()}", file=sys.stderr)
        return 2
    module = importlib.import_module(_COMMANDS[args[0]][0])
    result: int = module.main(args[1:])
    return result


if __name__ == "__main__":
    sys.exit(main())
