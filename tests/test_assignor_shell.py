"""The assignor shell every adapter's assignor subclasses: one instance is one member's memory.

Issue 24: two consumers given one assignor instance without ``install_hooks`` both drive it
(``metadata`` at each join, ``on_assignment`` after each sync), so each one's next claim is
the other's partitions: a partition owned by two members for seconds. The shell refuses the
second assignment of a join with one clear line, for every adapter's classes; a single member
(join retries included) and the hooks path (no ``metadata`` calls) are never refused.
"""

from __future__ import annotations

from typing import Any

import pytest

from kafka_sticky_plugin.adapters.aiokafka import assignors as aio
from kafka_sticky_plugin.adapters.kafka_python import assignors as kp
from kafka_sticky_plugin.assignor.member import NO_JOIN, JoinState
from kafka_sticky_plugin.codec import Assignment, decode_subscription, encode_assignment
from kafka_sticky_plugin.errors import ConfigurationError

CLASSES = [
    kp.StickyAssignor,
    kp.CooperativeStickyAssignor,
    aio.StickyAssignor,
    aio.CooperativeStickyAssignor,
]


def _assignment(*partitions: int) -> bytes:
    return encode_assignment(Assignment(version=0, partitions=tuple(("t", p) for p in partitions)))


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: f"{c.__module__.split('.')[-2]}-{c.name}")
def test_two_consumers_driving_one_instance_are_refused(cls: Any) -> None:
    """The interleaving of two members of one group: both join, then both get assignments."""
    shared = cls()
    shared.metadata({"t"})  # member A joins
    shared.metadata({"t"})  # member B joins
    shared.on_assignment(_assignment(0, 1), 1)  # A's assignment
    with pytest.raises(ConfigurationError, match="used by two consumers without install_hooks"):
        shared.on_assignment(_assignment(2, 3), 1)  # B's: refused
    assert shared.previous_assignment == (("t", 0), ("t", 1)), "B's partitions were recorded"
    with pytest.raises(ConfigurationError, match=f"its own {cls.__name__}"):
        shared.metadata({"t"})  # and no later claim is sent from a memory two members wrote


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: f"{c.__module__.split('.')[-2]}-{c.name}")
def test_one_member_with_join_retries_is_never_refused(cls: Any) -> None:
    """KIP-394's second JoinGroup and a rebalance during sync send metadata again: fine."""
    mine = cls()
    for generation in range(1, 4):
        mine.metadata({"t"})
        mine.metadata({"t"})
        mine.on_assignment(_assignment(generation), generation)
    mine.on_partitions_lost()
    mine.metadata({"t"})
    mine.on_assignment(_assignment(0), 5)
    claim = decode_subscription(mine.metadata({"t"}))
    assert claim.generation_id == 5
    assert mine.previous_assignment == (("t", 0),)


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: f"{c.__module__.split('.')[-2]}-{c.name}")
def test_a_driver_without_metadata_calls_is_not_checked(cls: Any) -> None:
    """A driver of its own that sends ``subscription_bytes`` and records assignments (never
    ``metadata``) is not the plain path: no shared-instance check."""
    mine = cls()
    for generation in range(1, 4):
        mine.subscription_bytes({"t"})
        mine.on_assignment(_assignment(generation), generation)
        mine.on_assignment(_assignment(generation), generation)
    assert mine.generation == 3


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: f"{c.__module__.split('.')[-2]}-{c.name}")
def test_join_metadata_reads_only_what_it_is_given(cls: Any) -> None:
    """The hooks' call: an instance refused on the plain path (shared) and holding another
    member's state still writes any caller's join state, and is changed by none of it."""
    shared = cls(rack_id="r1")
    shared.metadata({"t"})
    shared.on_assignment(_assignment(0), 1)
    with pytest.raises(ConfigurationError):
        shared.on_assignment(_assignment(1), 1)
    for generation, partition in ((5, 2), (6, 3)):
        raw = shared.join_metadata(
            {"t"},
            JoinState.after([("t", partition)], generation),
            protocol=shared.rebalance_protocol,
        )
        sent = decode_subscription(raw)
        assert (sent.owned_partitions, sent.generation_id) == ((("t", partition),), generation)
        assert sent.rack_id == "r1"
    fresh = decode_subscription(shared.join_metadata({"t"}, NO_JOIN, protocol=0, default_rack="r2"))
    assert (fresh.owned_partitions, fresh.generation_id, fresh.rack_id) == ((), -1, "r1")
    assert shared.previous_assignment == (("t", 0),) and shared.generation == 1


@pytest.mark.parametrize("module", [kp, aio], ids=["kafka_python", "aiokafka"])
def test_every_registered_strategy_has_its_class_in_every_adapter(module: Any) -> None:
    """The registry names each strategy's class once; each adapter exports it under that
    name, and the class speaks that strategy (name, protocols, user data)."""
    from kafka_sticky_plugin.assignor.strategies import STRATEGIES

    for name, strategy in STRATEGIES.items():
        cls = getattr(module, strategy.class_name)
        assert cls.name == name
        member = cls()
        assert tuple(member.supported_protocols()) == strategy.protocols
        member.metadata({"t"})
        member.on_assignment(_assignment(0, 2), 7)
        sent = decode_subscription(member.metadata({"t"}))
        assert sent.user_data == strategy.write_user_data((("t", 0), ("t", 2)), 7)
        claimed, generation = strategy.read_claim(sent.user_data)
        assert generation == 7
        assert claimed in ((), (("t", 0), ("t", 2)))
