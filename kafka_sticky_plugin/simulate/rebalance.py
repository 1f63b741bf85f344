"""One rebalance of a group, round by round, as real clients run it.

Eager (KIP-54 era): every member revokes everything it consumes, joins reporting its previous
assignment and generation (sticky user data), the leader assigns, everyone starts consuming
its new assignment: one round during which nothing is consumed.

Cooperative (KIP-429): members keep consuming what they own, join reporting owned partitions
and generation; each member revokes what its new assignment leaves out and, if it revoked
anything, rejoins: rounds repeat until a round revokes nothing. Converged means that last
round withheld nothing; still revoking after :data:`MAX_ROUNDS` rounds counts as a violation.

KIP-848 (the consumer protocol, :attr:`Strategy.kip848`): one target epoch computed by the
broker and reconciled member by member, without a barrier (:mod:`.reconcile`).

Invariants after :func:`rebalance`: ``group.consuming`` equals the last round's plan; every
member's ``owned`` is its assignment and its ``generation`` the group generation.
"""

from __future__ import annotations

from .checks import (
    count_violations,
    eager_checks,
    final_cooperative_checks,
    round_cooperative_checks,
    specs_of,
)
from .group import GroupState
from .outcome import RebalanceOutcome
from .reconcile import reconcile
from .strategies import Plan, Strategy

__all__ = ["MAX_ROUNDS", "RebalanceOutcome", "rebalance"]

#: A cooperative rebalance still revoking after this many rounds has not converged.
MAX_ROUNDS = 10


def _apply(group: GroupState, plan: Plan) -> None:
    group.apply_plan(plan)


def _eager(group: GroupState, strategy: Strategy, outcome: RebalanceOutcome) -> None:
    topics = dict(group.topics)
    members = [group.members[m] for m in sorted(group.members)]
    specs = specs_of(members)
    outcome.revoked = sum(len(tps) for tps in group.consuming.values())
    outcome.paused_partition_rounds = len(group.assignable())
    plan, seconds = strategy.assign(topics, members)
    outcome.rounds = 1
    outcome.compute_s = outcome.max_compute_s = seconds
    checks = eager_checks(topics, specs, plan, ours=not strategy.baseline)
    outcome.violations += count_violations(checks, outcome.messages)
    _apply(group, plan)


def _cooperative(group: GroupState, strategy: Strategy, outcome: RebalanceOutcome) -> None:
    topics = dict(group.topics)
    plan: Plan = {}
    specs = specs_of([])
    for _ in range(MAX_ROUNDS):
        members = [group.members[m] for m in sorted(group.members)]
        specs = specs_of(members)
        assignable = group.assignable()
        consumed = {tp for tps in group.consuming.values() for tp in tps}
        outcome.paused_partition_rounds += len(assignable - consumed)
        plan, seconds = strategy.assign(topics, members)
        outcome.rounds += 1
        outcome.compute_s += seconds
        outcome.max_compute_s = max(outcome.max_compute_s, seconds)
        checks = round_cooperative_checks(topics, specs, plan, group.consuming)
        outcome.violations += count_violations(checks, outcome.messages)
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
    checks = final_cooperative_checks(topics, specs, plan, ours=not strategy.baseline)
    outcome.violations += count_violations(checks, outcome.messages)


def rebalance(group: GroupState, strategy: Strategy) -> RebalanceOutcome:
    """Run one rebalance of ``group`` under ``strategy``; mutates ``group``.

    An empty group (e.g. every member of a one-member group restarting) has no rebalance."""
    outcome = RebalanceOutcome()
    if not group.members:
        return outcome  # nobody left to lead or to join: no rebalance happens
    if strategy.kip848:
        reconcile(group, strategy, outcome)  # the consumer protocol: no rejoin rounds
    elif strategy.cooperative:
        _cooperative(group, strategy, outcome)
    else:
        _eager(group, strategy, outcome)
    return outcome
