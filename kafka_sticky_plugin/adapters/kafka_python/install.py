"""``install_hooks`` for kafka-python: detect the client, pick the version family's hooks
(:mod:`.hooks.v2` or :mod:`.hooks.v3`), patch one consumer's coordinator instance.

Public faces: :mod:`kafka_sticky_plugin.kafka_python` (and its alias
:mod:`kafka_sticky_plugin.hooks`). Selection of the rebalance protocol happens here, at
install time, so a configuration without a common protocol raises
:class:`~kafka_sticky_plugin.errors.ConfigurationError` here, not at the first rebalance.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...assignor.contract import JoinReadouts
from ...assignor.prompt_heartbeats import DEFAULT_PROMPT_HEARTBEATS, PromptHeartbeats
from ...assignor.rebalance import RebalanceProtocol
from ...errors import ConfigurationError
from ...listener.contract import RebalanceListener, check_rebalance_listener
from ...metrics.recorder import RebalanceMetrics
from .hooks.versions import ClientVersion, detect_client
from .rebalance_consumer import refuse_second_listener, set_rebalance_listener

__all__ = ["CoordinatorHooks", "install_hooks"]

_HANDLE_ATTRIBUTE = "_kafka_sticky_plugin_hooks"


@dataclass(frozen=True)
class CoordinatorHooks(JoinReadouts):
    """The hooks installed on one consumer.

    ``client``: the detected client; ``protocol``: the rebalance protocol the group runs;
    ``assignors``: the assignor instances the coordinator uses (ours hold no member state
    here: an instance may be shared by several hooked consumers); :attr:`joined` (and its
    :attr:`generation`): this member's last completed join, the one state its JoinGroup
    metadata is written from. :meth:`uninstall` restores the client's own
    behaviour.
    """

    client: ClientVersion
    protocol: RebalanceProtocol
    assignors: tuple[Any, ...]
    _impl: Any

    @property
    def metrics(self) -> RebalanceMetrics:
        """This consumer's rebalance metrics (:mod:`kafka_sticky_plugin.metrics`)."""
        metrics: RebalanceMetrics = self._impl.metrics
        return metrics

    def uninstall(self) -> None:
        """Remove the hooks from the consumer (its coordinator's class methods apply again)."""
        self._impl.uninstall()
        consumer = self._impl._consumer
        if getattr(consumer, _HANDLE_ATTRIBUTE, None) is self:
            delattr(consumer, _HANDLE_ATTRIBUTE)


def install_hooks(
    consumer: Any,
    *,
    prompt_heartbeats: PromptHeartbeats | None = DEFAULT_PROMPT_HEARTBEATS,
    listener: RebalanceListener | None = None,
) -> CoordinatorHooks:
    """Enable the plugin's coordinator hooks on ``consumer`` (a ``kafka.KafkaConsumer``).

    ``prompt_heartbeats``: after each cooperative SyncGroup, heartbeat at this quicker rate
    for a short window so a follow-up round starts sooner
    (:mod:`kafka_sticky_plugin.assignor.prompt_heartbeats`); ``None`` turns it off.
    kafka-python 3.0.x only (the 2.x family keeps its own heartbeat thread's schedule).
    ``listener``: a :class:`~kafka_sticky_plugin.listener.RebalanceListener` (Java 4.5's
    shape, KIP-1306), registered as :func:`.rebalance_consumer.set_rebalance_listener` does.

    Idempotent: a second call returns the handle of the first. Raises
    ``UnsupportedClientError`` for an unsupported client and ``ConfigurationError`` when the
    consumer has no ``group_id``, has already joined its group, uses none of this package's
    assignors, or configures assignors with no rebalance protocol in common.
    """
    existing = getattr(consumer, _HANDLE_ATTRIBUTE, None)
    if isinstance(existing, CoordinatorHooks):
        if listener is not None:
            set_rebalance_listener(consumer, listener)
        return existing
    client = detect_client()
    coordinator = getattr(consumer, "_coordinator", None)
    if coordinator is None or getattr(consumer, "_subscription", None) is None:
        raise ConfigurationError(f"{consumer!r} is not a kafka-python KafkaConsumer")
    if listener is not None:
        check_rebalance_listener(listener, coroutines=False)
        refuse_second_listener(consumer)
    if coordinator.group_id is None:
        raise ConfigurationError("the consumer has no group_id: there is no group to hook into")
    if coordinator._generation.generation_id != -1 or consumer._subscription.assigned_partitions():
        raise ConfigurationError(
            "install_hooks must run before the consumer's first poll (it has already joined "
            "its group, and its rebalance protocol cannot change mid-membership)"
        )
    impl: Any
    if client.family == "v3":
        from .hooks.v3 import V3Hooks

        impl = V3Hooks(consumer, prompt_heartbeats)
    else:
        from .hooks.v2 import V2Hooks

        impl = V2Hooks(consumer)
    impl.install()
    handle = CoordinatorHooks(
        client=client, protocol=impl.protocol, assignors=tuple(impl.assignors), _impl=impl
    )
    setattr(consumer, _HANDLE_ATTRIBUTE, handle)
    if listener is not None:
        set_rebalance_listener(consumer, listener)
    return handle
