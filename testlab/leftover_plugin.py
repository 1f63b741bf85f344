"""A pytest plugin: a test session fails when it leaves a broker or client process running.

At the start of a session every later child gets a fresh run marker in its environment
(:func:`~kafka_sticky_plugin.lifetime.new_run_marker`); at its end, every broker or client process
that carries the marker or descends from the pytest process
(:func:`~kafka_sticky_plugin.lifetime.leftover_processes`) is killed, listed with its command line,
and the session's exit status becomes 1 (pytest's "tests failed"). Session fixtures are torn down
before this runs, so a session broker that stopped as it should is never reported.

The test tiers load it from their ``conftest.py`` (``tests/``, ``integration_tests/``) by
importing the two hooks. It does not import pytest (the hooks are duck-typed), so it costs an
installed package nothing.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from kafka_sticky_plugin.lifetime import RUN_MARKER_ENV, end_leftovers, new_run_marker

__all__ = ["pytest_configure", "pytest_sessionfinish"]

_TESTS_FAILED = 1  # pytest.ExitCode.TESTS_FAILED


def pytest_configure(config: Any) -> None:
    """Give the session (and every process it starts) its own run marker."""
    new_run_marker()


def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    """Kill and report what the session left running; fail the session if anything."""
    report = end_leftovers(os.environ.get(RUN_MARKER_ENV))
    if not report:
        return
    session.exitstatus = _TESTS_FAILED
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line("")
        reporter.write_line(report, red=True, bold=True)
    else:
        print(report, file=sys.stderr)
