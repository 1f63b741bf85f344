"""The pure decisions behind a classic leader refused another member's topic
(:mod:`kafka_sticky_plugin.assignor.leader_refusal`): when the leader steps aside (bounded,
once per refused set), and which subscribed topics no member holds."""

from __future__ import annotations

import random

from kafka_sticky_plugin.assignor.leader_refusal import (
    DescribedMember,
    LeaderAction,
    StepAside,
    ToldTopics,
    leader_of,
    topics_to_check,
    unheld_topics,
)
from kafka_sticky_plugin.authorization_advice import (
    leader_step_aside_line,
    leader_topics_refused_line,
    unassigned_topics_line,
)
from kafka_sticky_plugin.codec.consumer_protocol import Assignment, encode_assignment

STEP, STAY, NONE = LeaderAction.STEP_ASIDE, LeaderAction.STAY, LeaderAction.NONE


def test_steps_aside_once_per_refused_set_then_stays_and_reports_once() -> None:
    memory = StepAside()
    assert memory.decide(set(), static=False) == (NONE, False)
    assert memory.decide({"t2"}, static=False) == (STEP, True)
    # elected again with the same refusal: stays, said once
    assert memory.decide({"t2"}, static=False) == (STAY, True)
    assert memory.decide({"t2"}, static=False) == (STAY, False)
    # a metadata response without the topic (not requested yet) is no grant
    assert memory.decide(set(), static=False) == (NONE, False)
    assert memory.decide({"t2"}, static=False) == (STAY, False)
    # another set: steps aside for it once too
    assert memory.decide({"t2", "t3"}, static=False) == (STEP, True)
    assert memory.decide({"t2"}, static=False) == (STAY, True)
    assert memory.decide({"t2", "t3"}, static=False) == (STAY, True)


def test_a_grant_starts_over() -> None:
    memory = StepAside()
    assert memory.decide({"t2"}, static=False)[0] is STEP
    assert memory.decide(set(), static=False, granted={"t1", "t2"}) == (NONE, False)
    assert memory.decide({"t2"}, static=False) == (STEP, True)  # revoked again


def test_a_static_member_never_steps_aside() -> None:
    memory = StepAside()
    assert memory.decide({"t2"}, static=True) == (STAY, True)
    assert memory.decide({"t2"}, static=True) == (STAY, False)
    assert not memory.stepped_for


def test_step_asides_are_bounded_by_distinct_sets() -> None:
    """Any sequence of refusals: STEP_ASIDE at most once per distinct set (no grant)."""
    seed = random.randrange(2**32)
    print(f"seed {seed}")
    rng = random.Random(seed)
    topics = ["a", "b", "c"]
    memory = StepAside()
    steps: list[frozenset[str]] = []
    for _ in range(500):
        refused = frozenset(t for t in topics if rng.random() < 0.5)
        action, _ = memory.decide(refused, static=False)
        if action is STEP:
            steps.append(refused)
    assert len(steps) == len(set(steps)) <= 2 ** len(topics) - 1


def test_topics_to_check_are_describable_subscribed_and_unheld() -> None:
    assert topics_to_check({"t1", "t2", "t3"}, {"t1", "t2"}, {"t1"}) == {"t2"}
    assert topics_to_check({"t1"}, {"t1"}, {"t1"}) == frozenset()
    assert topics_to_check({"hidden"}, set(), set()) == frozenset()  # cannot describe it


def _assignment(*pairs: tuple[str, int]) -> bytes:
    return encode_assignment(Assignment(version=1, partitions=tuple(pairs)))


def test_unheld_topics_from_every_members_assignment_bytes() -> None:
    alice = _assignment(("t1", 0), ("t1", 1))
    bob = _assignment(("t3", 0))
    assert unheld_topics({"t1", "t2", "t3"}, [alice, bob, b"", None]) == {"t2"}
    assert unheld_topics({"t1"}, [alice]) == frozenset()
    assert unheld_topics({"t2"}, []) == {"t2"}
    # an assignment that cannot be read: nothing can be said
    assert unheld_topics({"t2"}, [alice, b"\x00\x01\xff"]) == frozenset()


def test_told_once_per_change_of_the_unheld_set() -> None:
    told = ToldTopics()
    assert told.update({"t2"})
    assert not told.update({"t2"})
    assert told.update({"t2", "t3"})
    assert not told.update(set())  # assigned again: silent, remembered
    assert told.update({"t2"})


def test_the_lines_name_topic_grant_and_leader() -> None:
    aside = leader_step_aside_line("orders", {"t2"}, "User:alice")
    assert "'t2'" in aside and "leaves the group once" in aside
    assert "grant Describe on each Topic to User:alice" in aside
    stays = leader_topics_refused_line("orders", {"t2"}, "User:alice", why_stays="because")
    assert "stay unassigned while it leads (because)" in stays
    told = unassigned_topics_line("orders", {"t2"}, "client id 'c-a' on host /127.0.0.1")
    assert "'t2' are assigned to no member" in told and "client id 'c-a'" in told
    assert "grant Describe on each Topic" in told
    for line in (aside, stays, told):
        assert "\n" not in line


def test_leader_is_named_by_client_id_and_host() -> None:
    members = [
        DescribedMember("m-1", "orders-a", "/10.0.0.1", None),
        DescribedMember("m-2", "orders-b", "/10.0.0.2", b""),
    ]
    assert leader_of(members, "m-2") == "client id 'orders-b' on host /10.0.0.2"
    assert leader_of(members, "m-9") == "member 'm-9'"
    assert leader_of(members, None) == "unknown"
