"""How a process finds the compiled twin: the one rule both of its seams follow.

The twin is the separate distribution ``kafka-sticky-plugin-twin`` (Rust, in this
repository's ``twin/`` folder; installed by the ``fast`` extra or ``make twin``), imported as
the module ``kafka_sticky_plugin_twin``. It serves two seams, each with its own contract
version and its own picker: the leader's wire (:mod:`.codec.implementation`,
``SEAM_VERSION``) and the engine's steps (:mod:`.core.implementation`, ``ENGINE_VERSION``).
A picker uses the twin only when :func:`load` finds it with the version the picker was
written for; setting :data:`PURE_PYTHON_ENV` to anything but empty or ``0`` makes both run
their plain-Python reference.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterable
from typing import Any

__all__ = [
    "PURE_PYTHON_ENV",
    "TWIN_DISTRIBUTION",
    "TWIN_MODULE",
    "describe",
    "import_twin",
    "load",
    "pure_python_forced",
]

#: Set to anything but empty or ``0`` to run the references even where the twin is installed.
PURE_PYTHON_ENV = "KAFKA_STICKY_PURE_PYTHON"
#: The twin's import name and distribution name (the ``fast`` extra installs it).
TWIN_MODULE = "kafka_sticky_plugin_twin"
TWIN_DISTRIBUTION = "kafka-sticky-plugin-twin"


def pure_python_forced() -> bool:
    """True when :data:`PURE_PYTHON_ENV` asks for the references."""
    return os.environ.get(PURE_PYTHON_ENV, "") not in ("", "0")


def import_twin() -> Any:
    """The twin module, or ``None`` when it cannot be imported."""
    try:
        return importlib.import_module(TWIN_MODULE)
    except ImportError:
        return None


def load(version_name: str, version: int, functions: Iterable[str] = ()) -> Any:
    """The twin module when it may be used for the seam whose contract is ``version`` (the
    module's attribute ``version_name`` equals it, it has every one of ``functions``, and
    the references are not forced), else ``None``: a twin built for another contract is
    ignored whole, never half-used."""
    if pure_python_forced():
        return None
    module = import_twin()
    if module is None or getattr(module, version_name, None) != version:
        return None
    if not all(callable(getattr(module, name, None)) for name in functions):
        return None
    return module


def describe(
    seam: str, loaded: Any, version_name: str, version: int, functions: Iterable[str] = ()
) -> str:
    """One line naming the implementation ``seam`` runs and why (for ``--version``);
    ``loaded`` is what :func:`load` returned for it."""
    if loaded is not None:
        return f"{seam}: compiled ({TWIN_DISTRIBUTION} {loaded.__version__})"
    if pure_python_forced():
        return f"{seam}: reference ({PURE_PYTHON_ENV} is set)"
    module = import_twin()
    if module is None:
        return f"{seam}: reference ({TWIN_DISTRIBUTION} is not installed)"
    missing = [name for name in functions if not callable(getattr(module, name, None))]
    if getattr(module, version_name, None) == version and missing:
        return (
            f"{seam}: reference ({TWIN_DISTRIBUTION} {getattr(module, '__version__', '?')} "
            f"lacks {', '.join(missing)})"
        )
    return (
        f"{seam}: reference ({TWIN_DISTRIBUTION} {getattr(module, '__version__', '?')} "
        f"implements {version_name} {getattr(module, version_name, '?')}, this package "
        f"{version_name} {version})"
    )
