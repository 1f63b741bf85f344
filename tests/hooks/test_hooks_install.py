"""install_hooks: one line, per-consumer (never per-class), fails fast on bad configurations."""

from __future__ import annotations

from typing import Any

import pytest
from hooks_support import CLIENT, IS_V3, make_consumer

from kafka_sticky_plugin import CooperativeStickyAssignor, StickyAssignor
from kafka_sticky_plugin.errors import ConfigurationError
from kafka_sticky_plugin.hooks import RebalanceProtocol, install_hooks


def _range_assignor() -> Any:
    from kafka.coordinator.assignors.range import RangePartitionAssignor

    return RangePartitionAssignor


@pytest.fixture
def consumers() -> Any:
    made: list[Any] = []

    def make(strategy: list[Any], **overrides: Any) -> Any:
        consumer = make_consumer(strategy, **overrides)
        made.append(consumer)
        return consumer

    yield make
    for consumer in made:
        consumer.close()


def test_handle_reports_client_and_protocol(consumers: Any) -> None:
    """The handle names the detected client and the selected protocol."""
    handle = install_hooks(consumers([CooperativeStickyAssignor]))
    assert handle.client == CLIENT
    assert handle.protocol is RebalanceProtocol.COOPERATIVE
    assert [type(a) for a in handle.assignors] == [CooperativeStickyAssignor]


@pytest.mark.parametrize(
    ("strategy", "expected"),
    [
        ("sticky", RebalanceProtocol.EAGER),
        ("cooperative", RebalanceProtocol.COOPERATIVE),
        ("range+cooperative", RebalanceProtocol.EAGER),
        ("sticky+cooperative", RebalanceProtocol.EAGER),
    ],
)
def test_protocol_selection_on_a_real_consumer(
    consumers: Any, strategy: str, expected: RebalanceProtocol
) -> None:
    """KIP-429 selection over the consumer's configured assignors."""
    by_name = {
        "sticky": StickyAssignor,
        "cooperative": CooperativeStickyAssignor,
        "range": _range_assignor(),
    }
    handle = install_hooks(consumers([by_name[name] for name in strategy.split("+")]))
    assert handle.protocol is expected


def test_eager_selection_makes_cooperative_assignor_claim_nothing(consumers: Any) -> None:
    """Under EAGER (first upgrade bounce) the cooperative assignor's JoinGroup metadata claims
    nothing after a join, while the sticky one claims its previous assignment."""
    from hooks_support import join_complete, sent_subscription

    consumer = consumers([StickyAssignor, CooperativeStickyAssignor])
    handle = install_hooks(consumer)
    assert handle.protocol is RebalanceProtocol.EAGER
    consumer.subscribe(["t"])
    join_complete(consumer, 2, "sticky", [("t", 0)])
    assert sent_subscription(consumer, "cooperative-sticky").owned_partitions == ()
    assert sent_subscription(consumer, "sticky").owned_partitions == (("t", 0),)


def test_two_consumers_do_not_share_state_or_patches(consumers: Any) -> None:
    """Hooks live on each coordinator instance; assignor instances are per consumer."""
    first = consumers([CooperativeStickyAssignor])
    second = consumers([CooperativeStickyAssignor])
    plain = consumers([CooperativeStickyAssignor])
    handle_1 = install_hooks(first)
    handle_2 = install_hooks(second)
    assert handle_1.assignors[0] is not handle_2.assignors[0], "a class: one instance each"
    name = "_on_join_complete_async" if IS_V3 else "_on_join_complete"
    assert name in vars(first._coordinator)
    assert name in vars(second._coordinator)
    assert vars(first._coordinator)[name] != vars(second._coordinator)[name]
    assert name not in vars(plain._coordinator)
    class_method = getattr(type(plain._coordinator), name)
    assert getattr(plain._coordinator, name).__func__ is class_method


def test_install_is_idempotent_and_uninstall_restores(consumers: Any) -> None:
    """A second install returns the same handle; uninstall removes every instance patch."""
    consumer = consumers([CooperativeStickyAssignor])
    handle = install_hooks(consumer)
    assert install_hooks(consumer) is handle
    patched = {
        "group_protocols",
        "_perform_assignment",
        "_on_join_complete_async" if IS_V3 else "_on_join_complete",
    }
    assert patched <= set(vars(consumer._coordinator))
    handle.uninstall()
    assert not patched & set(vars(consumer._coordinator))
    assert install_hooks(consumer) is not handle


def test_no_group_id_is_a_configuration_error(consumers: Any) -> None:
    """Without a group there is nothing to hook."""
    with pytest.raises(ConfigurationError, match="group_id"):
        install_hooks(consumers([CooperativeStickyAssignor], group_id=None))


def test_without_plugin_assignor_is_a_configuration_error(consumers: Any) -> None:
    """Hooks need at least one of this package's assignors to drive."""
    with pytest.raises(ConfigurationError, match="StickyAssignor"):
        install_hooks(consumers([_range_assignor()]))


def test_not_a_consumer_is_a_configuration_error() -> None:
    """Anything but a KafkaConsumer is refused with a clear message."""
    with pytest.raises(ConfigurationError, match="KafkaConsumer"):
        install_hooks(object())


def test_client_rack_becomes_the_assignors_rack_unless_one_was_given() -> None:
    """KIP-881: with the hooks, our assignors report the consumer's client_rack (3.x has that
    setting) unless the application gave the assignor a rack; without it nothing changes."""
    import pytest
    from hooks_support import IS_V3, make_consumer, sent_subscription

    from kafka_sticky_plugin import StickyAssignor
    from kafka_sticky_plugin.hooks import install_hooks

    if not IS_V3:
        pytest.skip("kafka-python 2.x has no client_rack setting")
    shared = StickyAssignor()
    consumer = make_consumer([shared], client_rack="eu-1a")
    install_hooks(consumer)
    consumer.subscribe(["t"])
    assert sent_subscription(consumer, "sticky").rack_id == "eu-1a"
    assert shared.rack_id is None, "the consumer's rack is passed, never stored in the assignor"
    consumer.close()
    explicit = make_consumer([StickyAssignor(rack_id="eu-1b")], client_rack="eu-1a")
    install_hooks(explicit)
    explicit.subscribe(["t"])
    assert sent_subscription(explicit, "sticky").rack_id == "eu-1b"
    explicit.close()


def test_an_instance_shared_by_two_hooked_consumers_serves_both(consumers: Any) -> None:
    """One configured instance passed to two hooked consumers is used by both as it is: it
    holds no member state on the hooks path (each consumer's hooks own their join state and
    pass it), so each consumer claims only what it was given, in its own generation."""
    from hooks_support import join_complete, sent_subscription

    shared = CooperativeStickyAssignor(rack_id="eu-1a")
    first = consumers([shared])
    second = consumers([shared])
    handle_1 = install_hooks(first)
    handle_2 = install_hooks(second)
    assert handle_1.assignors == handle_2.assignors == (shared,)
    for consumer in (first, second):
        consumer.subscribe(["t"])
    join_complete(first, 1, "cooperative-sticky", [("t", 0), ("t", 1)])
    join_complete(second, 2, "cooperative-sticky", [("t", 2), ("t", 3)])
    sent_1 = sent_subscription(first, "cooperative-sticky")
    sent_2 = sent_subscription(second, "cooperative-sticky")
    assert (sent_1.owned_partitions, sent_1.generation_id) == ((("t", 0), ("t", 1)), 1)
    assert (sent_2.owned_partitions, sent_2.generation_id) == ((("t", 2), ("t", 3)), 2)
    assert sent_1.rack_id == sent_2.rack_id == "eu-1a"
    assert (handle_1.generation, handle_2.generation) == (1, 2)
    assert shared.previous_assignment == () and shared.generation is None


def test_a_used_instance_lends_no_state_to_a_hooked_consumer(consumers: Any) -> None:
    """An instance that already holds an assignment from the plain path (used before) gives
    none of it to a hooked consumer: its first JoinGroup claims nothing, generation -1."""
    from hooks_support import sent_subscription

    from kafka_sticky_plugin.codec import Assignment

    used = StickyAssignor()
    used.on_assignment(Assignment(version=3, partitions=(("t", 0),)), 4)
    consumer = consumers([used])
    handle = install_hooks(consumer)
    consumer.subscribe(["t"])
    sent = sent_subscription(consumer, "sticky")
    assert (sent.owned_partitions, sent.generation_id) == ((), -1)
    assert handle.generation is None and handle.joined.partitions == ()
    assert used.previous_assignment == (("t", 0),) and used.generation == 4


def test_errors_name_the_public_classes() -> None:
    """A wrong argument names StickyAssignor / CooperativeStickyAssignor, never the base."""
    with pytest.raises(TypeError, match=r"^StickyAssignor\.__init__\(\) got an unexpected"):
        StickyAssignor(rack="eu-1a")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"^CooperativeStickyAssignor\.__init__\(\) takes 1"):
        CooperativeStickyAssignor("eu-1a")  # type: ignore[misc]
