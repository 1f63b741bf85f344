"""Each extra alone, installed as a user installs it (the built wheel into a fresh venv, pins
of ``requirements/base.txt`` as constraints): what it enables works and every command it does
not enable says which extra to add in one line with exit status 4 (issue 39).

One venv for the whole module: first ``[opentelemetry]`` alone (it exports a value through
the SDK it brings; no client, no broker: every command is refused), then ``[confluent]`` added
(the client that moves to KIP-848: ``migration-check`` and ``conformance`` still need
kafka-python's admin client and say so). Nothing here connects anywhere.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PINS = ROOT / "requirements" / "base.txt"

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

EXPORT_ONE_VALUE = """
from opentelemetry import metrics
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from kafka_sticky_plugin.metrics.opentelemetry import enable_opentelemetry
from kafka_sticky_plugin.metrics.recorder import RebalanceMetrics

reader = InMemoryMetricReader()
metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
recorder = RebalanceMetrics("orders", "c-1", assigned=lambda: 3)
recorder.join_attempt()
recorder.join_succeeded(1, added=3)
enable_opentelemetry(recorder)  # the global provider, as the README's one line
for resource in reader.get_metrics_data().resource_metrics:
    for scope in resource.scope_metrics:
        for metric in scope.metrics:
            for point in metric.data.data_points:
                print(metric.name, point.value)
"""


def _pip(python: Path, *args: str) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
         "--disable-pip-version-check", "-c", str(PINS), *args],
        check=True,
        timeout=300,
    )  # fmt: skip


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the venv's python, the built wheel) with ``[opentelemetry]`` alone installed."""
    out = tmp_path_factory.mktemp("wheelhouse")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
         "--disable-pip-version-check", "-w", str(out), str(ROOT)],
        check=True,
        timeout=180,
    )  # fmt: skip
    (wheel,) = out.glob("kafka_sticky_plugin-*.whl")
    where = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    python = where / "bin" / "python"
    _pip(python, f"{wheel}[opentelemetry]")
    return python, wheel


def _run(python: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(python), *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=python.parent,
        env={"PATH": "/usr/bin:/bin", "PYTHONUNBUFFERED": "1"},
    )


def _refused(python: Path, argv: list[str], extra: str) -> None:
    done = _run(python, "-m", "kafka_sticky_plugin", *argv)
    said = (done.stdout + done.stderr).strip()
    assert done.returncode == 4, said
    assert len(said.splitlines()) == 1 and "Traceback" not in said, said
    assert f'pip install "kafka-sticky-plugin[{extra}]"' in said, said


MIGRATION = ["migration-check", "--bootstrap", "127.0.0.1:1", "--group", "g"]
CONFORMANCE = ["conformance", "--bootstrap", "127.0.0.1:1"]


def test_the_opentelemetry_extra_alone_exports_a_value(venv: tuple[Path, Path]) -> None:
    python, _ = venv
    done = _run(python, "-c", EXPORT_ONE_VALUE)
    assert done.returncode == 0, done.stderr
    values = dict(line.rsplit(" ", 1) for line in done.stdout.splitlines())
    assert float(values["kafka.consumer.rebalance.count"]) == 1.0, done.stdout
    assert float(values["kafka.consumer.assigned.partitions"]) == 3.0, done.stdout
    assert _run(python, "-c", "import kafka").returncode != 0  # no client came with it


def test_every_command_without_its_extra_says_which_to_add(venv: tuple[Path, Path]) -> None:
    python, wheel = venv
    _refused(python, MIGRATION, "kafka-python")
    _refused(python, CONFORMANCE, "kafka-python")
    _refused(python, ["broker", "--port", "0"], "broker")
    _refused(python, ["demo"], "demo")
    # the confluent extra added: the commands still read the cluster with kafka-python
    _pip(python, f"{wheel}[confluent]")
    assert _run(python, "-c", "import confluent_kafka").returncode == 0
    _refused(python, MIGRATION, "kafka-python")
    _refused(python, CONFORMANCE, "kafka-python")
