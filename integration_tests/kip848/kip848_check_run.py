"""``migration-check`` run in-process by the kip848 tier's tests: its exit status and output
(also printed, so a failing test shows what the command said)."""

from __future__ import annotations

import pytest

from kafka_sticky_plugin.migration_check import main

__all__ = ["run_migration_check"]


def run_migration_check(
    bootstrap: str, group_id: str, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str]:
    """Run ``migration-check --bootstrap bootstrap --group group_id``; (status, output). Output
    captured before the call is discarded first."""
    capsys.readouterr()
    code = main(["--bootstrap", bootstrap, "--group", group_id])
    out = capsys.readouterr().out
    print(out)
    return code, out
