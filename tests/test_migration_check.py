"""``migration-check``: argument parsing for any address (nothing connected to) and the
advice rules of :mod:`kafka_sticky_plugin.migration_advice` on facts given by hand."""

from __future__ import annotations

import pytest

from kafka_sticky_plugin import __main__ as cli
from kafka_sticky_plugin.errors import ConfigurationError
from kafka_sticky_plugin.migration_advice import (
    ClusterFacts,
    GroupFacts,
    MemberFacts,
    advise,
    client_family,
    render,
)
from kafka_sticky_plugin.migration_check import main, parse_args

KIP848 = ClusterFacts(1, ("classic", "consumer"), "bidirectional", 100, ("uniform", "range"))


@pytest.mark.parametrize(
    ("bootstrap", "endpoints"),
    [
        ("kafka-1.prod:9093", [("kafka-1.prod", 9093)]),
        ("10.0.0.5:9092,10.0.0.6:9092", [("10.0.0.5", 9092), ("10.0.0.6", 9092)]),
        ("[2001:db8::1]:9092", [("2001:db8::1", 9092)]),
    ],
)
def test_any_address_is_parsed_without_connecting(
    bootstrap: str, endpoints: list[tuple[str, int]]
) -> None:
    args = parse_args(["--bootstrap", bootstrap, "--group", "orders"])
    assert args.endpoints == endpoints and args.group == "orders"


@pytest.mark.parametrize("bootstrap", ["kafka-1.prod", "host:99999", "::1:9092", ""])
def test_a_malformed_address_is_one_line_and_exit_2(
    bootstrap: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(ConfigurationError):
        parse_args(["--bootstrap", bootstrap, "--group", "g"])
    assert main(["--bootstrap", bootstrap, "--group", "g"]) == 2
    out = capsys.readouterr().out
    assert out.startswith("error: ") and out.count("\n") == 1


def test_the_command_is_listed() -> None:
    assert "migration-check" in cli.usage()


def _classic(*members: MemberFacts, protocol: str = "cooperative-sticky") -> GroupFacts:
    return GroupFacts("g", "classic", "Stable", "consumer", protocol, members)


def test_a_classic_group_of_our_members_can_move() -> None:
    group = _classic(
        MemberFacts("a", "kafka-python-3.0.12"), MemberFacts("b", "rdkafka", "/10.0.0.7")
    )
    advice = advise(KIP848, group)
    assert advice.possible and advice.exit_code == 0
    text = "\n".join(render(KIP848, group, advice))
    assert "online move classic -> consumer: possible" in text
    assert "group.protocol=consumer" in text and "stay classic" in text
    assert "KAFKA-16694" in text


@pytest.mark.parametrize(
    ("cluster", "group", "words"),
    [
        (
            ClusterFacts(1, ("classic", "consumer"), "disabled", 100, ("uniform",)),
            _classic(MemberFacts("a", "rdkafka")),
            "migration.policy is 'disabled'",
        ),
        (
            ClusterFacts(0, ("classic",), "bidirectional", 100, ("uniform",)),
            _classic(MemberFacts("a", "rdkafka")),
            "group.version=1",
        ),
        (
            KIP848,
            _classic(MemberFacts("a", "consumer-g-1", assignment_user_data=b"\x00\x01")),
            "has assignment user data",
        ),
        (
            ClusterFacts(1, ("classic", "consumer"), "bidirectional", 1, ("uniform",)),
            _classic(MemberFacts("a", "rdkafka"), MemberFacts("b", "rdkafka")),
            "group.consumer.max.size=1",
        ),
        (
            KIP848,
            GroupFacts("g", "classic", "Stable", "connect", "default", ()),
            "protocol type 'connect'",
        ),
        (
            ClusterFacts(1, ("classic", "consumer"), "upgrade", 100, ("uniform",)),
            GroupFacts("g", "consumer", "Stable", "consumer", "uniform", ()),
            "never converts back",
        ),
    ],
)
def test_each_blocker_says_what_to_change(
    cluster: ClusterFacts, group: GroupFacts, words: str
) -> None:
    advice = advise(cluster, group)
    assert not advice.possible and advice.exit_code == 1
    assert any(words in b for b in advice.blockers), advice.blockers


def test_empty_assignment_user_data_does_not_block() -> None:
    assert advise(KIP848, _classic(MemberFacts("a", "rdkafka", assignment_user_data=b""))).possible


def test_a_missing_group_has_nothing_to_migrate() -> None:
    advice = advise(KIP848, GroupFacts("g", None))
    assert advice.possible and "does not exist" in advice.notes[0]


@pytest.mark.parametrize(
    ("client_id", "family"),
    [
        ("kafka-python-3.0.12", "kafka-python"),
        ("aiokafka-0.14.0", "aiokafka"),
        ("rdkafka", "librdkafka"),
        ("consumer-orders-1", "java"),
        ("my-app", "unknown"),
    ],
)
def test_client_family_from_default_client_ids(client_id: str, family: str) -> None:
    assert client_family(client_id) == family


def test_refusal_lines_name_the_fix_and_stay_one_line() -> None:
    from kafka_sticky_plugin.migration_advice import refusal_line

    classic = refusal_line("g", "INCONSISTENT_GROUP_PROTOCOL", classic=True, offered=("sticky",))
    assert classic is not None and "this one offers sticky" in classic
    assert "'bidirectional' or 'downgrade'" in classic and "migration-check" in classic
    upgrade = refusal_line("g", "GROUP_ID_NOT_FOUND", classic=False, offered=())
    assert upgrade is not None and "user data" in upgrade and "'upgrade'" in upgrade
    assert "\n" not in classic + upgrade
    assert refusal_line("g", "GROUP_ID_NOT_FOUND", classic=True, offered=()) is None
    assert refusal_line("g", "REBALANCE_IN_PROGRESS", classic=True, offered=()) is None


def test_a_librdkafka_leaders_echoed_user_data_gets_one_blocker_naming_the_way_out() -> None:
    """librdkafka's leader copies each member's subscription user data into its assignment
    (rdkafka_cgrp.c reads it into rkgm_userdata, rdkafka_request.c writes it back in the
    SyncGroup MemberState): no assignor change helps, the advice says what does."""
    state = b"\x00\x00\x00\x01\x00\x01t\x00\x00\x00\x01\x00\x00\x00\x03\x00\x00\x00\x07"
    group = _classic(
        MemberFacts("a", "rdkafka", assignment_user_data=state, subscription_user_data=state),
        MemberFacts(
            "b", "rdkafka", assignment_user_data=state + b"x", subscription_user_data=state + b"x"
        ),
        MemberFacts("c", "kafka-python-3.0.12"),
    )
    advice = advise(KIP848, group)
    assert advice.exit_code == 1 and len(advice.blockers) == 1, advice.blockers
    assert "2 member(s)" in advice.blockers[0] and "librdkafka" in advice.blockers[0]
    assert "group.protocol=consumer" in advice.blockers[0]


def test_user_data_that_differs_from_the_subscription_is_a_custom_assignors() -> None:
    group = _classic(
        MemberFacts("a", "rdkafka", assignment_user_data=b"\x01", subscription_user_data=b"\x02")
    )
    (blocker,) = advise(KIP848, group).blockers
    assert "custom assignor" in blocker and "librdkafka" not in blocker
