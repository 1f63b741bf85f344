"""The library's error hierarchy.

Every error this package raises on purpose derives from :class:`StickyPluginError`:

- :class:`CodecError` (also a ``ValueError``): bytes that do not follow the consumer
  protocol or the sticky user-data format. Carries what was expected and the byte offset.
- :class:`InvalidSpecError` (also a ``ValueError``): a typed input to the engine that breaks
  its contract (a negative partition count, a generation outside int32, a non-string topic).
- :class:`InvariantViolation` (also an ``AssertionError``): a plan that breaks a guarantee;
  raised by :mod:`kafka_sticky_plugin.invariants` and names the member and partition at fault.
- :class:`ConfigurationError`: a consumer configuration that cannot work (no rebalance
  protocol common to all assignors, an unsupported client version).
- :class:`MissingExtraError` (also a ``ModuleNotFoundError``): an optional dependency is not
  installed; names the ``pip install "kafka-sticky-plugin[EXTRA]"`` that brings it.
- :class:`CommitRefusedError`: a commit named partitions the consumer does not own (the
  commit guard); names them.
"""

from __future__ import annotations

__all__ = [
    "CodecError",
    "CommitRefusedError",
    "ConfigurationError",
    "InvalidSpecError",
    "InvariantViolation",
    "MissingExtraError",
    "StickyPluginError",
    "UnsupportedClientError",
]


class StickyPluginError(Exception):
    """Base class of every error raised on purpose by kafka-sticky-plugin."""


class CodecError(StickyPluginError, ValueError):
    """Malformed bytes: says what was expected and at which byte offset.

    A negative ``offset`` means the input was an object, not bytes (a kafka-python
    subscription object, say): the message then names no offset.
    """

    def __init__(self, what: str, expected: str, offset: int) -> None:
        self.what = what
        self.expected = expected
        self.offset = offset
        where = f" at byte offset {offset}" if offset >= 0 else ""
        super().__init__(f"malformed {what}: expected {expected}{where}")


class InvalidSpecError(StickyPluginError, ValueError):
    """A typed engine input that breaks its documented contract."""


class InvariantViolation(StickyPluginError, AssertionError):
    """A plan breaks a guarantee; the message names the member and partition at fault."""


class ConfigurationError(StickyPluginError):
    """A consumer configuration that cannot work, with what to do instead."""


class UnsupportedClientError(ConfigurationError):
    """The installed Kafka client version is not one the plugin supports."""


class MissingExtraError(StickyPluginError, ModuleNotFoundError):
    """An optional dependency is not installed; the message names the extra that brings it.

    Also a ``ModuleNotFoundError``, so ``except ImportError`` keeps working.
    """


class CommitRefusedError(StickyPluginError):
    """A commit named partitions this consumer does not own at that moment (revoked, lost or
    never assigned): they were not committed. ``refused`` lists them as ``(topic, partition)``
    pairs, sorted; the owned partitions of the same commit were committed (see
    :mod:`kafka_sticky_plugin.assignor.commit_guard`). Not retriable: retrying cannot make
    the consumer own them again."""

    retriable = False  # kafka-python's Future.retriable() reads this

    def __init__(self, group_id: str, refused: list[tuple[str, int]], why: str) -> None:
        self.group_id = group_id
        self.refused = refused
        shown = ", ".join(f"{topic}-{partition}" for topic, partition in refused)
        super().__init__(
            f"group {group_id}: commit refused for {len(refused)} partition(s) this consumer"
            f" does not own ({why}): {shown}"
        )
