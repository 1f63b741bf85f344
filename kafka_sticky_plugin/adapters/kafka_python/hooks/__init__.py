"""Coordinator hooks for every supported kafka-python version (one module per family).

- :mod:`.versions`: which client is installed and which family drives it;
- :mod:`.members`, :mod:`.listener`, :mod:`.common`: shared plumbing;
- the client-free parts they act on live in :mod:`kafka_sticky_plugin.assignor` (protocol
  selection, rebalance decisions, the assignor contract, the shell, the leader);
- :mod:`.v2` (kafka-python 2.0.2 / 2.2.x / 2.3.x, kafka-python-ng 2.2.x), :mod:`.v3` (3.0.x).

Installed by :func:`kafka_sticky_plugin.adapters.kafka_python.install.install_hooks`; the
public entry point is :func:`kafka_sticky_plugin.kafka_python.install_hooks` (alias:
:mod:`kafka_sticky_plugin.hooks`).
"""
