"""The one-line advice a refused consumer logs (:mod:`kafka_sticky_plugin.authorization_advice`):
it names what is refused, the grant that ends it and the principal, and never a password."""

from __future__ import annotations

import pytest

from kafka_sticky_plugin.authorization_advice import (
    group_refused_line,
    leader_topics_refused_line,
    member_topics_refused_line,
    principal_text,
)


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        (
            {
                "security_protocol": "SASL_SSL",
                "sasl_mechanism": "SCRAM-SHA-512",
                "sasl_plain_username": "alice",
                "sasl_plain_password": "s3cret",
            },
            "User:alice",
        ),
        (
            {
                "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanisms": "PLAIN",
                "sasl.username": "bob",
                "sasl.password": "s3cret",
            },
            "User:bob",
        ),
        ({"security_protocol": "PLAINTEXT"}, "User:ANONYMOUS"),
        (None, "User:ANONYMOUS"),
        (
            {
                "security_protocol": "SASL_SSL",
                "sasl_mechanism": "OAUTHBEARER",
                "sasl_plain_username": "x",
            },
            "this consumer's principal",
        ),
    ],
)
def test_principal_from_each_clients_settings(config: dict[str, str] | None, expected: str) -> None:
    assert principal_text(config) == expected


def test_tls_principal_is_described_not_guessed() -> None:
    assert "distinguished name" in principal_text({"security_protocol": "SSL"})


def test_lines_name_the_refusal_the_grant_and_the_principal() -> None:
    group = group_refused_line("orders", "User:alice", "JoinGroup", 2.0)
    assert "grant Read on Group 'orders' to User:alice" in group
    assert "JoinGroup answered GROUP_AUTHORIZATION_FAILED" in group and "2 s" in group
    member = member_topics_refused_line("orders", ["b", "a"], "User:bob")
    assert "'a', 'b'" in member and "grant Read on each Topic to User:bob" in member
    leader = leader_topics_refused_line("orders", {"t"}, "User:carol", ["m-2", "m-1"])
    assert "'t' subscribed by member(s) m-1, m-2" in leader
    assert "stay unassigned" in leader and "Describe" in leader
    for line in (group, member, leader):
        assert "\n" not in line and "s3cret" not in line


def test_client_retry_wording_for_librdkafka() -> None:
    from kafka_sticky_plugin.authorization_advice import (
        group_refused_line,
        member_topics_refused_line,
    )

    assert group_refused_line("g", "User:a", "FindCoordinator", None).endswith(
        "holds no partitions until then and its client keeps asking"
    )
    line = member_topics_refused_line("g", ["t"], "User:a", client_rejoins=True)
    assert "'t'" in line and line.endswith("its client adds them once they are granted")


def test_librdkafka_topic_refusal_text_gives_the_topic() -> None:
    from kafka_sticky_plugin.adapters.confluent_kafka.consumer import _refused_topic

    text = "Subscribed topic not available: payments: Broker: Topic authorization failed"
    assert _refused_topic(text) == "payments"
    assert _refused_topic("something else") == "something else"


def test_a_change_of_refused_own_topics_is_said_by_level() -> None:
    import logging

    from kafka_sticky_plugin.authorization_advice import own_topics_change_lines

    refused = own_topics_change_lines("g", [], ["b", "a"], "User:bob")
    assert [level for level, _ in refused] == [logging.WARNING]
    assert "'a', 'b'" in refused[0][1] and "User:bob" in refused[0][1]
    granted = own_topics_change_lines("g", ["a", "b"], ["b"], "User:bob")
    assert [level for level, _ in granted] == [logging.WARNING, logging.INFO]
    assert "topic(s) 'a' are authorized again" in granted[1][1]
    assert own_topics_change_lines("g", ["a"], [], "User:bob") == [
        (logging.INFO, "group g: topic(s) 'a' are authorized again; rejoining with them")
    ]
