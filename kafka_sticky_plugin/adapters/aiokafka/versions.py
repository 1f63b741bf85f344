"""Which aiokafka releases the hooks support (they patch one coordinator instance, so they
depend on its internals; each supported minor has its own matrix venv and test run)."""

from __future__ import annotations

from ...errors import UnsupportedClientError

__all__ = ["SUPPORTED_MINORS", "check_version", "supported_text"]

#: ``(major, minor)`` of the aiokafka releases the hooks are tested against.
SUPPORTED_MINORS: tuple[tuple[int, int], ...] = ((0, 13), (0, 14), (0, 15))


def supported_text() -> str:
    return ", ".join(f"{a}.{b}.x" for a, b in SUPPORTED_MINORS)


def check_version(version: str) -> tuple[int, int]:
    """``(major, minor)`` of ``version``; an unsupported one raises
    :class:`UnsupportedClientError` naming the supported releases."""
    try:
        major, minor = (int(part) for part in version.split(".")[:2])
    except ValueError:
        raise UnsupportedClientError(f"cannot read the aiokafka version {version!r}") from None
    if (major, minor) not in SUPPORTED_MINORS:
        raise UnsupportedClientError(
            f"aiokafka {version} is not supported by kafka-sticky-plugin's hooks; "
            f"supported: {supported_text()}"
        )
    return major, minor
