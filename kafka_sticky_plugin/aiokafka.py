"""``sticky`` and ``cooperative-sticky`` for aiokafka, with one line to enable the hooks.

::

    consumer = AIOKafkaConsumer("orders", group_id="billing",
                                partition_assignment_strategy=[CooperativeStickyAssignor])
    install_hooks(consumer)   # before start()
    await consumer.start()

Call :func:`install_hooks` after creating the consumer and **before** ``await
consumer.start()`` (``start()`` creates the group coordinator and begins the first join);
topics may be given to the constructor or to ``subscribe()``, before or after ``start()``.
After ``start()`` it raises :class:`~kafka_sticky_plugin.errors.ConfigurationError`.

A face only (the install logic is :mod:`kafka_sticky_plugin.adapters.aiokafka.install`).
What the hooks give the consumer (details in
:mod:`kafka_sticky_plugin.adapters.aiokafka.hooks`): the member's join state kept by the
hooks and passed to the assignors (none shared between consumers), subscription v3 out and
v0-v3 read by the leader (owned partitions, generation, rack), the cooperative protocol
(KIP-429) when every configured assignor supports it, ``on_partitions_lost`` (awaited when
it is a coroutine function; a listener without it gets ``on_partitions_revoked``, as in
Java) on session loss, fencing and
poll-interval expiry, with no commit of lost partitions and no stale claim at the next join,
and KIP-70 subscription changes. Importing this module requires aiokafka (without it:
:class:`~kafka_sticky_plugin.errors.MissingExtraError` naming the ``[aiokafka]`` extra).
"""

from __future__ import annotations

from .extras import import_extra

import_extra("aiokafka", "kafka_sticky_plugin.aiokafka", "aiokafka")

from .adapters.aiokafka.assignors import CooperativeStickyAssignor, StickyAssignor
from .adapters.aiokafka.bounded_commit import commit_on_revoke
from .adapters.aiokafka.commit_guard import guard_commits
from .adapters.aiokafka.install import AioKafkaHooks, install_hooks
from .adapters.aiokafka.processing import Processor
from .adapters.aiokafka.rebalance_consumer import set_rebalance_listener
from .adapters.aiokafka.versions import SUPPORTED_MINORS, supported_text
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
    "SUPPORTED_MINORS",
    "AioKafkaHooks",
    "CommitGuard",
    "CommitRefusedError",
    "CooperativeStickyAssignor",
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
    "supported_text",
]
