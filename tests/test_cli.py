"""The command line's own behaviour: usage, --version, argument errors (no broker needed)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from typing import Any

import pytest

import kafka_sticky_plugin
from kafka_sticky_plugin.__main__ import main
from kafka_sticky_plugin.codec import implementation
from kafka_sticky_plugin.core import implementation as engine


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kafka_sticky_plugin", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


def test_an_unknown_command_says_so_and_shows_the_usage() -> None:
    """Exit status 2 with the reason and the commands on stderr (argparse's convention)."""
    done = _cli("asign")
    assert done.returncode == 2
    assert "error: unknown command 'asign'" in done.stderr
    for command in ("broker", "demo", "simulate", "assign"):
        assert f"  {command} " in done.stderr
    assert done.stdout == ""


def test_no_command_is_an_error_too(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "error: no command given" in capsys.readouterr().err


def test_help_is_not_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    assert "usage: python -m kafka_sticky_plugin" in capsys.readouterr().out


def test_version_prints_the_package_version_and_both_implementations() -> None:
    """Three lines: the version, then the implementations in use of the wire seam and of the
    engine's steps (this process's choice: the compiled twin where it is installed, else the
    reference)."""
    done = _cli("--version")
    assert done.returncode == 0
    version, seam, steps = done.stdout.splitlines()
    assert version == f"kafka-sticky-plugin {kafka_sticky_plugin.__version__}"
    assert seam.startswith(f"wire seam: {implementation.IMPLEMENTATION} (")
    assert seam == implementation.describe()
    assert steps.startswith(f"engine steps: {engine.IMPLEMENTATION} (")
    assert steps == engine.describe()


def test_the_pure_python_switch_makes_version_name_the_reference() -> None:
    done = _cli("--version", env={**os.environ, implementation.PURE_PYTHON_ENV: "1"})
    assert done.returncode == 0
    assert done.stdout.splitlines()[1:] == [
        "wire seam: reference (KAFKA_STICKY_PURE_PYTHON is set)",
        "engine steps: reference (KAFKA_STICKY_PURE_PYTHON is set)",
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--members", "0"], "--members must be at least 1 (got 0)"),
        (["--members", "-3"], "--members must be at least 1 (got -3)"),
        (["--partitions", "0"], "--partitions must be at least 1 (got 0)"),
    ],
)
def test_assign_refuses_empty_groups_with_a_message(args: list[str], message: str) -> None:
    """No traceback: argparse's usage line and the reason, exit status 2."""
    done = _cli("assign", *args)
    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr


def test_assign_with_one_member_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """The smallest group: the leave step leaves nobody, the new member gets everything."""
    assert main(["assign", "--members", "1", "--partitions", "2"]) == 0
    out = capsys.readouterr().out
    assert "(4 of 4 assigned)" in out


def test_broker_refuses_a_port_in_use(capsys: pytest.CaptureFixture[str]) -> None:
    """Checked before anything starts: exit 2 and what to do."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["broker", "--port", str(port)]) == 2
    assert f"127.0.0.1:{port} is already in use" in capsys.readouterr().err


def test_broker_refuses_a_port_out_of_range() -> None:
    done = _cli("broker", "--port", "70000")
    assert done.returncode == 2
    assert "--port must be between 0 and 65535" in done.stderr


def _without(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    """The command in a fresh interpreter where ``module`` cannot be found (as if not
    installed: ``sys.modules[module] = None`` makes ``find_spec`` return None)."""
    code = (
        "import sys; sys.modules[sys.argv[1]] = None\n"
        "from kafka_sticky_plugin.__main__ import main\n"
        "sys.exit(main(sys.argv[2:]))"
    )
    return subprocess.run(
        [sys.executable, "-c", code, module, *args], capture_output=True, text=True, timeout=60
    )


def test_demo_with_aiokafka_names_both_extras_when_aiokafka_is_missing() -> None:
    """A ``[demo]`` install has no aiokafka: the message names ``[demo,aiokafka]``."""
    done = _without("aiokafka", "demo", "--client", "aiokafka")
    assert done.returncode == 4, done.stdout + done.stderr  # EXIT_MISSING_EXTRA
    assert 'pip install "kafka-sticky-plugin[demo,aiokafka]"' in done.stdout
    assert "Traceback" not in done.stdout + done.stderr


def test_demo_names_the_demo_extra_when_matplotlib_is_missing() -> None:
    done = _without("matplotlib", "demo")
    assert done.returncode == 4, done.stdout + done.stderr
    assert 'pip install "kafka-sticky-plugin[demo]"' in done.stdout


def test_demo_bootstrap_that_nobody_answers_is_one_line_at_once(
    tmp_path: object, capsys: pytest.CaptureFixture[str]
) -> None:
    """``demo --bootstrap`` on a closed loopback port: one line naming the address, exit 2,
    before any broker is opened or member started (issue 39: each member's client would
    otherwise wait for its own bootstrap timeout)."""
    pytest.importorskip("matplotlib")
    from pathlib import Path

    from kafka_sticky_plugin.demo import cli as demo_cli

    def never(*_args: object, **_kwargs: object) -> Any:
        raise AssertionError("the demo opened the broker")

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    out = Path(str(tmp_path))
    argv = ["--bootstrap", f"127.0.0.1:{port}", "--out", str(out)]
    assert demo_cli.main(argv, open_broker=never) == 2
    said = capsys.readouterr().out.splitlines()
    assert said == [f"error: cannot reach 127.0.0.1:{port}: Connection refused"]
