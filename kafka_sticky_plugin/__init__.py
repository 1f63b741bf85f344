"""kafka-sticky-plugin: sticky (KIP-54/341) and cooperative-sticky (KIP-429/792) assignors.

The assignor classes subclass kafka-python's ``AbstractPartitionAssignor``; they are imported
lazily so that the pure engine (:mod:`kafka_sticky_plugin.core`) and the codecs
(:mod:`kafka_sticky_plugin.codec`) work without any Kafka client installed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = [
    "CooperativeStickyAssignor",
    "RebalanceConsumer",
    "RebalanceListener",
    "StickyAssignor",
    "__version__",
]

if TYPE_CHECKING:  # pragma: no cover
    from .adapters.kafka_python.assignors import CooperativeStickyAssignor, StickyAssignor
    from .listener import RebalanceConsumer, RebalanceListener

_LAZY = {
    "StickyAssignor": "kafka_sticky_plugin.adapters.kafka_python.assignors",
    "CooperativeStickyAssignor": "kafka_sticky_plugin.adapters.kafka_python.assignors",
    # Java 4.5's rebalance listener (KIP-1306), client-free: the same class for every client
    "RebalanceListener": "kafka_sticky_plugin.listener",
    "RebalanceConsumer": "kafka_sticky_plugin.listener",
}


def __getattr__(name: str) -> Any:
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'kafka_sticky_plugin' has no attribute {name!r}")
    import importlib

    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        if (exc.name or "").split(".")[0] != "kafka":
            raise
        from .extras import missing

        raise missing(exc, f"kafka_sticky_plugin.{name}", "kafka-python") from exc
    return getattr(module, name)
