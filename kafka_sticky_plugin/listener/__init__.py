"""Java 4.5's rebalance listener shape (KIP-1306) for every client, client-free floor.

:class:`~.contract.RebalanceListener` is the class users subclass (the same for
kafka-python, aiokafka and confluent-kafka); each callback receives the partitions and a
:class:`~.view.RebalanceConsumer`, a view of the consumer offering only Java's
rebalance-safe operations and dead once the callback returned. The bindings to each client
(which of its calls the view offers, how a callback is run) live in
``adapters/<client>/rebalance_consumer.py`` and are exported by the client faces.
"""

from .contract import KINDS, CallbackKind, RebalanceListener, check_rebalance_listener
from .view import (
    JAVA_OPERATIONS,
    RebalanceConsumer,
    RebalanceConsumerClosedError,
    RebalanceConsumerError,
)

__all__ = [
    "JAVA_OPERATIONS",
    "KINDS",
    "CallbackKind",
    "RebalanceConsumer",
    "RebalanceConsumerClosedError",
    "RebalanceConsumerError",
    "RebalanceListener",
    "check_rebalance_listener",
]
