"""What every command's argument parser shares: its name in usage and error lines,
``python -m kafka_sticky_plugin COMMAND`` (:data:`PROG` and the command), written once for
the dispatcher (:mod:`.__main__`) and each command's parser."""

from __future__ import annotations

import argparse

__all__ = ["PROG", "command_parser"]

#: How the commands are run; the dispatcher's usage and every command's ``prog`` start so.
PROG = "python -m kafka_sticky_plugin"


def command_parser(command: str, description: str | None) -> argparse.ArgumentParser:
    """The parser of ``python -m kafka_sticky_plugin COMMAND`` (its ``prog``), described by
    ``description``."""
    return argparse.ArgumentParser(prog=f"{PROG} {command}", description=description)
