"""Every name map (test harness, demo, simulator, benchmarks) carries every registered strategy
and spells kafka-python's own assignors one way, ``kafka-python-<kind>``."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_sticky_plugin.assignor.strategies import STRATEGIES
from kafka_sticky_plugin.demo.cli import _CHOICES
from kafka_sticky_plugin.demo.scenario import STRATEGIES as DEMO_STRATEGIES
from kafka_sticky_plugin.errors import ConfigurationError, InvalidSpecError
from kafka_sticky_plugin.groups.assignor_names import ASSIGNOR_NAMES, assignor_class
from kafka_sticky_plugin.simulate.grid import load_grid
from kafka_sticky_plugin.simulate.strategies import (
    STRATEGY_NAMES,
    check_strategy_names,
    get_strategy,
    is_baseline,
)


@pytest.mark.parametrize("client", sorted(ASSIGNOR_NAMES))
@pytest.mark.parametrize("name", list(STRATEGIES))
def test_every_client_configures_every_strategy_by_its_name(client: str, name: str) -> None:
    """The harness's class for each registered strategy is the face's class whose wire name
    is that strategy's."""
    pytest.importorskip("aiokafka" if client == "aiokafka" else "kafka")
    cls = assignor_class(name, client)
    assert cls.__module__.startswith("kafka_sticky_plugin.adapters.")
    assert cls.name == name


def test_kafka_python_baselines_are_spelled_as_the_simulator_spells_them() -> None:
    """The harness's kafka-python sticky assignors are the simulator's baseline names, and
    the old ``kafka-python:<kind>`` spelling is gone."""
    pytest.importorskip("kafka")
    harness = {n for n in ASSIGNOR_NAMES["kafka-python"] if is_baseline(n)}
    assert harness == {"kafka-python-sticky", "kafka-python-cooperative-sticky"}
    assert harness <= set(STRATEGY_NAMES)
    assert all(":" not in name for names in ASSIGNOR_NAMES.values() for name in names)
    with pytest.raises(ConfigurationError, match="unknown kafka-python assignor"):
        assignor_class("kafka-python:sticky")


def test_demo_and_simulator_offer_every_strategy() -> None:
    """The demo's strategies and CLI choices and the simulator's names include the registry's;
    each of ours is costed as ours (not a baseline), with the registry's protocol."""
    assert set(STRATEGIES) <= set(DEMO_STRATEGIES) <= set(_CHOICES)
    assert list(STRATEGY_NAMES[: len(STRATEGIES)]) == list(STRATEGIES)
    for name, strategy in STRATEGIES.items():
        simulated = get_strategy(name)
        assert not simulated.baseline and simulated.cooperative == strategy.cooperative


def test_the_old_baseline_spelling_gets_a_clear_error() -> None:
    """A grid or ``--strategies`` naming ``kafka-python:sticky`` is refused with the new
    spelling in the message."""
    with pytest.raises(ConfigurationError, match="kafka-python-sticky"):
        check_strategy_names(["sticky", "kafka-python:sticky"])
    check_strategy_names(["sticky", "kafka-python-sticky"])


def test_a_grid_with_the_old_baseline_spelling_is_refused(tmp_path: Path) -> None:
    """The grid loader reports the unknown name and the spelling to use."""
    grid = tmp_path / "grid.json"
    grid.write_text(
        '{"name": "g", "strategies": ["kafka-python:sticky"],'
        ' "traces": [], "families": [{"name": "f", "members": [2], "topics": [1],'
        ' "partitions_per_topic": [2], "shapes": ["homogeneous"],'
        ' "events": {"trace": ["join:1"]}}]}'
    )
    with pytest.raises(InvalidSpecError, match="kafka-python-<kind>"):
        load_grid(grid)
