"""Calibrate the simulation pipeline's cost model and the baselines' size caps.

Runs a short fixed trace (crash, join, scale-out) of each strategy on a few group shapes, in
this process, and prints seconds per protocol round and per member x partition. Use it to
refresh the constants of ``kafka_sticky_plugin/simulate/tasks.py`` and the ``size_caps`` of a
grid: a baseline whose estimated time for a 20-event scenario passes ``--time-cap`` seconds
is not worth running and is reported as ``time_cap_exceeded``.

    .venv/bin/python benchmarks/bench_simulate.py [--time-cap 10] [--max-size 500000]
"""

from __future__ import annotations

import argparse
import time

from kafka_sticky_plugin.simulate.model import Event, Scenario
from kafka_sticky_plugin.simulate.simulator import simulate
from kafka_sticky_plugin.simulate.strategies import STRATEGY_NAMES, get_strategy, is_baseline

SHAPES = ((10, 4, 250), (30, 4, 500), (50, 10, 200), (100, 5, 1000), (1000, 10, 10000))
TRACE = (Event("crash", 1), Event("join"), Event("scale_out", 3))
ROUNDS_PER_EVENT = 1.8  # a random 20-event trace averages this many rounds per event (eager)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--time-cap", type=float, default=10.0)
    parser.add_argument("--max-size", type=float, default=5e5, help="skip baselines above")
    args = parser.parse_args()
    print(f"{'members':>7} {'partitions':>10} {'strategy':<32} {'s/round':>9} {'s/(m*p)':>9}")
    per_unit: dict[str, list[float]] = {}
    for members, topics, per_topic in SHAPES:
        scenario = Scenario(
            "calibration",
            1,
            members,
            tuple((f"t{i}", per_topic) for i in range(topics)),
            "homogeneous",
            TRACE,
        )
        size = members * topics * per_topic
        for name in STRATEGY_NAMES:
            strategy = get_strategy(name)
            if strategy.baseline and "sticky" in name and size > args.max_size:
                continue
            start = time.perf_counter()
            rows = simulate(scenario, strategy)
            seconds = time.perf_counter() - start
            rounds = max(1, sum(r.rounds for r in rows))
            unit = seconds / rounds / size
            per_unit.setdefault(name, []).append(unit)
            print(
                f"{members:>7} {topics * per_topic:>10} {name:<32} "
                f"{seconds / rounds:>9.4f} {unit:>9.2e}"
            )
    print(f"\nsize caps for a {args.time_cap:.0f} s cap on a 20-event scenario:")
    for name, units in per_unit.items():
        if is_baseline(name) and "sticky" in name:
            worst = max(units)
            cap = args.time_cap / (20 * ROUNDS_PER_EVENT * worst)
            print(f"  {name}: {cap:,.0f} members x partitions ({worst:.2e} s per unit)")


if __name__ == "__main__":
    main()
