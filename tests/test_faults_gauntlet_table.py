"""The gauntlet's per-step verdicts and table (testlab.gauntlet), without
a broker: figures in, problems and lines out."""

from __future__ import annotations

from kafka_sticky_plugin.groups.analysis import DeliveryReport
from testlab.faults import FaultFigures
from testlab.gauntlet import STEPS, GauntletResult, StepFigures, step_table


def _step(step: str, **changes: int) -> StepFigures:
    figures = {"lost": 0, "redelivered": 3, "overlaps": 0, "errors": 0}
    figures.update(changes)
    return StepFigures(step=step, recovery_s=4.5, caught_up_s=6.0, **figures)


def _result(steps: list[StepFigures]) -> GauntletResult:
    report = DeliveryReport(
        acknowledged=100, consumed=103, duplicates=3, lost=(), unjustified_duplicates=()
    )
    figures = FaultFigures("aiokafka sticky", report, {}, [], 0, {})
    return GauntletResult("aiokafka sticky", steps, figures)


def test_a_clean_gauntlet_has_no_problems_and_one_line_per_step() -> None:
    result = _result([_step(s) for s in STEPS])
    assert result.problems() == []
    lines = step_table(result).splitlines()
    assert lines[0] == "aiokafka sticky"
    assert len(lines) == len(STEPS) + 2
    assert "redelivered=3" in lines[1] and "recovery=   4.5s" in lines[1]
    assert lines[-1].startswith("  TOTAL lost=0 redelivered=3 two_owners=0")


def test_each_broken_promise_is_named_with_its_step() -> None:
    steps = [
        _step("coordinator SIGKILL", lost=2),
        _step("member SIGKILL", overlaps=1, errors=1),
        StepFigures("static bounce", 0, 0, 0, 0, 1.0, 1.0, revocations_of_others=2),
    ]
    problems = _result(steps).problems()
    assert problems == [
        "coordinator SIGKILL: 2 acknowledged records not delivered",
        "member SIGKILL: 1 two-owner intervals",
        "member SIGKILL: 1 errors raised out of poll()",
        "static bounce: 2 revocations of the other members",
    ]
    assert "others_revoked=2" in step_table(_result(steps))
