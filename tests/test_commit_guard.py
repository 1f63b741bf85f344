"""The commit guard's client-free rule (:mod:`kafka_sticky_plugin.assignor.commit_guard`) and
its wiring on unconnected clients: which partitions pass, what ``refuse`` raises, what
``drop`` logs, and the install errors. The broker-side behaviour is in
``integration_tests/processing/test_guard_*.py`` and ``integration_tests/aiokafka``."""

from __future__ import annotations

import logging
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_sticky_plugin.assignor.commit_guard import (
    CommitGuard,
    check_mode,
    split_commit,
    topic_partition_pairs,
)
from kafka_sticky_plugin.errors import CommitRefusedError, ConfigurationError

Pair = tuple[str, int]


def _guard(mode: str, owned: set[Pair], in_generation: bool = True) -> CommitGuard:
    return CommitGuard("g1", check_mode(mode), lambda: owned, lambda: in_generation)


def test_owned_partitions_pass_and_the_rest_are_refused_in_call_order() -> None:
    offsets = {("t", 2): 20, ("t", 0): 10, ("u", 1): 5}
    verdict = split_commit(offsets, {("t", 0), ("u", 1)})
    assert verdict.allowed == {("t", 0): 10, ("u", 1): 5}
    assert verdict.refused == [("t", 2)]
    assert "revoked, lost or never assigned" in verdict.why


def test_without_a_generation_nothing_is_owned() -> None:
    verdict = split_commit({("t", 0): 1}, {("t", 0)}, in_generation=False)
    assert verdict.allowed == {}
    assert verdict.refused == [("t", 0)]
    assert "membership" in verdict.why


def test_an_empty_or_fully_owned_commit_has_no_reason() -> None:
    assert split_commit({}, set()).why == ""
    assert split_commit({("t", 0): 1}, {("t", 0)}).why == ""


@given(
    st.dictionaries(
        st.tuples(st.sampled_from("abc"), st.integers(0, 5)), st.integers(0, 100), max_size=12
    ),
    st.sets(st.tuples(st.sampled_from("abc"), st.integers(0, 5))),
    st.booleans(),
)
def test_the_split_is_a_partition_of_the_commit(
    offsets: dict[Pair, int], owned: set[Pair], in_generation: bool
) -> None:
    verdict = split_commit(offsets, owned, in_generation)
    assert set(verdict.allowed) | set(verdict.refused) == set(offsets)
    assert not set(verdict.allowed) & set(verdict.refused)
    assert all(verdict.allowed[tp] == offsets[tp] for tp in verdict.allowed)
    assert set(verdict.allowed) <= (owned if in_generation else set())


def test_refuse_names_every_refused_partition_sorted() -> None:
    guard = _guard("refuse", {("t", 1)})
    verdict = guard.split({("t", 3): 1, ("t", 1): 1, ("s", 0): 1})
    with pytest.raises(CommitRefusedError) as refused:
        guard.settle(verdict)
    assert refused.value.refused == [("s", 0), ("t", 3)]
    assert refused.value.group_id == "g1"
    assert "s-0, t-3" in str(refused.value) and "g1" in str(refused.value)
    assert guard.refused_total == 2
    assert CommitRefusedError.retriable is False


def test_drop_logs_one_warning_line_naming_them(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="kafka_sticky_plugin.commit_guard")
    guard = _guard("drop", {("t", 1)})
    guard.settle(guard.split({("t", 3): 1, ("t", 1): 1, ("t", 4): 1}))
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1 and "t-3, t-4" in lines[0] and "g1" in lines[0], lines


def test_nothing_refused_settles_silently(caplog: pytest.LogCaptureFixture) -> None:
    guard = _guard("refuse", {("t", 1)})
    guard.settle(guard.split({("t", 1): 1}))
    assert not caplog.records


def test_ownership_is_read_at_every_check() -> None:
    owned: set[Pair] = {("t", 0)}
    guard = CommitGuard("g1", "refuse", lambda: owned, lambda: True)
    assert guard.split({("t", 0): 1}).refused == []
    owned.clear()  # the revocation returned
    assert guard.split({("t", 0): 1}).refused == [("t", 0)]


@pytest.mark.parametrize("mode", ["", "REFUSE", "warn", None, 1])
def test_a_bad_mode_is_one_clear_error(mode: object) -> None:
    with pytest.raises(ConfigurationError, match="'refuse', 'drop'"):
        check_mode(mode)


def test_pairs_from_client_objects_and_tuples() -> None:
    from kafka import TopicPartition

    seed = random.randrange(2**32)
    print(f"seed={seed}")
    rng = random.Random(seed)
    numbers = rng.sample(range(50), 5)
    objects = [TopicPartition("t", n) for n in numbers] + [("s", 1)]
    assert topic_partition_pairs(objects) == [("s", 1)] + [("t", n) for n in sorted(numbers)]


def test_kafka_python_guard_needs_the_hooks() -> None:
    from kafka import KafkaConsumer

    from kafka_sticky_plugin.kafka_python import guard_commits

    consumer = KafkaConsumer(group_id="g", bootstrap_servers="127.0.0.1:1", api_version=(2, 5, 0))
    try:
        with pytest.raises(ConfigurationError, match="install_hooks"):
            guard_commits(consumer)
    finally:
        consumer.close(autocommit=False)


def test_kafka_python_guard_is_idempotent_and_uninstalled_with_the_hooks() -> None:
    from kafka import KafkaConsumer, TopicPartition

    from kafka_sticky_plugin.kafka_python import (
        CooperativeStickyAssignor,
        guard_commits,
        install_hooks,
    )

    consumer = KafkaConsumer(
        group_id="g",
        bootstrap_servers="127.0.0.1:1",
        api_version=(2, 5, 0),
        partition_assignment_strategy=[CooperativeStickyAssignor],
    )
    try:
        handle = install_hooks(consumer)
        first = guard_commits(consumer)
        assert guard_commits(consumer, "drop") is first and first.mode == "drop"
        assert "_send_offset_commit_request" in vars(consumer._coordinator)
        consumer.assign([TopicPartition("t", 0)])  # manual assignment: no generation needed
        assert first.split({TopicPartition("t", 0): 1, TopicPartition("t", 1): 1}).refused == [
            TopicPartition("t", 1)
        ]
        handle.uninstall()
        assert "_send_offset_commit_request" not in vars(consumer._coordinator)
    finally:
        consumer.close(autocommit=False)


def test_confluent_guard_refuses_a_plain_consumer_and_checks_commits() -> None:
    import confluent_kafka

    from kafka_sticky_plugin.confluent import create_consumer, guard_commits

    plain = confluent_kafka.Consumer({"group.id": "g", "bootstrap.servers": "127.0.0.1:1"})
    try:
        with pytest.raises(ConfigurationError, match="create_consumer"):
            guard_commits(plain)  # type: ignore[arg-type]
    finally:
        plain.close()
    consumer = create_consumer(
        {
            "group.id": "g",
            "bootstrap.servers": "127.0.0.1:1",
            "partition.assignment.strategy": "cooperative-sticky",
        }
    )
    try:
        guard_commits(consumer)
        consumer.incremental_assign([confluent_kafka.TopicPartition("t", 0)])
        with pytest.raises(CommitRefusedError, match="t-1"):  # t-1 never assigned; t-0 passes
            consumer.commit(offsets=[confluent_kafka.TopicPartition("t", 1, 5)], asynchronous=True)
        with pytest.raises(CommitRefusedError, match="t-2"):  # positional arguments too
            consumer.commit(None, [confluent_kafka.TopicPartition("t", 2, 5)], True)  # type: ignore[call-overload]  # the stubs know keywords only; the C API takes positions
    finally:
        consumer.close()
