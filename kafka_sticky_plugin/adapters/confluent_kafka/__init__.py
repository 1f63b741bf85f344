"""confluent-kafka (librdkafka) adapter, private: the public face is kafka_sticky_plugin.confluent.

- :mod:`.config`: the pure configuration check and the rebalance protocol it implies.
- :mod:`.listener`: librdkafka's rebalance callbacks translated to a kafka-python listener.
- :mod:`.consumer`: consumers that know their protocol; ``subscribe``.
- :mod:`.migration`: copying committed offsets to a new group id.
"""
