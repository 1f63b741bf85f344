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


def test_eager_selection_tells_cooperative_assignor_to_claim_nothing(consumers: Any) -> None:
    """Under EAGER the cooperative assignor is switched to EAGER (first upgrade bounce)."""
    handle = install_hooks(consumers([StickyAssignor, CooperativeStickyAssignor]))
    cooperative = [a for a in handle.assignors if isinstance(a, CooperativeStickyAssignor)]
    assert [int(a.rebalance_protocol) for a in cooperative] == [int(RebalanceProtocol.EAGER)]


def test_two_consumers_do_not_share_state_or_patches(consumers: Any) -> None:
    """Hooks live on each coordinator instance; assignor instances are per consumer."""
    first = consumers([CooperativeStickyAssignor])
    second = consumers([CooperativeStickyAssignor])
    plain = consumers([CooperativeStickyAssignor])
    handle_1 = install_hooks(first)
    handle_2 = install_hooks(second)
    assert handle_1.assignors[0] is not handle_2.assignors[0]
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
    from hooks_support import IS_V3, make_consumer

    from kafka_sticky_plugin import StickyAssignor
    from kafka_sticky_plugin.codec import decode_subscription
    from kafka_sticky_plugin.hooks import install_hooks

    if not IS_V3:
        pytest.skip("kafka-python 2.x has no client_rack setting")
    consumer = make_consumer([StickyAssignor], client_rack="eu-1a")
    handle = install_hooks(consumer)
    (ours,) = [a for a in handle.assignors if isinstance(a, StickyAssignor)]
    assert decode_subscription(ours.metadata(["t"])).rack_id == "eu-1a"
    consumer.close()
    explicit = make_consumer([StickyAssignor(rack_id="eu-1b")], client_rack="eu-1a")
    handle = install_hooks(explicit)
    (ours,) = [a for a in handle.assignors if isinstance(a, StickyAssignor)]
    assert decode_subscription(ours.metadata(["t"])).rack_id == "eu-1b"
    explicit.close()


def test_an_instance_shared_by_two_consumers_becomes_one_copy_each(consumers: Any) -> None:
    """One configured instance passed to two consumers: each consumer gets its own copy with
    the instance's configuration, so each claims only what it was given (the instance itself
    is a template and is never driven)."""
    from hooks_support import join_complete

    from kafka_sticky_plugin.codec import decode_subscription

    shared = CooperativeStickyAssignor(rack_id="eu-1a")
    first = consumers([shared])
    second = consumers([shared])
    (ours_1,) = install_hooks(first).assignors
    (ours_2,) = install_hooks(second).assignors
    assert ours_1 is not shared and ours_2 is not shared and ours_1 is not ours_2
    assert ours_1.rack_id == ours_2.rack_id == "eu-1a"
    for consumer in (first, second):
        consumer.subscribe(["t"])
    join_complete(first, 1, "cooperative-sticky", [("t", 0), ("t", 1)])
    join_complete(second, 1, "cooperative-sticky", [("t", 2), ("t", 3)])
    claims_1 = decode_subscription(ours_1.metadata(["t"])).owned_partitions
    claims_2 = decode_subscription(ours_2.metadata(["t"])).owned_partitions
    assert list(claims_1) == [("t", 0), ("t", 1)]
    assert list(claims_2) == [("t", 2), ("t", 3)]
    assert shared.previous_assignment == () and shared.generation is None


def test_a_copy_starts_without_the_state_of_the_instance_it_was_made_from(
    consumers: Any,
) -> None:
    """An instance that already holds an assignment (used before) is copied without it: a new
    consumer must not claim another member's partitions."""
    from kafka_sticky_plugin.codec import Assignment

    used = StickyAssignor()
    used.on_assignment(Assignment(version=3, partitions=(("t", 0),)), 4)
    (ours,) = install_hooks(consumers([used])).assignors
    assert ours.previous_assignment == () and ours.generation is None
    assert used.previous_assignment == (("t", 0),) and used.generation == 4


def test_errors_name_the_public_classes() -> None:
    """A wrong argument names StickyAssignor / CooperativeStickyAssignor, never the base."""
    with pytest.raises(TypeError, match=r"^StickyAssignor\.__init__\(\) got an unexpected"):
        StickyAssignor(rack="eu-1a")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"^CooperativeStickyAssignor\.__init__\(\) takes 1"):
        CooperativeStickyAssignor("eu-1a")  # type: ignore[misc]
