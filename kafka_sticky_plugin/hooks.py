"""One line to give a ``KafkaConsumer`` Java-grade rebalancing on any supported kafka-python.

::

    from kafka import KafkaConsumer
    from kafka_sticky_plugin import CooperativeStickyAssignor
    from kafka_sticky_plugin.hooks import install_hooks

    consumer = KafkaConsumer(
        "orders",
        group_id="billing",
        partition_assignment_strategy=[CooperativeStickyAssignor],
    )
    install_hooks(consumer)  # the one line; the rest of the consumer code is unchanged

:func:`install_hooks` detects the client (kafka-python 2.0.2, 2.2.x, 2.3.x, 3.0.x or
kafka-python-ng 2.2.x; anything else raises
:class:`~kafka_sticky_plugin.errors.UnsupportedClientError` naming the supported ones),
selects the rebalance protocol by KIP-429's rule (a configuration without a common protocol
raises :class:`~kafka_sticky_plugin.errors.ConfigurationError` here, not at the first
rebalance) and patches *that consumer's* coordinator instance; other consumers in the
process are untouched. Install before the first ``poll``; the returned handle tells what was
selected and can remove the hooks again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .adapters.kafka_python.hooks.versions import (
    SUPPORTED_CLIENTS,
    ClientVersion,
    detect_client,
    supported_clients_text,
)
from .assignor.rebalance import RebalanceProtocol
from .errors import ConfigurationError, UnsupportedClientError

__all__ = [
    "SUPPORTED_CLIENTS",
    "ClientVersion",
    "CoordinatorHooks",
    "RebalanceProtocol",
    "UnsupportedClientError",
    "install_hooks",
    "supported_clients_text",
]

_HANDLE_ATTRIBUTE = "_kafka_sticky_plugin_hooks"


@dataclass(frozen=True)
class CoordinatorHooks:
    """The hooks installed on one consumer.

    ``client``: the detected client; ``protocol``: the rebalance protocol the group runs;
    ``assignors``: the assignor instances the coordinator uses (ours are one instance per
    consumer). :meth:`uninstall` restores the client's own behaviour.
    """

    client: ClientVersion
    protocol: RebalanceProtocol
    assignors: tuple[Any, ...]
    _impl: Any

    def uninstall(self) -> None:
        """Remove the hooks from the consumer (its coordinator's class methods apply again)."""
        self._impl.uninstall()
        consumer = self._impl._consumer
        if getattr(consumer, _HANDLE_ATTRIBUTE, None) is self:
            delattr(consumer, _HANDLE_ATTRIBUTE)


def install_hooks(consumer: Any) -> CoordinatorHooks:
    """Enable the plugin's coordinator hooks on ``consumer`` (a ``kafka.KafkaConsumer``).

    Idempotent: a second call returns the handle of the first. Raises
    ``UnsupportedClientError`` for an unsupported client and ``ConfigurationError`` when the
    consumer has no ``group_id``, has already joined its group, uses none of this package's
    assignors, or configures assignors with no rebalance protocol in common.
    """
    existing = getattr(consumer, _HANDLE_ATTRIBUTE, None)
    if isinstance(existing, CoordinatorHooks):
        return existing
    client = detect_client()
    coordinator = getattr(consumer, "_coordinator", None)
    if coordinator is None or getattr(consumer, "_subscription", None) is None:
        raise ConfigurationError(f"{consumer!r} is not a kafka-python KafkaConsumer")
    if coordinator.group_id is None:
        raise ConfigurationError("the consumer has no group_id: there is no group to hook into")
    if coordinator._generation.generation_id != -1 or consumer._subscription.assigned_partitions():
        raise ConfigurationError(
            "install_hooks must run before the consumer's first poll (it has already joined "
            "its group, and its rebalance protocol cannot change mid-membership)"
        )
    impl: Any
    if client.family == "v3":
        from .adapters.kafka_python.hooks.v3 import V3Hooks

        impl = V3Hooks(consumer)
    else:
        from .adapters.kafka_python.hooks.v2 import V2Hooks

        impl = V2Hooks(consumer)
    impl.install()
    _adopt_client_rack(consumer, impl.assignors)
    handle = CoordinatorHooks(
        client=client, protocol=impl.protocol, assignors=tuple(impl.assignors), _impl=impl
    )
    setattr(consumer, _HANDLE_ATTRIBUTE, handle)
    return handle


def _adopt_client_rack(consumer: Any, assignors: Any) -> None:
    """KIP-881: our assignors given no ``rack_id`` report the consumer's ``client_rack``
    (kafka-python 3.x has that setting; 2.x has none, so nothing changes there)."""
    config = getattr(consumer, "config", None)
    rack = config.get("client_rack") if isinstance(config, dict) else None
    if not rack or not isinstance(rack, str):
        return
    for assignor in assignors:
        adopt = getattr(assignor, "adopt_default_rack", None)
        if adopt is not None:
            adopt(rack)
