"""What the kip848 tier's tests require of the log: nothing of this package's at ERROR.

Records of the clients' own loggers (kafka-python's ``kafka.cluster`` logs "Metadata refresh
failed" at ERROR when a producer's metadata request times out on a loaded machine, and then
retries) are printed, not failed on: whether records were lost is what each test's flow checks,
not the client's logging."""

from __future__ import annotations

import logging

import pytest

__all__ = ["assert_no_error_of_ours"]


def assert_no_error_of_ours(caplog: pytest.LogCaptureFixture) -> None:
    """Nothing from this package at ERROR, and every warning of ours is one line."""
    ours = [r for r in caplog.records if r.name.startswith("kafka_sticky_plugin")]
    for record in caplog.records:
        if record in ours or record.levelno >= logging.ERROR:
            print(f"logged: {record.levelname} {record.name}: {record.getMessage()}")
    errors = [r for r in ours if r.levelno >= logging.ERROR]
    assert not errors, f"ERROR from our code: {errors[0].getMessage()}"
    assert all("\n" not in r.getMessage() for r in ours), "a warning of ours spans lines"
