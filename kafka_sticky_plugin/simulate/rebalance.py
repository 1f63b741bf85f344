"""One rebalance of a group, round by round, as real clients run it.

Eager (KIP-54 era): every member revokes everything it consumes, joins reporting its previous
assignment and generation (sticky user data), the leader assigns, everyone starts consuming
its new assignment: one round during which nothing is consumed.

Cooperative (KIP-429): members keep consuming what they own, join reporting owned partitions
and generation; each member revokes what its new assignment leaves out and, if it revoked
anything, rejoins: rounds repeat until a round revokes nothing. Converged means that last
round withheld nothing; still revoking after :data:`MAX_ROUNDS` rounds counts as a violation.

Invariants after :func:`rebalance`: ``group.consuming`` equals the last round's plan; every
member's ``owned`` is its assignment and its ``generation`` the group generation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial

from .checks import (
    check_balance,
    check_completeness,
    check_cooperative_contract,
    check_validity,
    count_violations,
)
from .group import GroupState
from .strategies import Plan, Strategy

__all__ = ["MAX_ROUNDS", "RebalanceOutcome", "rebalance"]

#: A cooperative rebalance still withholding or revoking after this many rounds has not
#: converged.
MAX_ROUNDS = 10


@dataclass
class RebalanceOutcome:
    """What one rebalance cost (summed over its rounds)."""

    rounds: int = 0
    revoked: int = 0
    paused_partition_rounds: int = 0
    compute_s: float = 0.0
    max_compute_s: float = 0.0
    violations: int = 0
    messages: list[str] = field(default_factory=list)
    converged: bool = True


def _apply(group: GroupState, plan: Plan) -> None:
    group.generation += 1
    for member_id, member in group.members.items():
        assigned = plan.get(member_id, [])
        member.owned = frozenset(assigned)
        member.generation = group.generation
        group.consuming[member_id] = set(assigned)


def _final_checks(
    group: GroupState, strategy: Strategy, plan: Plan, outcome: RebalanceOutcome
) -> None:
    members = [group.members[m] for m in sorted(group.members)]
    topics = group.topics
    checks = [partial(check_completeness, topics, members, plan)]
    if not strategy.baseline:
        # Balance is a goal only our strategies promise; baselines' imbalance is reported
        # through max_min_load and topic_spread instead.
        checks.append(partial(check_balance, topics, members, plan))
    outcome.violations += count_violations(checks, outcome.messages)


def rebalance(group: GroupState, strategy: Strategy) -> RebalanceOutcome:
    """Run one rebalance of ``group`` under ``strategy``; mutates ``group``."""
    outcome = RebalanceOutcome()
    topics = dict(group.topics)
    if not strategy.cooperative:
        members = [group.members[m] for m in sorted(group.members)]
        outcome.revoked = sum(len(tps) for tps in group.consuming.values())
        outcome.paused_partition_rounds = len(group.assignable())
        plan, seconds = strategy.assign(topics, members)
        outcome.rounds = 1
        outcome.compute_s = outcome.max_compute_s = seconds
        outcome.violations += count_violations(
            [partial(check_validity, topics, members, plan)], outcome.messages
        )
        _apply(group, plan)
        _final_checks(group, strategy, plan, outcome)
        return outcome

    plan = {}
    for _ in range(MAX_ROUNDS):
        members = [group.members[m] for m in sorted(group.members)]
        assignable = group.assignable()
        consumed = {tp for tps in group.consuming.values() for tp in tps}
        outcome.paused_partition_rounds += len(assignable - consumed)
        plan, seconds = strategy.assign(topics, members)
        outcome.rounds += 1
        outcome.compute_s += seconds
        outcome.max_compute_s = max(outcome.max_compute_s, seconds)
        consuming = {m: set(tps) for m, tps in group.consuming.items()}
        outcome.violations += count_violations(
            [
                partial(check_validity, topics, members, plan),
                partial(check_cooperative_contract, consuming, plan),
            ],
            outcome.messages,
        )
        # A member revokes what it owned (as it reported it) and was not given back.
        revoked = sum(len(m.owned - set(plan.get(m.member_id, ()))) for m in members)
        outcome.revoked += revoked
        _apply(group, plan)
        if revoked == 0:
            # Nobody revoked, so nobody rejoins: the rebalance is over. Anything still
            # withheld now stays unassigned (the completeness check reports it).
            withheld = assignable - {tp for tps in plan.values() for tp in tps}
            outcome.converged = not withheld
            break
    else:
        outcome.converged = False
        outcome.violations += 1
        outcome.messages.append(f"cooperative rebalance still revoking after {MAX_ROUNDS} rounds")
    _final_checks(group, strategy, plan, outcome)
    return outcome
