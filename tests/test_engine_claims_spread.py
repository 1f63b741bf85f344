"""``_spread`` (each run's offset once per partition of the run, the runs of one copied in
slices when they are most runs) against one repeat per run, on seeded random run lengths
(the seed is printed): mostly ones with a few longer runs, mostly longer runs, empty."""

from __future__ import annotations

import random
from itertools import chain, repeat

import pytest

from kafka_sticky_plugin.core.claims import _spread

SEEDS = range(300)


def _lengths(rng: random.Random) -> list[int]:
    size = rng.choice([0, 1, 2, 10, 100, 1000])
    longer = rng.choice([0.0, 0.01, 0.05, 0.2, 0.9])
    return [rng.randint(2, 6) if rng.random() < longer else 1 for _ in range(size)]


@pytest.mark.parametrize("seed", SEEDS)
def test_spread_repeats_each_run_offset_once_per_partition(seed: int) -> None:
    print(f"seed={seed}")
    rng = random.Random(seed)
    for _ in range(4):
        lengths = _lengths(rng)
        offsets = [rng.randrange(10**6) for _ in lengths]
        expected = list(chain.from_iterable(map(repeat, offsets, lengths)))
        assert list(_spread(offsets, lengths)) == expected
