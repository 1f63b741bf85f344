"""Feed librdkafka's statistics into the rebalance metrics of a :class:`.CheckedConsumer`.

When the configuration sets ``statistics.interval.ms`` above 0, :func:`chain_stats_cb`
returns the ``stats_cb`` to give librdkafka in place of the user's: it keeps the ``cgrp``
values (:mod:`kafka_sticky_plugin.metrics.rdkafka_stats`) in a :class:`StatisticsFeed`, and
then calls the user's own ``stats_cb`` (if any) with the same string, whose result or
exception is theirs (it comes out of ``poll()`` as it would without us).

Invariant: our part never raises into librdkafka's callback; unreadable statistics are
skipped with one DEBUG line each. The feed holds the latest values until a recorder is
attached (``subscribe`` does that), so the first emission is not lost.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any

from ...metrics.rdkafka_stats import RdkafkaGroupStats, parse_group_stats
from ...metrics.recorder import RebalanceMetrics

__all__ = ["StatisticsFeed", "chain_stats_cb", "statistics_enabled"]

_log = logging.getLogger("kafka_sticky_plugin.confluent")


def statistics_enabled(config: Mapping[str, Any]) -> bool:
    """Whether ``config`` makes librdkafka emit statistics (``statistics.interval.ms`` > 0)."""
    try:
        return int(config.get("statistics.interval.ms") or 0) > 0
    except (TypeError, ValueError):
        return False  # librdkafka refuses the value itself, with its own message


class StatisticsFeed:
    """The latest ``cgrp`` statistics of one consumer, passed on to its recorder if any."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._latest: RdkafkaGroupStats | None = None
        self._recorder: RebalanceMetrics | None = None

    def attach(self, recorder: RebalanceMetrics) -> None:
        """Record every later emission into ``recorder`` (and the latest one now)."""
        with self._lock:
            self._recorder = recorder
            latest = self._latest
        if latest is not None:
            recorder.rdkafka_statistics(latest)

    def receive(self, text: object) -> None:
        """One statistics JSON string from librdkafka; never raises."""
        try:
            stats = parse_group_stats(text) if isinstance(text, str | bytes) else None
            if stats is None:
                _log.debug("librdkafka statistics without readable cgrp values: skipped")
                return
            with self._lock:
                self._latest = stats
                recorder = self._recorder
            if recorder is not None:
                recorder.rdkafka_statistics(stats)
        except Exception:  # never into librdkafka's callback (the module invariant)
            _log.debug("librdkafka statistics not recorded", exc_info=True)


def chain_stats_cb(feed: StatisticsFeed, user_cb: Any) -> Callable[[str], Any]:
    """The ``stats_cb`` that feeds ``feed`` and then calls ``user_cb`` (when callable)."""

    def stats_cb(text: str) -> Any:
        feed.receive(text)
        if callable(user_cb):
            return user_cb(text)
        return None

    return stats_cb
