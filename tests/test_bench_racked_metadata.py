"""``benchmarks/racked_metadata.py``: the metadata ``hooked_vs_plain.py`` reads the replica
racks from holds the bench shapes' racks, so reading them gives the input's racks (sorted)
and every call of that benchmark plans as with the racks given (its bytes check)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from racked_metadata import cluster_metadata  # noqa: E402
from shapes import Shape, _homogeneous, _topics  # noqa: E402

from kafka_sticky_plugin.assignor.racks import replica_racks  # noqa: E402


@pytest.mark.parametrize("racks", [(3, 3), (6, 2), (3, 1)])
def test_replica_racks_of_the_metadata_are_the_shapes(racks: tuple[int, int]) -> None:
    shape = Shape("small", dict.fromkeys(_topics(4), 13), _homogeneous(4, 13), racks=racks)
    pairs = shape.partition_racks()
    assert pairs is not None
    read = replica_racks(cluster_metadata(shape.partitions, pairs), shape.partitions)
    assert read is not None
    assert list(read.items()) == [(key, tuple(sorted(rs))) for key, rs in pairs.items()]
