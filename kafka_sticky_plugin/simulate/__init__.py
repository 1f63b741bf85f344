"""Rebalance simulation: what a strategy costs a group before it is deployed.

The pure part (no Spark, no JVM): :mod:`.model` (scenarios, events, result rows),
:mod:`.group` (group state), :mod:`.rebalance` (eager and cooperative rounds),
:mod:`.simulator` (replays a scenario), :mod:`.strategies` and :mod:`.baselines` (ours and
kafka-python's), :mod:`.grid` (scenario grids and recorded traces). The pipeline:
:mod:`.spark_job` (the only module importing pyspark at module level), :mod:`.report`
(Markdown and PNG charts) and :mod:`.cli` (``python -m kafka_sticky_plugin simulate``).
"""

from __future__ import annotations

from .model import Event, EventResult, Scenario
from .simulator import simulate
from .strategies import STRATEGY_NAMES, get_strategy

__all__ = ["STRATEGY_NAMES", "Event", "EventResult", "Scenario", "get_strategy", "simulate"]
