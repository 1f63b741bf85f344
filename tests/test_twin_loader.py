"""Which implementation of the wire seam a process picks (``codec/implementation.py``), seen
from ``python -m kafka_sticky_plugin --version`` in a child process: a module named
``kafka_sticky_plugin_twin`` put first on its path stands for a twin of another build."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from kafka_sticky_plugin.codec import implementation
from kafka_sticky_plugin.core import implementation as engine
from kafka_sticky_plugin.twin_loader import pure_python_forced


def _seam_line(path: Path | None, pure: str = "") -> str:
    env = {**os.environ, implementation.PURE_PYTHON_ENV: pure}
    if path is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(path), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-m", "kafka_sticky_plugin", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=True,
    )
    return done.stdout.splitlines()[1]


def test_a_twin_built_for_another_seam_is_not_used_at_all(tmp_path: Path) -> None:
    (tmp_path / "kafka_sticky_plugin_twin.py").write_text(
        "SEAM_VERSION = 999\n__version__ = '9.9.9'\n", encoding="utf-8"
    )
    assert _seam_line(tmp_path) == (
        "wire seam: reference (kafka-sticky-plugin-twin 9.9.9 implements SEAM_VERSION 999, "
        f"this package SEAM_VERSION {implementation.SEAM_VERSION})"
    )


def test_a_twin_that_cannot_be_imported_leaves_the_reference(tmp_path: Path) -> None:
    (tmp_path / "kafka_sticky_plugin_twin.py").write_text(
        "raise ImportError('built for another platform')\n", encoding="utf-8"
    )
    line = _seam_line(tmp_path)
    assert line == "wire seam: reference (kafka-sticky-plugin-twin is not installed)"


def test_zero_or_empty_does_not_force_the_reference() -> None:
    """``KAFKA_STICKY_PURE_PYTHON`` empty or ``0`` leaves the choice to what is installed."""
    expected = implementation.describe() if not pure_python_forced() else None
    for pure in ("", "0"):
        line = _seam_line(None, pure)
        assert line.startswith("wire seam: ")
        assert "is set" not in line
        if expected is not None:
            assert line == expected


def test_a_twin_without_every_engine_step_is_not_used_for_the_engine(tmp_path: Path) -> None:
    """A twin of the right ``ENGINE_VERSION`` that lacks a step (a half build) leaves the
    engine on its reference, and ``--version`` names what it lacks; its wire seam is used."""
    (tmp_path / "kafka_sticky_plugin_twin.py").write_text(
        f"ENGINE_VERSION = {engine.ENGINE_VERSION}\n__version__ = '9.9.9'\n"
        "def push_min_cost(*args):\n    return None\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, "-m", "kafka_sticky_plugin", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        env={
            **os.environ,
            implementation.PURE_PYTHON_ENV: "",
            "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]),
        },
        check=True,
    )
    lacks = ", ".join(step for step in engine.STEPS if step != "push_min_cost")
    assert done.stdout.splitlines()[2] == (
        f"engine steps: reference (kafka-sticky-plugin-twin 9.9.9 lacks {lacks})"
    )
