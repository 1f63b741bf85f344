"""Choose and run the broker a test session talks to: the product's modes plus ``kafka``.

:func:`open_broker` is :func:`kafka_sticky_plugin.brokers.choose.open_broker` (modes
``auto``, ``embedded``, ``docker``, ``external``; see there) with one more mode, the one only a
checkout has: ``kafka`` (alias ``apache-kafka``), Apache Kafka (KRaft) as a plain JVM process
from the jars ``make kafka-broker`` resolved with Maven (:mod:`testlab.kafka_broker`; needs
``java``, no Docker). The test fixture reads ``KAFKA_STICKY_BROKER`` (default ``auto``).

Invariant: every address handed out is a loopback address (the product's
:func:`~kafka_sticky_plugin.brokers.choose.require_loopback_bootstrap`; the launcher binds
127.0.0.1 only).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from kafka_sticky_plugin.brokers import choose
from kafka_sticky_plugin.brokers.embedded import RunningBroker
from testlab.kafka_broker import kafka_broker

__all__ = ["MODES", "open_broker"]

MODES = (*choose.MODES, "kafka")


@contextlib.contextmanager
def open_broker(
    mode: str = "auto",
    bootstrap: str | None = None,
    log_dir: Path | None = None,
    image: str | None = None,
) -> Iterator[RunningBroker]:
    """Run (or attach to) a broker for the duration of the block; see the module docstring."""
    if mode in choose.CHECKOUT_MODES:
        with kafka_broker(log_dir=log_dir) as broker:
            yield broker
        return
    with choose.open_broker(mode, bootstrap=bootstrap, log_dir=log_dir, image=image) as broker:
        yield broker
