"""The commit guard on a hooked kafka-python consumer (every family: 2.0.2, 2.2, 2.3, ng 2.2,
3.0.9+). The rule and the modes: :mod:`kafka_sticky_plugin.assignor.commit_guard`.

Every OffsetCommit the client sends (``commit``, ``commit_async``, auto-commit, the hooks'
pre-rebalance commit) is built by the coordinator's ``_send_offset_commit_request``; the
guard wraps that one method on the consumer's coordinator *instance*, so the check happens
when the request is built (a commit queued behind a coordinator lookup is checked then, and
each retry of a sync commit is checked again). Ownership is the hooks' view: the consumer's
assignment (revoked partitions leave it when ``on_partitions_revoked`` returns) and its
generation (reset the moment the membership is lost).

The race with a revocation (3.0.x): after ``on_partitions_revoked`` returns, the guard lets
the commits the listener queued (``commit_async``, the only commit 3.0 allows in a sync
listener) start while the partitions are still assigned, then waits (at most
``request_timeout_ms``) for the OffsetCommit requests in flight, so none of them is still on
its way when the partitions leave (with a listener; without one nothing is awaited). On 2.x
the listener is called between polls (no request completes meanwhile) and the group
coordinator answers one connection's requests in order, so a commit sent before the
revocation lands before the JoinGroup that lets another member own the partitions.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from ...assignor.commit_guard import CommitGuard, GuardMode, check_mode
from ...errors import ConfigurationError

__all__ = ["guard_commits"]

_HOOKS_ATTRIBUTE = "_kafka_sticky_plugin_hooks"
_SEND = "_send_offset_commit_request"


def guard_commits(consumer: Any, mode: GuardMode = "refuse") -> CommitGuard:
    """Refuse commits for partitions ``consumer`` does not own at that moment (see the
    module docstring). ``mode``: ``"refuse"`` (raise
    :class:`~kafka_sticky_plugin.errors.CommitRefusedError` after committing the owned
    ones) or ``"drop"`` (commit the owned ones, one WARNING line naming the rest).

    Needs :func:`~kafka_sticky_plugin.kafka_python.install_hooks` on the consumer first
    (``ConfigurationError`` otherwise). Idempotent: a second call returns the first guard
    with its mode set to ``mode``. The hooks' ``uninstall`` removes the guard too."""
    checked = check_mode(mode)
    handle = getattr(consumer, _HOOKS_ATTRIBUTE, None)
    if handle is None:
        raise ConfigurationError(
            "guard_commits needs the plugin's hooks on this consumer: call"
            " install_hooks(consumer) first"
        )
    hooks = handle._impl
    existing = getattr(hooks, "commit_guard", None)
    if isinstance(existing, CommitGuard):
        existing.mode = checked
        return existing
    coordinator = hooks._coordinator
    subscription = hooks._subscription
    guard = CommitGuard(
        group_id=hooks.group_id,
        mode=checked,
        owned=lambda: set(subscription.assigned_partitions()),
        # manual assign(): no group ownership to protect, the assignment is what is owned
        in_generation=lambda: (
            not subscription.partitions_auto_assigned()
            or int(coordinator._generation.generation_id) >= 0
        ),
    )
    original = getattr(coordinator, _SEND)
    if hooks.family == "v3":
        in_flight: set[Any] = set()
        hooks._patch(coordinator, _SEND, _async_send(guard, original, in_flight))
        invoke = coordinator._invoke_rebalance_listener_async
        hooks._patch(
            coordinator,
            "_invoke_rebalance_listener_async",
            _drain_after_revoke(coordinator, invoke, in_flight),
        )
    else:
        hooks._patch(coordinator, _SEND, _sync_send(guard, original))
    hooks.commit_guard = guard
    return guard


def _async_send(
    guard: CommitGuard, original: Callable[..., Any], in_flight: set[Any]
) -> Callable[..., Any]:
    """3.0.x: the coroutine that builds and sends one OffsetCommit, guarded; each running
    send is a kafka ``Future`` in ``in_flight`` until it is answered."""
    from kafka.future import Future

    async def send(offsets: Any) -> Any:
        verdict = guard.split(dict(offsets))
        done = Future()
        in_flight.add(done)
        try:
            result = await original(verdict.allowed) if verdict.allowed else None
        finally:
            in_flight.discard(done)
            done.success(None)
        guard.settle(verdict)
        return result

    return send


def _drain_after_revoke(
    coordinator: Any, invoke: Callable[..., Any], in_flight: set[Any]
) -> Callable[..., Any]:
    """3.0.x: the listener call, then (after ``on_partitions_revoked``) a bounded wait for
    the OffsetCommit requests still in flight, so none lands after the partitions left."""

    async def call(method_name: str, partitions: Any) -> None:
        try:
            await invoke(method_name, partitions)
        finally:
            if method_name == "on_partitions_revoked":
                manager = coordinator._manager
                timeout_ms = int(coordinator.config.get("request_timeout_ms", 30000))
                # The listener's commit_async calls are queued tasks: let them start (and be
                # checked) while the revoked partitions are still assigned, then wait.
                with contextlib.suppress(Exception):
                    await manager.wait_for(manager.call_soon(_started), timeout_ms)
                for future in list(in_flight):
                    with contextlib.suppress(Exception):  # its caller sees its outcome
                        await coordinator._manager.wait_for(future, timeout_ms)

    return call


async def _started() -> None:
    """A no-op task: when it runs, every task queued before it has started."""


def _sync_send(guard: CommitGuard, original: Callable[..., Any]) -> Callable[..., Any]:
    """2.x: ``_send_offset_commit_request`` returns a kafka ``Future``; a commit with
    refused partitions gets a future that settles after the owned part was answered."""
    from kafka.future import Future

    def send(offsets: Any) -> Any:
        verdict = guard.split(dict(offsets))
        if not verdict.refused:
            return original(offsets)
        result = Future()

        def settle(_value: Any = None) -> None:
            try:
                guard.settle(verdict)
            except Exception as exc:
                result.failure(exc)
                return
            result.success(None)

        if verdict.allowed:
            sent = original(verdict.allowed)
            sent.add_callback(settle)
            sent.add_errback(result.failure)
        else:
            settle()
        return result

    return send
