"""The aiokafka adapter: this package's assignors shaped for ``AIOKafkaConsumer`` and the
coordinator hooks that give an asyncio consumer generations, ``on_partitions_lost`` and the
cooperative protocol. Public face: :mod:`kafka_sticky_plugin.aiokafka`.

Imports only the client-free floor (:mod:`kafka_sticky_plugin.assignor`), ``core``, ``codec``
and ``errors``; never another adapter.
"""
