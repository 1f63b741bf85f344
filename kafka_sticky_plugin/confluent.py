"""confluent-kafka consumers with the same rebalance listener API as kafka-python.

librdkafka cannot run a Python assignor: it uses its own C strategies (``range``,
``roundrobin``, ``cooperative-sticky``). What this module gives confluent-kafka users:

- :func:`subscribe`: a kafka-python-style listener (``on_partitions_revoked``,
  ``on_partitions_assigned``, ``on_partitions_lost``) with the right ``assign`` /
  ``incremental_assign`` calls for the protocol in use, optional commit-on-revoke, and lost
  partitions never committed; or Java 4.5's listener shape (KIP-1306):
  :class:`kafka_sticky_plugin.RebalanceListener`, whose methods also get a
  :class:`RebalanceConsumer` (the view of the consumer valid during the callback).
- :func:`check_config` / :func:`rebalance_protocol`: refuse, before the consumer starts, a
  configuration that cannot work, with what to do instead; say whether it is EAGER or
  COOPERATIVE. :func:`create_consumer` does both and returns a consumer that knows its protocol.
- :func:`copy_committed_offsets`: the step that makes a range -> cooperative-sticky migration
  under a new group id safe (librdkafka refuses Java's mixed-list rolling upgrade).

Importing this module requires confluent-kafka; the rest of the package does not.
"""

from __future__ import annotations

from .extras import import_extra

import_extra("confluent_kafka", "kafka_sticky_plugin.confluent", "confluent")

from .adapters.confluent_kafka.commit_guard import guard_commits
from .adapters.confluent_kafka.config import RebalanceProtocol, check_config
from .adapters.confluent_kafka.consumer import (
    CheckedConsumer,
    create_consumer,
    rebalance_protocol,
    subscribe,
)
from .adapters.confluent_kafka.listener import (
    RebalanceBridge,
    RebalanceListener,
    TopicPartition,
    commit_positions,
)
from .adapters.confluent_kafka.migration import copy_committed_offsets
from .adapters.confluent_kafka.processing import Processor
from .assignor.commit_guard import CommitGuard
from .errors import CommitRefusedError
from .listener import RebalanceConsumer, RebalanceConsumerClosedError, RebalanceConsumerError

__all__ = [
    "CheckedConsumer",
    "CommitGuard",
    "CommitRefusedError",
    "Processor",
    "RebalanceBridge",
    "RebalanceConsumer",
    "RebalanceConsumerClosedError",
    "RebalanceConsumerError",
    "RebalanceListener",
    "RebalanceProtocol",
    "TopicPartition",
    "check_config",
    "commit_positions",
    "copy_committed_offsets",
    "create_consumer",
    "guard_commits",
    "rebalance_protocol",
    "subscribe",
]
