"""The package's floors, checked on the source: what each module may import of the package.

- ``errors`` imports nothing of the package;
- ``twin_loader`` (how both seams find the compiled twin) imports nothing of the package;
- ``core`` and ``codec`` import only themselves, ``errors`` and ``twin_loader``;
- ``assignor`` (the client-free floor) imports only itself, ``core``, ``codec`` and ``errors``,
  and no Kafka client;
- ``metrics`` (the rebalance metrics recorder and its exporters) imports only itself,
  ``assignor``, ``core``, ``errors`` and ``extras``, and no Kafka client;
- ``processing`` (the processing helpers' client-free floor) imports only itself and
  ``errors``, and no Kafka client;
- ``listener`` (Java 4.5's rebalance listener and its consumer view, KIP-1306) imports only
  itself and ``errors``, and no Kafka client;
- ``client_security`` (how a command or a test client authenticates) imports nothing of the
  package, and ``cli_security`` (the commands' security options) only it and ``errors``: the
  commands' security takes nothing from the group runner (``groups``);
- an adapter (``adapters/<name>``) never imports another adapter;
- nothing but the faces (``__init__``, ``kafka_python``, ``hooks``, ``aiokafka``,
  ``confluent``) and ``groups``/``demo`` (which drive real clients) imports the adapters;
- no module imports the repository-only test laboratory (``testlab``) or ``pytest``: the wheel
  carries the package alone (``integration_tests/test_wheel_install.py`` checks the built wheel
  the same way).

Imports are read from the syntax tree (top-level and function-level, relative ones resolved),
so a lazy import inside a function counts too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = "kafka_sticky_plugin"
ROOT = Path(__file__).resolve().parent.parent / PACKAGE
CLIENTS = ("kafka", "confluent_kafka", "aiokafka")


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Absolute names of every module ``path`` imports (``from x import y`` gives ``x`` and
    ``x.y``: ``y`` may be a submodule)."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            out.add(target)
            out.update(f"{target}.{alias.name}" for alias in node.names)
    return out


def _ours(name: str) -> str | None:
    """The first-level area of the package ``name`` belongs to (``core``, ``adapters.x``...)."""
    parts = name.split(".")
    if parts[0] != PACKAGE or len(parts) == 1:
        return None
    if parts[1] == "adapters":
        return ".".join(parts[1:3]) if len(parts) > 2 else "adapters"
    return parts[1]


MODULES = sorted(ROOT.rglob("*.py"))
ALLOWED = {
    "errors": set(),
    "twin_loader": set(),
    "core": {"core", "errors", "twin_loader"},
    "codec": {"codec", "errors", "twin_loader"},
    "assignor": {"assignor", "core", "codec", "errors"},
    "metrics": {"metrics", "assignor", "core", "errors", "extras"},
    "processing": {"processing", "errors"},
    "listener": {"listener", "errors"},
    "client_security": {"client_security"},
    "cli_security": {"cli_security", "client_security", "errors"},
}
ADAPTER_IMPORTERS = {
    "__init__",
    "hooks",
    "kafka_python",
    "confluent",
    "aiokafka",
    "groups",
    "demo",
}


def _area(path: Path) -> str:
    area = _ours(_module_name(path))
    return area if area is not None else "__init__"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_module_respects_its_floor(path: Path) -> None:
    """Each module imports only what its floor allows (see the module docstring)."""
    area = _area(path)
    imported = _imports(path)
    areas = {a for a in map(_ours, imported) if a is not None}
    floor = area.split(".")[0]
    if floor in ALLOWED:
        assert areas <= ALLOWED[floor], f"{area} imports {sorted(areas - ALLOWED[floor])}"
    if floor in (
        "core",
        "codec",
        "assignor",
        "errors",
        "twin_loader",
        "metrics",
        "processing",
        "listener",
    ):
        clients = {n for n in imported if n.split(".")[0] in CLIENTS}
        assert not clients, f"{area} imports a Kafka client: {sorted(clients)}"
    adapters = {a for a in areas if a.startswith("adapters.")}
    if area.startswith("adapters."):
        assert adapters <= {area}, f"{area} imports another adapter: {sorted(adapters - {area})}"
    elif area.split(".")[0] not in ADAPTER_IMPORTERS:
        assert not adapters, f"{area} imports an adapter: {sorted(adapters)}"


#: What no module of the package may import: the checkout's laboratory, the test runner.
REPOSITORY_ONLY = ("testlab", "pytest", "_pytest")


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_module_imports_nothing_repository_only(path: Path) -> None:
    """The wheel carries the package alone: no module (lazily or not) imports ``testlab``
    or ``pytest``."""
    found = sorted(n for n in _imports(path) if n.split(".")[0] in REPOSITORY_ONLY)
    assert not found, f"{_module_name(path)} imports {found}"


def test_the_checker_sees_relative_imports() -> None:
    """Guard against a checker that passes by reading nothing: known edges are found."""
    leader = _imports(ROOT / "assignor" / "leader.py")
    assert f"{PACKAGE}.codec" in leader and f"{PACKAGE}.core" in leader
    hooks_common = _imports(ROOT / "adapters" / "kafka_python" / "hooks" / "common.py")
    assert f"{PACKAGE}.assignor.contract" in hooks_common


def _import_graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports (lazy imports included)."""
    paths = {_module_name(path): path for path in sorted(ROOT.rglob("*.py"))}
    return {
        module: {name for name in _imports(path) if name in paths and name != module}
        for module, path in paths.items()
    }


def _circle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of ``graph`` (its modules in order, the first repeated at the end),
    or None."""
    done: set[str] = set()
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        if module in path:
            return [*path[path.index(module) :], module]
        if module in done:
            return None
        path.append(module)
        for name in sorted(graph[module]):
            found = visit(name)
            if found is not None:
                return found
        path.pop()
        done.add(module)
        return None

    for module in sorted(graph):
        found = visit(module)
        if found is not None:
            return found
    return None


def test_the_package_has_no_import_circle() -> None:
    """No module imports, even lazily, a module that imports it back (the group members'
    loops, for one, are picked in ``groups/member_process.py`` and never import one another)."""
    assert _circle(_import_graph()) is None


def test_the_circle_finder_finds_a_circle() -> None:
    """Guard against a finder that never finds: a planted circle is reported."""
    graph = _import_graph()
    graph[f"{PACKAGE}.groups.member_config"].add(f"{PACKAGE}.groups.kafka_python_member")
    circle = _circle(graph)
    assert circle is not None and circle[0] == circle[-1]
    assert f"{PACKAGE}.groups.kafka_python_member" in circle


@pytest.mark.parametrize("face", ["kafka_python", "hooks", "aiokafka", "confluent"])
def test_client_faces_only_re_export(face: str) -> None:
    """A client's public face defines nothing: no function, no class (issue 22); its logic
    lives in ``adapters/<client>/``, so a new client is one adapter folder plus a face."""
    tree = ast.parse((ROOT / f"{face}.py").read_text())
    defined = [
        node.name
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    ]
    assert defined == [], f"{face}.py defines {defined}"
