"""The commit guard on a hooked ``AIOKafkaConsumer``. The rule and the modes:
:mod:`kafka_sticky_plugin.assignor.commit_guard`.

aiokafka checks a ``commit()``'s partitions against the assignment when it is *called*, then
waits for the coordinator and the commit lock and sends with the generation of the moment
it is *sent*: a commit queued behind a rebalance (or the auto-commit of an assignment that
was revoked meanwhile) lands for partitions that now belong to another member. Every
OffsetCommit goes through the coordinator's ``_do_commit_offsets`` (user commits, the
auto-commit, the hooks' commit before a rebalance); the guard wraps that method on the
consumer's coordinator instance and checks, when the request is built, against the hooks'
``owned`` (what the member owns in the group's eyes; revoked partitions leave it when
``on_partitions_revoked`` returns, before any other task runs; emptied the moment a loss is
known) and the coordinator's generation.

A request already sent when a revocation starts reaches the group coordinator before the
member's next JoinGroup (one connection, answered in order), so it lands before another
member can own the partitions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...assignor.commit_guard import CommitGuard, GuardMode, check_mode
from ...errors import ConfigurationError

__all__ = ["guard_commits"]

_HANDLE = "_kafka_sticky_plugin_aiokafka_hooks"
_SEND = "_do_commit_offsets"


def guard_commits(consumer: Any, mode: GuardMode = "refuse") -> CommitGuard:
    """Refuse commits for partitions ``consumer`` does not own at that moment (see the
    module docstring). ``mode``: ``"refuse"`` (commit the owned ones, then raise
    :class:`~kafka_sticky_plugin.errors.CommitRefusedError`) or ``"drop"`` (commit the owned
    ones, one WARNING line naming the rest).

    Needs :func:`~kafka_sticky_plugin.aiokafka.install_hooks` on the consumer first
    (``ConfigurationError`` otherwise); before or after ``start()``. Idempotent: a second
    call returns the first guard with its mode set to ``mode``."""
    checked = check_mode(mode)
    handle = getattr(consumer, "__dict__", {}).get(_HANDLE)
    if handle is None:
        raise ConfigurationError(
            "guard_commits needs the plugin's hooks on this consumer: call"
            " install_hooks(consumer) before start(), then guard_commits(consumer)"
        )
    hooks = handle._impl
    existing = vars(hooks).get("commit_guard")
    if isinstance(existing, CommitGuard):
        existing.mode = checked
        return existing

    subscription = consumer._subscription

    def in_generation() -> bool:
        if not subscription.partitions_auto_assigned():
            return True  # manual assign(): no group ownership to protect
        coordinator = hooks._coordinator
        return coordinator is not None and int(coordinator.generation) >= 0

    def owned() -> Any:
        if not subscription.partitions_auto_assigned():
            return subscription.assigned_partitions()
        return hooks.owned

    guard = CommitGuard(
        group_id=str(consumer._group_id),
        mode=checked,
        owned=owned,
        in_generation=in_generation,
    )
    vars(hooks)["commit_guard"] = guard
    attach = hooks.attach

    def attach_guarded(coordinator: Any) -> None:
        attach(coordinator)
        if _SEND not in vars(coordinator):
            vars(coordinator)[_SEND] = _guarded_send(guard, getattr(coordinator, _SEND))

    vars(hooks)["attach"] = attach_guarded
    if hooks._coordinator is not None:
        attach_guarded(hooks._coordinator)
    return guard


def _guarded_send(guard: CommitGuard, original: Callable[..., Any]) -> Callable[..., Any]:
    async def send(assignment: Any, offsets: Any) -> Any:
        verdict = guard.split(dict(offsets))
        result = await original(assignment, verdict.allowed) if verdict.allowed else None
        guard.settle(verdict)
        return result

    return send
