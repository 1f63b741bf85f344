"""librdkafka's statistics in the rebalance metrics: the ``cgrp`` parser on a real captured
emission and on malformed or partial text; the recorder's ``rdkafka_*`` fields; the
confluent consumer's ``stats_cb`` chaining (built without a broker: librdkafka connects
only on ``poll``/``subscribe``)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from kafka_sticky_plugin.adapters.confluent_kafka.statistics import (
    StatisticsFeed,
    chain_stats_cb,
    statistics_enabled,
)
from kafka_sticky_plugin.confluent import create_consumer
from kafka_sticky_plugin.metrics import RebalanceMetrics
from kafka_sticky_plugin.metrics.names import METRICS, TEXT_FIELDS
from kafka_sticky_plugin.metrics.rdkafka_stats import RdkafkaGroupStats, parse_group_stats

CAPTURED = (Path(__file__).parent / "vectors" / "rdkafka_statistics_consumer.json").read_text()


def test_a_real_emission_gives_its_cgrp_values() -> None:
    """The captured librdkafka 2.16.0 emission: every field as the JSON holds it."""
    group = json.loads(CAPTURED)["cgrp"]
    stats = parse_group_stats(CAPTURED)
    assert stats == RdkafkaGroupStats(
        rebalance_cnt=group["rebalance_cnt"],
        rebalance_age_ms=group["rebalance_age"],
        assignment_size=group["assignment_size"],
        state=group["state"],
        join_state=group["join_state"],
        rebalance_reason=group["rebalance_reason"],
    )
    assert stats.state == "up" and stats.rebalance_cnt >= 1
    assert parse_group_stats(CAPTURED.encode()) == stats


@pytest.mark.parametrize(
    "text",
    [
        "",
        "{",
        CAPTURED[: len(CAPTURED) // 2],  # truncated
        "[]",
        "null",
        '{"name": "rdkafka#producer-1", "type": "producer"}',  # no cgrp
        '{"cgrp": []}',
        '{"cgrp": {"rebalance_cnt": 1, "rebalance_age": 5}}',  # assignment_size missing
        '{"cgrp": {"rebalance_cnt": "1", "rebalance_age": 5, "assignment_size": 2}}',
        '{"cgrp": {"rebalance_cnt": true, "rebalance_age": 5, "assignment_size": 2}}',
        '{"cgrp": {"rebalance_cnt": -3, "rebalance_age": 5, "assignment_size": 2}}',
        "[" * 100_000,  # deeper than json can go
    ],
)
def test_malformed_or_partial_text_gives_none(text: str) -> None:
    assert parse_group_stats(text) is None


def test_missing_strings_default_to_empty() -> None:
    stats = parse_group_stats(
        '{"cgrp": {"rebalance_cnt": 2, "rebalance_age": 7, "assignment_size": 3, "state": 5}}'
    )
    assert stats == RdkafkaGroupStats(2, 7, 3, "", "", "")


def test_recorder_fields_before_and_after_statistics() -> None:
    """-1 and "" before any emission; the latest emission's values after; never exported text."""
    metrics = RebalanceMetrics("g", "c")
    before = metrics.snapshot()
    assert (before.rdkafka_rebalance_cnt, before.rdkafka_assignment_size) == (-1, -1)
    assert before.rdkafka_group_up == -1 and before.rdkafka_state == ""
    metrics.rdkafka_statistics(RdkafkaGroupStats(1, 10, 4, "up", "steady", "a"))
    metrics.rdkafka_statistics(RdkafkaGroupStats(3, 250, 2, "wait-coord", "init", "b"))
    after = metrics.snapshot()
    assert (after.rdkafka_rebalance_cnt, after.rdkafka_rebalance_age) == (3, 250.0)
    assert after.rdkafka_assignment_size == 2 and after.rdkafka_group_up == 0
    assert (after.rdkafka_state, after.rdkafka_join_state) == ("wait-coord", "init")
    assert after.rdkafka_rebalance_reason == "b"
    names = after.as_java_names()
    assert names["rdkafka-rebalance-cnt"] == 3.0
    assert not {f.replace("_", "-") for f in TEXT_FIELDS} & set(names)
    assert {"rdkafka_rebalance_cnt", "rdkafka_group_up"} <= {m.field for m in METRICS}


def test_feed_keeps_the_latest_until_attached_and_skips_garbage(
    caplog: pytest.LogCaptureFixture,
) -> None:
    feed = StatisticsFeed()
    feed.receive(CAPTURED)
    metrics = RebalanceMetrics("g")
    feed.attach(metrics)
    assert metrics.snapshot().rdkafka_rebalance_cnt == json.loads(CAPTURED)["cgrp"]["rebalance_cnt"]
    with caplog.at_level(logging.DEBUG, logger="kafka_sticky_plugin.confluent"):
        feed.receive("{not json")
        feed.receive(None)
    assert len(caplog.records) == 2  # one DEBUG line per skipped emission
    assert all(r.levelno == logging.DEBUG for r in caplog.records)
    assert metrics.snapshot().rdkafka_state == "up"  # the good values are kept


def test_the_users_stats_cb_is_called_and_its_errors_are_theirs() -> None:
    feed = StatisticsFeed()
    seen: list[str] = []

    def user_cb(text: str) -> None:
        seen.append(text)
        raise RuntimeError("the user's own bug")

    chained = chain_stats_cb(feed, user_cb)
    with pytest.raises(RuntimeError, match="the user's own bug"):
        chained("{broken")
    assert seen == ["{broken"]
    assert chain_stats_cb(feed, None)(CAPTURED) is None


@pytest.mark.parametrize(
    ("value", "enabled"), [(None, False), (0, False), ("1000", True), (500, True), ("x", False)]
)
def test_statistics_enabled(value: object, enabled: bool) -> None:
    config = {} if value is None else {"statistics.interval.ms": value}
    assert statistics_enabled(config) is enabled


def test_create_consumer_chains_only_when_statistics_are_on() -> None:
    """No broker is contacted: librdkafka connects on subscribe/poll, closed right away."""
    base = {"bootstrap.servers": "127.0.0.1:9", "group.id": "g", "log_level": 0}
    plain = create_consumer(base)
    with_stats = create_consumer({**base, "statistics.interval.ms": 1000, "stats_cb": print})
    try:
        assert plain.statistics is None
        assert isinstance(with_stats.statistics, StatisticsFeed)
    finally:
        plain.close()
        with_stats.close()
