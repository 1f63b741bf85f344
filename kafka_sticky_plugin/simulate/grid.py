"""Scenario grids (YAML or JSON) and recorded traces (JSON lines) into :class:`Scenario` values.

A grid file::

    name: example
    seed: 7                      # drives every scenario seed
    strategies: [sticky, ...]    # default: all of STRATEGY_NAMES
    time_cap_s: 30               # per scenario and baseline strategy (compute time)
    size_caps:                   # members x partitions above which a baseline is not run
      kafka-python-sticky: 2.0e6
    families:
      - name: small
        repeats: 2               # scenarios per combination, each with its own seed
        members: [3, 10]
        topics: [1, 4]
        partitions_per_topic: [8, 64]
        shapes: [homogeneous, disjoint, nested, random]
        events:                  # either a random trace ...
          count: 20
          mix: {join: 2, leave: 2, crash: 1, pause: 1, rolling_restart: 1}
          rolling_batches: 4     # batches of a rolling restart
          max_scale: 0.1         # scale_in/out/crash/pause act on up to this share of members
        # ... or a fixed one: events: {trace: ["rolling_restart:4", "scale_out:5"]}
    traces: [recorded.jsonl]     # recorded traces, paths relative to the grid file

A recorded trace: the first line is the group ``{"scenario_id", "topics": {name: count},
"members": {id: [topics]}}`` (optional ``seed``, ``shape`` for later joiners), then one
event per line, e.g. ``{"kind": "leave", "members": ["c-3"]}``.

Invariants: the same file gives the same scenarios in the same order (ids and seeds
included); every scenario names only known event kinds and shapes.
"""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError, InvalidSpecError
from .model import EVENT_KINDS, SHAPES, Event, Scenario
from .strategies import STRATEGY_NAMES, check_strategy_names, is_baseline

__all__ = ["Grid", "load_grid", "load_trace", "parse_grid", "scenario_rows"]

_DEFAULT_MIX = {kind: 1.0 for kind in EVENT_KINDS}


@dataclass(frozen=True)
class Grid:
    """A parsed grid: its scenarios and how to run them."""

    name: str
    scenarios: tuple[Scenario, ...]
    strategies: tuple[str, ...] = STRATEGY_NAMES
    time_cap_s: float | None = None
    size_caps: Mapping[str, float] = field(default_factory=dict)


def _list(value: Any, what: str) -> list[Any]:
    if isinstance(value, list):
        if not value:
            raise InvalidSpecError(f"grid: {what} is an empty list")
        return value
    return [value]


def _event_from_token(token: str) -> Event:
    kind, _, count = token.partition(":")
    if kind not in EVENT_KINDS:
        raise InvalidSpecError(
            f"grid: unknown event kind {kind!r} in trace; known: {list(EVENT_KINDS)}"
        )
    return Event(kind, int(count) if count else 1)


def _random_trace(
    spec: Mapping[str, Any], members: int, partitions_per_topic: int, rng: random.Random
) -> tuple[Event, ...]:
    mix = {str(k): float(v) for k, v in dict(spec.get("mix", _DEFAULT_MIX)).items()}
    unknown = sorted(set(mix) - set(EVENT_KINDS))
    if unknown:
        raise InvalidSpecError(f"grid: unknown event kinds {unknown} in mix")
    kinds = sorted(k for k, w in mix.items() if w > 0)
    weights = [mix[k] for k in kinds]
    max_k = max(1, int(members * float(spec.get("max_scale", 0.1))))
    batches = int(spec.get("rolling_batches", 4))
    events = []
    for kind in rng.choices(kinds, weights, k=int(spec.get("count", 20))):
        if kind == "rolling_restart":
            count = batches
        elif kind == "partitions_added":
            count = max(1, partitions_per_topic // 4)
        elif kind == "topic_added":
            count = 0
        elif kind in ("join", "leave"):
            count = 1
        else:
            count = rng.randint(1, max_k)
        events.append(Event(kind, count))
    return tuple(events)


def _family(raw: Mapping[str, Any], seed_rng: random.Random, start: int) -> list[Scenario]:
    name = str(raw.get("name", f"family{start}"))
    shapes = [str(s) for s in _list(raw.get("shapes", "homogeneous"), "shapes")]
    for shape in shapes:
        if shape not in SHAPES:
            raise InvalidSpecError(f"grid: unknown shape {shape!r}; known: {list(SHAPES)}")
    events_spec = dict(raw.get("events", {}))
    out: list[Scenario] = []
    combos = itertools.product(
        [int(m) for m in _list(raw.get("members", 3), "members")],
        [int(t) for t in _list(raw.get("topics", 1), "topics")],
        [int(p) for p in _list(raw.get("partitions_per_topic", 8), "partitions_per_topic")],
        shapes,
        range(int(raw.get("repeats", 1))),
    )
    for members, topics, ppt, shape, _ in combos:
        if members < 1 or topics < 1 or ppt < 1:
            raise InvalidSpecError(f"grid: family {name!r} needs members, topics, partitions >= 1")
        seed = seed_rng.randrange(1 << 31)
        if "trace" in events_spec:
            events = tuple(_event_from_token(str(t)) for t in events_spec["trace"])
        else:
            events = _random_trace(events_spec, members, ppt, random.Random(seed))
        out.append(
            Scenario(
                scenario_id=f"{name}-{start + len(out):05d}",
                seed=seed,
                members=members,
                topics=tuple((f"t{i:04d}", ppt) for i in range(topics)),
                shape=shape,
                events=events,
                family=name,
            )
        )
    return out


def load_trace(path: Path) -> Scenario:
    """A recorded trace (JSON lines: the group on the first line, then one event a line)."""
    lines = [line for line in path.read_text().splitlines() if line.strip()]
    if not lines:
        raise InvalidSpecError(f"trace {path}: empty file")
    try:
        head = json.loads(lines[0])
        events = tuple(Event.from_json(json.loads(line)) for line in lines[1:])
        topics = tuple(sorted((str(t), int(c)) for t, c in dict(head["topics"]).items()))
        members = tuple(
            sorted((str(m), tuple(sorted(str(t) for t in ts))) for m, ts in head["members"].items())
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise InvalidSpecError(f"trace {path}: {exc}") from None
    for event in events:
        if event.kind not in EVENT_KINDS:
            raise InvalidSpecError(f"trace {path}: unknown event kind {event.kind!r}")
    return Scenario(
        scenario_id=str(head.get("scenario_id", path.stem)),
        seed=int(head.get("seed", 0)),
        members=len(members),
        topics=topics,
        shape=str(head.get("shape", "random")),
        events=events,
        family="trace",
        initial_members=members,
    )


def parse_grid(data: Mapping[str, Any], base: Path = Path()) -> Grid:
    """A grid from its parsed YAML/JSON mapping; ``base`` resolves trace paths."""
    seed_rng = random.Random(int(data.get("seed", 0)))
    scenarios: list[Scenario] = []
    for raw in data.get("families", []):
        scenarios.extend(_family(raw, seed_rng, len(scenarios)))
    for trace in data.get("traces", []):
        scenarios.append(load_trace(base / str(trace)))
    if not scenarios:
        raise InvalidSpecError("grid: no scenarios (no families and no traces)")
    strategies = tuple(str(s) for s in data.get("strategies", STRATEGY_NAMES))
    try:
        check_strategy_names(strategies)
    except ConfigurationError as exc:
        raise InvalidSpecError(f"grid: {exc}") from None
    cap = data.get("time_cap_s")
    return Grid(
        name=str(data.get("name", "grid")),
        scenarios=tuple(scenarios),
        strategies=strategies,
        time_cap_s=None if cap is None else float(cap),
        size_caps={str(k): float(v) for k, v in dict(data.get("size_caps", {})).items()},
    )


def load_grid(path: Path | str) -> Grid:
    """Read a grid file (``.yaml``/``.yml`` needs PyYAML; ``.json`` does not)."""
    path = Path(path)
    text = path.read_text()
    if path.suffix in (".yaml", ".yml"):
        try:
            import yaml
        except ImportError as exc:
            from ..extras import missing

            raise missing(exc, f"reading the YAML grid {path.name}", "simulate") from exc

        data = yaml.safe_load(text)
    else:
        data = json.loads(text)
    if not isinstance(data, dict):
        raise InvalidSpecError(f"grid {path}: expected a mapping at the top level")
    return parse_grid(data, path.parent)


def scenario_rows(grid: Grid) -> list[dict[str, Any]]:
    """One plain row per (scenario, strategy): what the Spark job distributes.

    ``time_cap_s`` and ``size_cap`` are set for baseline strategies only (NaN otherwise).
    """
    nan = float("nan")
    rows = []
    for s in grid.scenarios:
        for strategy in grid.strategies:
            baseline = is_baseline(strategy)
            cap = grid.time_cap_s if baseline and grid.time_cap_s is not None else nan
            rows.append(
                {
                    "scenario_id": s.scenario_id,
                    "strategy": strategy,
                    "size": s.members * s.partitions,
                    "partitions": s.partitions,
                    "events": len(s.events) + 1,
                    "time_cap_s": cap,
                    "size_cap": grid.size_caps.get(strategy, nan) if baseline else nan,
                    "scenario_json": json.dumps(s.to_json(), separators=(",", ":")),
                }
            )
    return rows
