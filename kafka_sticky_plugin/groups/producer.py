"""A producer of keyed, numbered records, before and during rebalances.

Record ``n`` has key ``k{n % keys}`` and value ``str(n)`` (see
:func:`~.member_config.encode_sequence`). The producer remembers where the broker acknowledged each
record (partition, offset): that set is what the consumers must deliver, so "lost" is exactly
"acknowledged but never delivered".

Invariant: :meth:`KeyedProducer.acknowledged` only contains records the broker acknowledged;
send failures are counted in ``failures`` and never silently dropped.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from ..client_security import SecurityLike, kafka_python_settings
from .events import Partition
from .member_config import encode_sequence

__all__ = ["KeyedProducer"]


class KeyedProducer:
    """Writes keyed numbered records to one topic, in bursts or at a steady rate."""

    def __init__(
        self, bootstrap: str, topic: str, keys: int = 64, security: SecurityLike = None
    ) -> None:
        from kafka import KafkaProducer

        self.topic = topic
        self._keys = keys
        self._producer: Any = KafkaProducer(
            bootstrap_servers=bootstrap, acks="all", linger_ms=5, **kafka_python_settings(security)
        )
        self._lock = threading.Lock()
        self._acked: dict[Partition, set[int]] = {}
        self._next = 0
        self.failures: list[str] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _on_ack(self, metadata: Any) -> None:
        with self._lock:
            self._acked.setdefault((metadata.topic, metadata.partition), set()).add(metadata.offset)

    def _on_error(self, exc: BaseException) -> None:
        with self._lock:
            self.failures.append(repr(exc))

    def send_one(self) -> None:
        """Send the next numbered record (asynchronously)."""
        sequence = self._next
        self._next += 1
        key = f"k{sequence % self._keys}".encode("ascii")
        future = self._producer.send(self.topic, key=key, value=encode_sequence(sequence))
        future.add_callback(self._on_ack)
        future.add_errback(self._on_error)

    def send_burst(self, count: int) -> None:
        """Send ``count`` records and wait until all are acknowledged."""
        for _ in range(count):
            self.send_one()
        self._producer.flush(30)

    def start(self, rate_per_s: float) -> None:
        """Send at ``rate_per_s`` records a second from a background thread until :meth:`stop`."""
        interval = 1.0 / rate_per_s

        def run() -> None:
            next_at = time.monotonic()
            while not self._stop.is_set():
                self.send_one()
                next_at += interval
                delay = next_at - time.monotonic()
                if delay > 0:
                    self._stop.wait(delay)

        self._thread = threading.Thread(target=run, name=f"producer-{self.topic}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the background sender and wait for every acknowledgement."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)
        self._producer.flush(30)

    def close(self) -> None:
        """Stop and close the client."""
        self.stop()
        self._producer.close(timeout=10)

    @property
    def sent(self) -> int:
        """How many records were handed to the client."""
        return self._next

    def acknowledged(self) -> dict[Partition, set[int]]:
        """Offsets the broker acknowledged, per partition (a copy)."""
        with self._lock:
            return {tp: set(offsets) for tp, offsets in self._acked.items()}
