"""Command line: ``python -m kafka_sticky_plugin {demo,simulate,assign} ...``.

Each sub-command lives in its own module and is imported only when chosen.
"""

from __future__ import annotations

import importlib
import sys

_COMMANDS = {
    "demo": ("kafka_sticky_plugin.demo.cli", "the rolling-restart demo on the embedded broker"),
    "simulate": ("kafka_sticky_plugin.simulate.cli", "the rebalance simulation pipeline (PySpark)"),
    "assign": ("kafka_sticky_plugin.example_assign", "assign an example group and print the plan"),
    "conformance": (
        "kafka_sticky_plugin.testing.conformance_cli",
        "measure which group behaviours your broker has (--bootstrap HOST:PORT)",
    ),
}


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help") or args[0] not in _COMMANDS:
        print("usage: python -m kafka_sticky_plugin COMMAND [options]\n\ncommands:")
        for name, (_, about) in _COMMANDS.items():
            print(f"  {name:<10} {about}")
        return 0 if args and args[0] in ("-h", "--help") else 2
    module = importlib.import_module(_COMMANDS[args[0]][0])
    result: int = module.main(args[1:])
    return result


if __name__ == "__main__":
    sys.exit(main())
