"""The hooks' line for subscribed topics the cluster lacks: once per change, not per refresh."""

from __future__ import annotations

import logging

from kafka_sticky_plugin.assignor.missing_topics import MissingTopics


def test_a_missing_topic_is_said_once_after_two_responses_then_its_arrival_once() -> None:
    seen = MissingTopics("g")
    asked = ["orders", "typo"]
    assert seen.observe(asked, ["orders"]) == []  # one response: maybe being auto-created
    ((level, line),) = seen.observe(asked, ["orders"])
    assert level == logging.WARNING
    assert line.startswith("group g: subscribed topic(s) 'typo' do not exist on the cluster")
    for _ in range(5):  # every further refresh: nothing more
        assert seen.observe(asked, ["orders"]) == []
    assert seen.observe(asked, ["orders", "typo"]) == [
        (logging.INFO, "group g: topic(s) 'typo' exist now")
    ]
    assert seen.missing == frozenset()


def test_a_topic_absent_from_one_response_only_is_never_said() -> None:
    seen = MissingTopics("g")
    assert seen.observe(["new"], []) == []
    assert seen.observe(["new"], ["new"]) == []


def test_a_refused_topic_is_not_called_missing_and_confirmed_says_it_at_once() -> None:
    seen = MissingTopics("g")
    assert seen.observe(["secret"], [], refused=["secret"], confirmed=True) == []
    ((level, line),) = seen.observe(["a", "b"], [], confirmed=True)
    assert level == logging.WARNING and "'a', 'b' do not exist" in line
