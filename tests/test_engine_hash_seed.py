"""Plans must not depend on Python's string hashing: same input, same plan in every process.

In-process determinism tests cannot see this (one process has one hash seed), so this test
runs the same seeded random groups (equal and different subscriptions, member racks, replica
racks naming racks no member has, owned partitions with generations) in subprocesses with
different ``PYTHONHASHSEED`` values and compares the plans of every registered strategy (the
hash-seed part of the strategy contract, ``tests/test_strategy_contract.py``). A rack index
assigned in set order once made equal-subscription rack plans differ between processes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """
    import json, random, sys
    from kafka_sticky_plugin.assignor.strategies import STRATEGIES
    from kafka_sticky_plugin.core import MemberSpec
    rnd = random.Random(int(sys.argv[1]))
    plans = []
    for case in range(150):
        counts = {f"t{i}": rnd.randint(0, 20) for i in range(rnd.randint(1, 4))}
        names = [f"rack-{i}" for i in range(rnd.randint(2, 6))]
        racks = {
            (t, p): tuple(rnd.sample(names, rnd.randint(0, 2)))
            for t, n in counts.items() for p in range(n)
        }
        equal = case % 2 == 0
        members = [
            MemberSpec(
                member_id=f"m{i}",
                topics=(
                    list(counts) if equal
                    else rnd.sample(list(counts), rnd.randint(1, len(counts)))
                ),
                owned=[
                    (t, rnd.randrange(max(1, n)))
                    for t, n in counts.items() if rnd.random() < 0.5
                ],
                generation=rnd.randint(-1, 3),
                rack=rnd.choice([None, *names[:3]]),
            )
            for i in range(rnd.randint(1, 10))
        ]
        for strategy in STRATEGIES.values():
            plans.append(strategy.assign(counts, members, partition_racks=racks))
    print(json.dumps(plans, sort_keys=True))
    """
)


def _plans(seed: int, hash_seed: str) -> object:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(seed)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    return json.loads(out.stdout)


def test_plans_do_not_depend_on_the_hash_seed() -> None:
    seed = 20261122
    print(f"seed={seed}")
    first = _plans(seed, "1")
    for hash_seed in ("2", "3"):
        assert _plans(seed, hash_seed) == first, f"seed {seed}, PYTHONHASHSEED {hash_seed}"
