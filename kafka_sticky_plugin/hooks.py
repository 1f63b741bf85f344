"""The kafka-python coordinator hooks under their first name: the same objects as
:mod:`kafka_sticky_plugin.kafka_python` (which also exports the assignors), kept until 0.2.

::

    from kafka_sticky_plugin.hooks import install_hooks
    install_hooks(consumer)  # before the first poll

Importable without kafka-python: :func:`install_hooks` then raises
:class:`~kafka_sticky_plugin.errors.UnsupportedClientError` naming the extra to install.
"""

from __future__ import annotations

from .adapters.kafka_python.hooks.versions import (
    SUPPORTED_CLIENTS,
    ClientVersion,
    supported_clients_text,
)
from .adapters.kafka_python.install import CoordinatorHooks, install_hooks
from .assignor.rebalance import RebalanceProtocol
from .errors import UnsupportedClientError

__all__ = [
    "SUPPORTED_CLIENTS",
    "ClientVersion",
    "CoordinatorHooks",
    "RebalanceProtocol",
    "UnsupportedClientError",
    "install_hooks",
    "supported_clients_text",
]
