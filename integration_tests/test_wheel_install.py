"""Done-when for a new user: the built wheel, installed with one extra into a fresh virtual
environment (nothing else: no checkout on the path, no other client), runs every README code
snippet for that client against the real broker, then the documentation site's snippets the
README does not repeat (docs/*.md), and the example program for that client.

Slow (about a minute per client: building the wheel, a venv, installing from pip's cache or
the package index with the pins of ``requirements/base.txt`` as constraints).
"""

from __future__ import annotations

import ast
import contextlib
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from kafka_sticky_plugin.groups.admin import unique_name

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
# The site's pages, in a fixed order after the README (index.md only includes README.md).
DOCUMENTS = [README, *sorted((ROOT / "docs").rglob("*.md"))]
PINS = ROOT / "requirements" / "base.txt"

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

_KAFKA_PYTHON_IMPORT = re.compile(r"^(from kafka[ .]|import kafka\b)", re.MULTILINE)
_CONFLUENT_IMPORT = re.compile(r"\bkafka_sticky_plugin\.confluent\b|\bconfluent_kafka\b")
_AIOKAFKA_IMPORT = re.compile(r"^from aiokafka\b|^import aiokafka\b", re.MULTILINE)


def readme_snippets() -> list[tuple[str, str]]:
    """Every ```python block of the README, then those of docs/*.md that the README does not
    repeat word for word, each with where it is (``README.md:12``)."""
    found: list[tuple[str, str]] = []
    seen: set[str] = set()
    for document in DOCUMENTS:
        text = document.read_text(encoding="utf-8")
        for match in re.finditer(r"^```python\n(.*?)^```$", text, re.MULTILINE | re.DOTALL):
            if match.group(1) in seen:
                continue
            seen.add(match.group(1))
            line = text.count("\n", 0, match.start()) + 1
            found.append((f"{document.relative_to(ROOT).as_posix()}:{line}", match.group(1)))
    return found


def snippets_for(client: str) -> list[tuple[str, str]]:
    """The snippets a user of ``client`` runs: its own and the client-free ones."""
    chosen = []
    for line, code in readme_snippets():
        kafka_python = bool(_KAFKA_PYTHON_IMPORT.search(code))
        confluent = bool(_CONFLUENT_IMPORT.search(code))
        aiokafka = bool(_AIOKAFKA_IMPORT.search(code))
        if aiokafka:
            if client == "aiokafka":
                chosen.append((line, code))
        elif (client == "kafka-python" and not confluent) or (
            client == "confluent" and not kafka_python
        ):
            chosen.append((line, code))
    return chosen


def test_every_readme_snippet_is_meant_for_one_client_or_none() -> None:
    """No snippet mixes the clients, and each client has its snippets (so none is skipped)."""
    for line, code in readme_snippets():
        assert not (_KAFKA_PYTHON_IMPORT.search(code) and _CONFLUENT_IMPORT.search(code)), line
    readme = [where for where, _ in readme_snippets() if where.startswith("README.md:")]
    assert len(readme) >= 5  # a topic, kafka-python 3.x and 2.x, aiokafka, confluent-kafka
    assert len(snippets_for("kafka-python")) >= 6
    assert len(snippets_for("confluent")) >= 3
    assert len(snippets_for("aiokafka")) >= 2


def _clean_copy(where: Path) -> Path:
    """The checkout without its build products: a used checkout's ``build/lib`` would put
    stale modules (moved or deleted ones) into the wheel, and its old egg-info's SOURCES.txt
    stale files into the sdist."""
    shutil.copytree(
        ROOT,
        where,
        ignore=shutil.ignore_patterns(
            ".git", ".venv*", "*.egg-info", "build", "dist", "out", "__pycache__", ".*_cache"
        ),
    )
    return where


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project's wheel, built offline from a clean copy of the checkout."""
    out = tmp_path_factory.mktemp("wheelhouse")
    source = _clean_copy(tmp_path_factory.mktemp("wheel-source") / "source")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--disable-pip-version-check",
            "-w",
            str(out),
            str(source),
        ],
        check=True,
        timeout=180,
    )
    (built,) = out.glob("kafka_sticky_plugin-*.whl")
    return built


def _imported_modules(name: str, source: str) -> set[str]:
    """Absolute names of the modules a wheel file (``kafka_sticky_plugin/x/y.py``) imports,
    lazily or not (``from a import b`` gives ``a``; relative imports resolved)."""
    parts = name.removesuffix(".py").split("/")
    package = parts[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source, name)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                found.add(".".join([*base, node.module] if node.module else base))
            else:
                found.add(node.module or "")
    return found


#: Imports no wheel module may make: the test runner and the checkout's laboratory.
REPOSITORY_ONLY = ("pytest", "_pytest", "testlab")


def test_the_wheel_carries_the_product_and_nothing_of_the_lab(wheel: Path) -> None:
    """Every module of the wheel is read (syntax tree, lazy imports too): none imports pytest,
    the laboratory or a module of the package the wheel lacks; the laboratory's modules and
    the old ``testing`` package are absent; what the commands and the demo run is there."""
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        sources = {n: archive.read(n).decode("utf-8") for n in names if n.endswith(".py")}
    tops = {n.split("/", 1)[0] for n in names if not n.split("/", 1)[0].endswith(".dist-info")}
    assert tops == {"kafka_sticky_plugin"}, tops
    shipped = {n.removesuffix(".py").removesuffix("/__init__").replace("/", ".") for n in sources}
    for wanted in (
        "kafka_sticky_plugin.lifetime",
        "kafka_sticky_plugin.brokers.embedded",
        "kafka_sticky_plugin.brokers.choose",
        "kafka_sticky_plugin.brokers.conformance_cli",
        "kafka_sticky_plugin.groups.runner",
        "kafka_sticky_plugin.groups.member_process",
        "kafka_sticky_plugin.demo.cli",
    ):
        assert wanted in shipped, wanted
    assert not [n for n in names if n.startswith("kafka_sticky_plugin/testing/")]
    lab = {p.read_text(encoding="utf-8"): p.name for p in (ROOT / "testlab").glob("*.py")}
    assert len(lab) > 10, "the laboratory was not found in the checkout"
    assert not sorted(f"{n} is {lab[s]}" for n, s in sources.items() if s in lab)
    problems = []
    for name, source in sorted(sources.items()):
        for module in sorted(_imported_modules(name, source)):
            top = module.split(".")[0]
            if top in REPOSITORY_ONLY:
                problems.append(f"{name} imports {module}")
            elif top == "kafka_sticky_plugin" and module not in shipped:
                problems.append(f"{name} imports {module}, which the wheel lacks")
    assert problems == []


def _run(python: Path, args: list[str], cwd: Path, timeout: float = 90) -> str:
    done = subprocess.run(
        [str(python), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={"PATH": "/usr/bin:/bin", "PYTHONUNBUFFERED": "1"},
    )
    assert done.returncode == 0, f"{args} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


def _fresh_venv(wheel: Path, extra: str, where: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    python = where / "bin" / "python"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "-c",
            str(PINS),
            f"{wheel}[{extra}]",
        ],
        check=True,
        timeout=240,
    )
    return python


def _ensure_topic(bootstrap: str, topic: str, partitions: int) -> None:
    from kafka.errors import TopicAlreadyExistsError

    from kafka_sticky_plugin.groups.admin import create_topic

    with contextlib.suppress(TopicAlreadyExistsError):
        create_topic(bootstrap, topic, partitions)


@pytest.mark.parametrize(
    ("extra", "other_client", "example"),
    [
        ("kafka-python", "confluent", "consumer_kafka_python3.py"),
        ("confluent", "kafka-python", "consumer_confluent.py"),
        ("aiokafka", "confluent", ""),
    ],
)
def test_wheel_with_one_extra_runs_the_readme_and_the_example(
    broker: Any, wheel: Path, tmp_path: Path, extra: str, other_client: str, example: str
) -> None:
    python = _fresh_venv(wheel, extra, tmp_path / "venv")
    work = tmp_path / "work"
    work.mkdir()

    where = _run(python, ["-c", "import kafka_sticky_plugin as k; print(k.__file__)"], work)
    assert str(tmp_path / "venv") in where, "the package did not come from the wheel"
    assert "kafka-sticky-plugin" in _run(python, ["-m", "kafka_sticky_plugin", "--version"], work)

    # The other client is absent, and asking for it names its extra.
    missing = {
        "confluent": "import kafka_sticky_plugin.confluent",
        "kafka-python": ("from kafka_sticky_plugin import StickyAssignor"),
    }[other_client]
    done = subprocess.run([str(python), "-c", missing], cwd=work, capture_output=True, text=True)
    assert done.returncode == 1
    assert f'pip install "kafka-sticky-plugin[{other_client}]"' in done.stderr, done.stderr

    _ensure_topic(broker.bootstrap, "orders", 3)
    for where, code in snippets_for(extra):
        script = work / (re.sub(r"\W", "_", where) + ".py")
        script.write_text(code.replace("127.0.0.1:9092", broker.bootstrap), encoding="utf-8")
        _run(python, [str(script)], work)

    if not example:  # aiokafka: the README snippet is its example
        return
    topic, group = unique_name("t-wheel"), unique_name("g-wheel")
    out = _run(
        python,
        [
            str(ROOT / "examples" / example),
            "--bootstrap",
            broker.bootstrap,
            "--topic",
            topic,
            "--group",
            group,
            "--produce",
            "20",
            "--max-records",
            "20",
        ],
        work,
    )
    assert "consumed 20 records" in out, out
    assert "Traceback" not in out, out


def test_the_sdist_ships_the_package_documents_and_examples_but_no_test_suite(
    tmp_path: Path,
) -> None:
    """A test suite in the sdist would be one that cannot run (it needs the repository)."""
    import tarfile

    # From a copy without the checkout's egg-info: setuptools adds every file its old
    # SOURCES.txt lists, so a file MANIFEST.in misses would still ship from a used checkout.
    source = _clean_copy(tmp_path / "source")
    code = (
        "import sys; from setuptools import build_meta as b; "
        f"print(b.build_sdist({str(tmp_path)!r}))"
    )
    subprocess.run([sys.executable, "-c", code], cwd=source, check=True, capture_output=True)
    (sdist,) = tmp_path.glob("kafka_sticky_plugin-*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    for wanted in ("LICENSE", "README.md", "CHANGELOG.md", "DESIGN.md", "setup.cfg"):
        assert wanted in names, wanted
    assert "examples/consumer_kafka_python3.py" in names
    assert "kafka_sticky_plugin/brokers/embedded.py" in names
    assert not [n for n in names if n.startswith(("testlab/", "kafka_sticky_plugin/testing/"))]
    shipped_tests = sorted(n for n in names if n.startswith(("tests/", "integration_tests/")))
    assert shipped_tests == []
    # Every data file an example names (relative to the example, or to the checkout) is there.
    assert "examples/grids/traces/rolling-deploy.jsonl" in names
    for example in sorted(n for n in names if n.startswith("examples/") and "." in n):
        text = (ROOT / example).read_text(encoding="utf-8", errors="replace")
        for reference in re.findall(r"[\w./-]+\.(?:jsonl|json|ya?ml)\b", text):
            candidates = [Path(example).parent / reference, Path(reference)]
            found = [c for c in candidates if (ROOT / c).is_file()]
            for path in found:
                assert os.path.normpath(path) in names, f"{example} needs {path}"
