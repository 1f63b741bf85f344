"""The twin's release, as far as this machine can check it.

The forge workflow (``.github/workflows/twin-wheels.yml``) cannot run here: these tests read
it for the targets it names (manylinux and musllinux, x86_64 and aarch64, the sdist, the
main package, ``twine check`` on both) and check that its pins and the distributions'
metadata agree with one another (one maturin version, one package version, one lowest
CPython). ``make twin`` builds the local platform's wheel and sdist and runs ``twine check``
on them and the main package's (``scripts/twin_build.sh``); the last test reads what it built.
"""

from __future__ import annotations

import configparser
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from packaging.tags import Tag
from packaging.utils import parse_wheel_filename

import kafka_sticky_plugin

# Python 3.11+ (the suite's); on 3.10 these metadata checks skip.
tomllib = pytest.importorskip("tomllib")

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / ".github" / "workflows" / "twin-wheels.yml"
TWIN = ROOT / "twin"


def _workflow() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    return loaded


def _setup_cfg() -> configparser.ConfigParser:
    parser = configparser.ConfigParser()
    parser.read(ROOT / "setup.cfg")
    return parser


def _maturin_pin(text: str) -> str:
    found = re.search(r"maturin==([0-9.]+)", text)
    assert found, "no maturin==X.Y.Z pin"
    return found.group(1)


def test_the_workflow_builds_every_linux_target_for_both_libcs() -> None:
    job = _workflow()["jobs"]["linux-wheels"]
    matrix = job["strategy"]["matrix"]
    assert set(matrix["platform"]) == {"manylinux", "musllinux"}
    assert set(matrix["target"]) == {"x86_64", "aarch64"}
    policies = {entry["platform"]: entry["policy"] for entry in matrix["include"]}
    assert policies == {"manylinux": "manylinux2014", "musllinux": "musllinux_1_2"}
    (build,) = [step for step in job["steps"] if "maturin-action" in step.get("uses", "")]
    assert build["with"]["working-directory"] == "twin"
    assert build["with"]["target"] == "${{ matrix.target }}"
    assert build["with"]["manylinux"] == "${{ matrix.policy }}"
    assert "--locked" in build["with"]["args"].split()


def test_the_workflow_builds_the_sdist_and_the_main_package_and_checks_them_all() -> None:
    jobs = _workflow()["jobs"]
    (sdist,) = [s for s in jobs["twin-sdist"]["steps"] if "maturin-action" in s.get("uses", "")]
    assert sdist["with"]["command"] == "sdist"
    main = " ".join(step.get("run", "") for step in jobs["main-package"]["steps"])
    assert "build_sdist" in main and "build_wheel" in main
    check = jobs["check"]
    assert set(check["needs"]) == {"linux-wheels", "twin-sdist", "main-package"}
    script = " ".join(step.get("run", "") for step in check["steps"])
    assert "twine check --strict dist/*" in script
    assert "requirements/release.txt" in script  # the pinned twine
    for tag in ("manylinux_2_17_x86_64", "manylinux_2_17_aarch64", "musllinux_1_2_x86_64"):
        assert tag in script
    assert "musllinux_1_2_aarch64" in script
    assert "wire seam: compiled" in script


def test_one_maturin_version_everywhere() -> None:
    pyproject = tomllib.loads((TWIN / "pyproject.toml").read_text(encoding="utf-8"))
    (backend,) = pyproject["build-system"]["requires"]
    pinned = _maturin_pin(backend)
    assert _workflow()["env"]["MATURIN_VERSION"] == pinned
    assert _maturin_pin((ROOT / "requirements" / "release.txt").read_text()) == pinned


def test_the_twin_is_released_at_the_main_package_version() -> None:
    cargo = tomllib.loads((TWIN / "Cargo.toml").read_text(encoding="utf-8"))
    assert cargo["package"]["version"] == kafka_sticky_plugin.__version__
    fast = _setup_cfg()["options.extras_require"]["fast"].split()
    assert fast == [f"kafka-sticky-plugin-twin=={kafka_sticky_plugin.__version__}"]


def test_the_stable_abi_floor_is_the_main_package_python_floor() -> None:
    """abi3-py3X in Cargo.toml, requires-python of both packages and the workflow's oldest
    CPython are the same version."""
    floor = _setup_cfg()["options"]["python_requires"]
    assert floor.startswith(">=3.")
    minor = floor.removeprefix(">=3.")
    cargo = tomllib.loads((TWIN / "Cargo.toml").read_text(encoding="utf-8"))
    pyo3 = cargo["dependencies"]["pyo3"]
    assert f"abi3-py3{minor}" in pyo3["features"]
    assert pyo3["version"].startswith("=")  # pinned; Cargo.lock holds the rest
    pyproject = tomllib.loads((TWIN / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["project"]["requires-python"] == floor
    wheels = _workflow()["jobs"]["linux-wheels"]["steps"]
    (setup,) = [s for s in wheels if "setup-python" in s.get("uses", "")]
    assert setup["with"]["python-version"] == f"3.{minor}"
    assert (TWIN / "Cargo.lock").is_file()


def test_the_local_wheel_make_twin_built_is_abi3() -> None:
    """``make twin``'s wheel: one abi3 wheel for this platform, CPython 3.10 and later, and
    the sdist beside it (both passed ``twine check`` in the same run)."""
    dist = ROOT / "build" / "twin" / "dist"
    wheels = sorted(dist.glob("kafka_sticky_plugin_twin-*.whl"))
    if not wheels:
        pytest.skip("twin tier skipped: no wheel in build/twin/dist (make twin)")
    (wheel,) = wheels
    name, version, _, tags = parse_wheel_filename(wheel.name)
    assert (str(name), str(version)) == (
        "kafka-sticky-plugin-twin",
        kafka_sticky_plugin.__version__,
    )
    assert {(t.interpreter, t.abi) for t in tags} == {("cp310", "abi3")}
    assert all(
        isinstance(t, Tag) and t.platform.startswith(("manylinux", "musllinux")) for t in tags
    )
    assert (dist / f"kafka_sticky_plugin_twin-{version}.tar.gz").is_file()


def _engine_steps() -> set[str]:
    """The engine steps the twin implements: :class:`EngineTwin`'s methods."""
    from kafka_sticky_plugin.core.implementation import STEPS, EngineTwin

    steps = {
        name
        for name, value in vars(EngineTwin).items()
        if not name.startswith("_") and callable(value)
    }
    assert set(STEPS) == steps  # the loader requires exactly the declared steps
    return steps


def test_the_twin_and_the_engine_picker_name_the_same_steps() -> None:
    """``ENGINE_VERSION`` is the same number on both sides (checked on the sources); every
    engine step has its ``#[pyfunction]`` (the seam test below checks the set)."""
    from kafka_sticky_plugin.core import implementation

    lib = (TWIN / "src" / "lib.rs").read_text(encoding="utf-8")
    found = re.search(r"const ENGINE_VERSION: u32 = (\d+);", lib)
    assert found and int(found.group(1)) == implementation.ENGINE_VERSION
    assert "push_min_cost" in _engine_steps()


def test_the_twin_and_the_loader_name_the_same_seam() -> None:
    """``SEAM_VERSION`` is the same number on both sides, and every seam function has its
    ``#[pyfunction]`` twin and its entry in the loader (checked on the sources, so also where
    the twin is not built)."""
    from kafka_sticky_plugin.codec import implementation, seam

    lib = (TWIN / "src" / "lib.rs").read_text(encoding="utf-8")
    found = re.search(r"const SEAM_VERSION: u32 = (\d+);", lib)
    assert found and int(found.group(1)) == implementation.SEAM_VERSION
    # a function defined in lib.rs, or defined beside it and exported by a `use`
    functions = set(re.findall(r"#\[pyfunction\]\s+fn (\w+)", lib))
    functions |= set(re.findall(r"#\[pymodule_export\]\s+use crate::\w+::(\w+);", lib))
    assert functions == set(seam.SEAM) | _engine_steps()
    assert set(seam.SEAM) <= set(implementation.__all__)
