"""One line to give a ``KafkaConsumer`` Java-grade rebalancing on any supported kafka-python.

::

    from kafka import KafkaConsumer
    from kafka_sticky_plugin.kafka_python import CooperativeStickyAssignor, install_hooks

    consumer = KafkaConsumer(
        "orders",
        group_id="billing",
        partition_assignment_strategy=[CooperativeStickyAssignor],
    )
    install_hooks(consumer)  # the one line; the rest of the consumer code is unchanged

:func:`install_hooks` detects the client (kafka-python 2.0.2, 2.2.x, 2.3.x, 3.0.9+ or
kafka-python-ng 2.2.x; anything else raises
:class:`~kafka_sticky_plugin.errors.UnsupportedClientError` naming the supported ones),
selects the rebalance protocol by KIP-429's rule (a configuration without a common protocol
raises :class:`~kafka_sticky_plugin.errors.ConfigurationError` here, not at the first
rebalance) and patches *that consumer's* coordinator instance; other consumers in the
process are untouched. Install before the first ``poll``; the returned handle tells what was
selected and can remove the hooks again.

A face only: the assignors live in :mod:`kafka_sticky_plugin.adapters.kafka_python.assignors`,
the install logic in :mod:`kafka_sticky_plugin.adapters.kafka_python.install`. Importing this
module requires kafka-python (or kafka-python-ng); without it:
:class:`~kafka_sticky_plugin.errors.MissingExtraError` naming the ``[kafka-python]`` extra.
:mod:`kafka_sticky_plugin.hooks` is the older name of the install half (kept until 0.2).
"""

from __future__ import annotations

from .extras import import_extra

import_extra("kafka", "kafka_sticky_plugin.kafka_python", "kafka-python")

from .adapters.kafka_python.assignors import CooperativeStickyAssignor, StickyAssignor
from .adapters.kafka_python.commit_guard import guard_commits
from .adapters.kafka_python.hooks.versions import (
    SUPPORTED_CLIENTS,
    ClientVersion,
    supported_clients_text,
)
from .adapters.kafka_python.install import CoordinatorHooks, install_hooks
from .adapters.kafka_python.processing import Processor
from .adapters.kafka_python.rebalance_consumer import set_rebalance_listener
from .adapters.kafka_python.revoke_commit import commit_on_revoke
from .assignor.commit_guard import CommitGuard
from .assignor.prompt_heartbeats import PromptHeartbeats
from .assignor.rebalance import RebalanceProtocol
from .errors import CommitRefusedError, UnsupportedClientError
from .listener import (
    RebalanceConsumer,
    RebalanceConsumerClosedError,
    RebalanceConsumerError,
    RebalanceListener,
)

__all__ = [
    "SUPPORTED_CLIENTS",
    "ClientVersion",
    "CommitGuard",
    "CommitRefusedError",
    "CooperativeStickyAssignor",
    "CoordinatorHooks",
    "Processor",
    "PromptHeartbeats",
    "RebalanceConsumer",
    "RebalanceConsumerClosedError",
    "RebalanceConsumerError",
    "RebalanceListener",
    "RebalanceProtocol",
    "StickyAssignor",
    "UnsupportedClientError",
    "commit_on_revoke",
    "guard_commits",
    "install_hooks",
    "set_rebalance_listener",
    "supported_clients_text",
]
