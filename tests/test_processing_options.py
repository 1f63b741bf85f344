"""The ``Processor`` faces forward their keywords to one checked options record.

``processing.threaded.processing_options`` is the one place that knows the keywords every
thread-pool ``Processor`` takes: an unknown one is a ``TypeError`` naming the user's class
and the keywords it does take; known ones arrive unchanged and are checked there."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import confluent_kafka
import pytest
import test_confluent_listener

from kafka_sticky_plugin.confluent import Processor
from kafka_sticky_plugin.processing.threaded import (
    ProcessingKeywords,
    ProcessingOptions,
    processing_options,
)

#: test_confluent_listener's real librdkafka consumer with no broker configured
consumer = test_confluent_listener.consumer


def test_every_keyword_arrives_unchanged() -> None:
    def on_error(record: Any, exc: BaseException) -> None:
        return None

    def on_commit(offsets: dict[Any, int]) -> None:
        return None

    with ThreadPoolExecutor(1) as pool:
        given: ProcessingKeywords = {
            "max_in_flight": 7,
            "workers": 3,
            "executor": pool,
            "revoke_wait_s": 2.5,
            "commit_interval_s": 0.25,
            "on_error": on_error,
            "on_commit": on_commit,
        }
        options = processing_options("x.Processor", given)
    assert set(given) == set(ProcessingKeywords.__annotations__)
    for name, value in given.items():
        assert getattr(options, name) is value, name


def test_no_keyword_gives_the_documented_defaults() -> None:
    assert processing_options("x.Processor", {}) == ProcessingOptions()
    assert ProcessingOptions().max_in_flight == 100 and ProcessingOptions().workers == 4


def test_an_unknown_keyword_names_the_users_class_and_what_it_takes(
    consumer: confluent_kafka.Consumer,
) -> None:
    with pytest.raises(TypeError) as raised:
        Processor(consumer, lambda message: None, max_inflight=5)  # type: ignore[call-arg]
    text = str(raised.value)
    assert text.startswith("confluent.Processor() got unexpected keyword(s) max_inflight;")
    assert "max_in_flight" in text and "on_commit" in text


def test_a_bad_value_is_refused_through_the_face(consumer: confluent_kafka.Consumer) -> None:
    with pytest.raises(ValueError, match="max_in_flight must be > 0, got 0"):
        Processor(consumer, lambda message: None, max_in_flight=0)


def test_the_confluent_face_keeps_its_own_batch_keyword(consumer: confluent_kafka.Consumer) -> None:
    processor = Processor(consumer, lambda message: None, batch=5, workers=2)
    try:
        assert processor._port._batch == 5
    finally:
        processor.close()
