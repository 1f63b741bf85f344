"""Scenario grids, recorded traces and task packing (no JVM)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from kafka_sticky_plugin.errors import InvalidSpecError
from kafka_sticky_plugin.simulate.grid import load_grid, load_trace, parse_grid, scenario_rows
from kafka_sticky_plugin.simulate.model import EVENT_KINDS, Scenario
from kafka_sticky_plugin.simulate.strategies import STRATEGY_NAMES
from kafka_sticky_plugin.simulate.tasks import row_cost, split_tasks

GRIDS = Path(__file__).resolve().parents[1] / "examples" / "grids"


def small_grid(**overrides: object) -> dict[str, object]:
    grid: dict[str, object] = {
        "seed": 3,
        "families": [
            {
                "name": "f",
                "members": [2, 5],
                "topics": [1, 2],
                "partitions_per_topic": [4],
                "shapes": ["homogeneous", "random"],
                "repeats": 2,
                "events": {"count": 7},
            }
        ],
    }
    grid.update(overrides)
    return grid


def test_grid_is_the_product_of_its_lists() -> None:
    """A family yields members x topics x partitions x shapes x repeats scenarios."""
    grid = parse_grid(small_grid())
    assert len(grid.scenarios) == 2 * 2 * 1 * 2 * 2
    assert {len(s.events) for s in grid.scenarios} == {7}
    assert grid.strategies == STRATEGY_NAMES
    assert len({s.scenario_id for s in grid.scenarios}) == len(grid.scenarios)


def test_grid_is_deterministic_and_seeded() -> None:
    """Same file, same scenarios (ids, seeds, traces); another seed, other traces."""
    first, again = parse_grid(small_grid()), parse_grid(small_grid())
    assert first.scenarios == again.scenarios
    other = parse_grid(small_grid(seed=4))
    assert [s.seed for s in other.scenarios] != [s.seed for s in first.scenarios]


def test_fixed_trace_and_caps() -> None:
    """A family may give a fixed trace ("kind:count"); caps apply per strategy."""
    data = small_grid(time_cap_s=3, size_caps={"kafka-python-sticky": 10})
    data["families"] = [{"name": "x", "members": 3, "events": {"trace": ["scale_out:4", "leave"]}}]
    grid = parse_grid(data)
    (only,) = grid.scenarios
    assert [(e.kind, e.count) for e in only.events] == [("scale_out", 4), ("leave", 1)]
    rows = {r["strategy"]: r for r in scenario_rows(grid)}
    assert rows["kafka-python-sticky"]["size_cap"] == 10.0
    assert rows["kafka-python-sticky"]["time_cap_s"] == 3.0
    assert rows["sticky"]["time_cap_s"] != rows["sticky"]["time_cap_s"]  # NaN: no cap


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"strategies": ["best"]}, "unknown strategies"),
        ({"families": [{"shapes": ["square"]}]}, "unknown shape"),
        ({"families": [{"events": {"trace": ["explode"]}}]}, "unknown event kind"),
        ({"families": [{"events": {"mix": {"explode": 1}}}]}, "unknown event kinds"),
        ({"families": [{"members": 0}]}, ">= 1"),
        ({"families": []}, "no scenarios"),
    ],
)
def test_bad_grids_are_rejected(override: dict[str, object], message: str) -> None:
    """A grid naming an unknown strategy, shape or event, or with no scenarios, is refused."""
    with pytest.raises(InvalidSpecError, match=message):
        parse_grid(small_grid(**override))


def test_scenario_json_round_trip() -> None:
    """A scenario survives the JSON row the Spark job ships to executors."""
    for scenario in parse_grid(small_grid()).scenarios:
        assert Scenario.from_json(json.loads(json.dumps(scenario.to_json()))) == scenario


def test_recorded_trace_example() -> None:
    """The shipped recorded trace names its members, topics and events."""
    scenario = load_trace(GRIDS / "traces" / "rolling-deploy.jsonl")
    assert scenario.members == 4
    assert dict(scenario.topics) == {"orders": 24, "payments": 12}
    assert scenario.events[0].kind == "leave" and scenario.events[0].members == ("c-1",)
    assert all(e.kind in EVENT_KINDS for e in scenario.events)


def test_bad_trace_is_rejected(tmp_path: Path) -> None:
    """A trace with an unknown event kind is refused with its path."""
    path = tmp_path / "t.jsonl"
    path.write_text('{"topics": {"a": 1}, "members": {"c": ["a"]}}\n{"kind": "explode"}\n')
    with pytest.raises(InvalidSpecError, match="explode"):
        load_trace(path)


def test_example_grids_load() -> None:
    """The small example grid loads (with its trace); the default one is the promised size:
    at least 1,000 scenarios of 20 events, up to 1,000 members and 100,000 partitions."""
    small = load_grid(GRIDS / "small.yaml")
    assert any(s.family == "trace" for s in small.scenarios)
    default = load_grid(GRIDS / "default.yaml")
    assert len(default.scenarios) >= 1000
    assert {len(s.events) for s in default.scenarios} == {20}
    assert max(s.members for s in default.scenarios) == 1000
    assert max(s.partitions for s in default.scenarios) == 100_000


def test_split_tasks_places_every_row_once() -> None:
    """Every row lands in exactly one task; tasks come costliest first and are balanced
    (no task above the largest row plus the mean)."""
    rng = random.Random(5)
    rows = [
        {
            "scenario_id": f"s{i}",
            "strategy": rng.choice(STRATEGY_NAMES),
            "size": (m := rng.randint(1, 1000)) * (p := rng.randint(1, 100_000)),
            "partitions": p,
            "members": m,
            "events": 21,
            "time_cap_s": float("nan"),
            "size_cap": float("nan"),
        }
        for i in range(300)
    ]
    buckets = split_tasks(rows, 12)
    assert len(buckets) == 12
    placed = sorted(r["scenario_id"] for b in buckets for r in b)
    assert placed == sorted(str(r["scenario_id"]) for r in rows)
    totals = [sum(row_cost(r) for r in b) for b in buckets]
    assert totals == sorted(totals, reverse=True)
    assert max(totals) <= max(row_cost(r) for r in rows) + sum(totals) / len(totals)


def test_size_cap_makes_a_row_cheap() -> None:
    """A baseline over its size cap is estimated at almost nothing (it will not run)."""
    row = {"strategy": "kafka-python-sticky", "size": 10**8, "partitions": 10**5, "events": 21}
    assert row_cost({**row, "size_cap": 1e5, "time_cap_s": float("nan")}) < 0.1
    assert row_cost({**row, "size_cap": float("nan"), "time_cap_s": float("nan")}) > 1000
