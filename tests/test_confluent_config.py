"""The confluent-kafka configuration check: refusals that explain, and agreement with librdkafka."""

from __future__ import annotations

from typing import Any

import confluent_kafka
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_sticky_plugin.confluent import RebalanceProtocol, check_config
from kafka_sticky_plugin.errors import ConfigurationError

# No bootstrap.servers: a real librdkafka consumer is built without any network activity.
BASE: dict[str, Any] = {"group.id": "g", "log_level": 0}


def librdkafka_accepts(config: dict[str, Any]) -> bool:
    """Whether librdkafka itself builds a consumer from ``config`` (it validates on creation)."""
    try:
        consumer = confluent_kafka.Consumer(dict(config))
    except (confluent_kafka.KafkaException, ValueError):
        return False
    consumer.close()
    return True


@pytest.mark.parametrize(
    ("strategies", "protocol"),
    [
        (None, RebalanceProtocol.EAGER),
        ("range", RebalanceProtocol.EAGER),
        ("roundrobin,range", RebalanceProtocol.EAGER),
        (" range, roundrobin", RebalanceProtocol.EAGER),
        ("cooperative-sticky", RebalanceProtocol.COOPERATIVE),
    ],
)
def test_accepted_strategy_lists_give_their_protocol(
    strategies: str | None, protocol: RebalanceProtocol
) -> None:
    """An accepted list yields EAGER for range/roundrobin (and the default), else COOPERATIVE."""
    config = dict(BASE)
    if strategies is not None:
        config["partition.assignment.strategy"] = strategies
    assert check_config(config) is protocol
    assert librdkafka_accepts(config)


def test_mixed_list_is_refused_with_the_migration_path() -> None:
    """range + cooperative-sticky is refused, naming the offline switch and the offset copy."""
    config = {**BASE, "partition.assignment.strategy": "range,cooperative-sticky"}
    with pytest.raises(ConfigurationError) as caught:
        check_config(config)
    message = str(caught.value)
    assert "mixes eager (range) and cooperative (cooperative-sticky)" in message
    assert "stop every member" in message
    assert "copy_committed_offsets" in message
    assert not librdkafka_accepts(config)


@pytest.mark.parametrize(
    ("name", "advice"),
    [
        ("sticky", "no eager 'sticky'"),
        ("org.apache.kafka.clients.consumer.StickyAssignor", "no eager 'sticky'"),
        ("CooperativeStickyAssignor", "spells it 'cooperative-sticky'"),
        ("RangeAssignor", "spells it 'range'"),
        ("Range", "not a librdkafka strategy"),
        ("my.python.Assignor", "cannot run a Python assignor"),
    ],
)
def test_foreign_strategy_names_are_refused_with_advice(name: str, advice: str) -> None:
    """Java class names, kafka-python names and customs get a specific explanation."""
    config = {**BASE, "partition.assignment.strategy": name}
    with pytest.raises(ConfigurationError, match=advice):
        check_config(config)
    assert not librdkafka_accepts(config)


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        ({"group.id": ""}, "group.id is missing"),
        ({"partition.assignment.strategy": ""}, "empty entry"),
        ({"partition.assignment.strategy": "range,,roundrobin"}, "empty entry"),
        ({"partition.assignment.strategy": "range,range"}, "more than once"),
        ({"partition.assignment.strategy": "range ,roundrobin"}, "whitespace"),
        ({"partition.assignment.strategy": "range,\troundrobin"}, "whitespace"),
        ({"partition.assignment.strategy": ["range"]}, "comma-separated string"),
        ({"session.timeout.ms": 6000, "heartbeat.interval.ms": 6000}, "not shorter"),
        ({"session.timeout.ms": 6000, "max.poll.interval.ms": 5000}, "max.poll.interval.ms"),
        ({"session.timeout.ms": "six"}, "integer number of milliseconds"),
        ({"session.timeout.ms": True}, "integer number of milliseconds"),
        ({"group.protocol": "bogus"}, "not a librdkafka group protocol"),
        (
            {"group.protocol": "consumer", "partition.assignment.strategy": "range"},
            "group.remote.assignor",
        ),
    ],
)
def test_unworkable_configurations_are_refused(extra: dict[str, Any], words: str) -> None:
    """Each refusal names the property at fault."""
    with pytest.raises(ConfigurationError, match=words):
        check_config({**BASE, **extra})


def test_missing_group_id_is_refused() -> None:
    """A subscribing consumer without group.id is refused (librdkafka refuses it too)."""
    with pytest.raises(ConfigurationError, match=r"group\.id"):
        check_config({"log_level": 0})
    assert not librdkafka_accepts({"log_level": 0})


def test_kip848_consumer_protocol_is_cooperative() -> None:
    """group.protocol=consumer hands partitions over incrementally."""
    config = {**BASE, "group.protocol": "consumer"}
    assert check_config(config) is RebalanceProtocol.COOPERATIVE
    assert librdkafka_accepts(config)


@pytest.mark.parametrize("name", ["session.timeout.ms", "heartbeat.interval.ms"])
def test_kip848_consumer_protocol_refuses_the_classic_session_settings(name: str) -> None:
    """The broker sets the session under group.protocol=consumer: librdkafka refuses both."""
    config = {**BASE, "group.protocol": "consumer", name: 3000}
    with pytest.raises(ConfigurationError, match=f"{name} is not used with"):
        check_config(config)
    assert not librdkafka_accepts(config)


def test_kip848_consumer_protocol_takes_a_short_max_poll_interval() -> None:
    """max.poll.interval.ms is not bound to a session timeout the consumer does not set."""
    config = {**BASE, "group.protocol": "consumer", "max.poll.interval.ms": 10000}
    assert check_config(config) is RebalanceProtocol.COOPERATIVE
    assert librdkafka_accepts(config)


def test_string_timeouts_are_read_as_numbers() -> None:
    """librdkafka takes "6000" for 6000; so does the check."""
    config = {**BASE, "session.timeout.ms": "6000", "heartbeat.interval.ms": "1000"}
    assert check_config(config) is RebalanceProtocol.EAGER


NAMES = st.sampled_from(
    [
        "range",
        "roundrobin",
        "cooperative-sticky",
        " cooperative-sticky",
        "roundrobin ",
        "sticky",
        "Range",
        "cooperative_sticky",
    ]
)


@given(st.lists(NAMES, min_size=1, max_size=4))
def test_check_is_never_more_permissive_than_librdkafka(names: list[str]) -> None:
    """Every strategy list the check accepts, librdkafka accepts; librdkafka's refusals are ours.

    The check is stricter only where librdkafka accepts a list that cannot be meant (a name
    listed twice), which the second assertion allows for explicitly.
    """
    config = {**BASE, "partition.assignment.strategy": ",".join(names)}
    try:
        check_config(config)
        ours = True
    except ConfigurationError:
        ours = False
    theirs = librdkafka_accepts(config)
    if ours:
        assert theirs, f"check accepted {names} but librdkafka refused it"
    else:
        distinct = {name.lstrip(" ") for name in names}
        assert not theirs or len(distinct) < len(names), f"check refused valid {names}"
