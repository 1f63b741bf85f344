"""Scan log lines for secrets: the passwords and private-key lines a test run used must appear
in no line that a client, a member, the harness or the broker logged.

:func:`scan_for_secrets` reads every line once and sorts each hit into a known client leak
(a line that starts with one of ``known``: a client's own logging that the project cannot
change, counted by name) or a leak. :class:`SecretScan` reports how many lines it read, so a
caller can refuse a blind scan (no lines, or none from a source it expects).

Invariants: a secret is never repeated in what the scan reports (each leaked line is shown
with every secret replaced by ``<secret>``); secrets shorter than :data:`MIN_SECRET_LENGTH`
are refused, since a short one matches innocent text and would make the scan meaningless.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

__all__ = ["MIN_SECRET_LENGTH", "SecretScan", "scan_for_secrets"]

#: The shortest secret the scan accepts (the security tier's passwords are 32 hex digits,
#: its private-key lines 64 base64 characters).
MIN_SECRET_LENGTH = 16

#: How much of a leaked line a report keeps.
_SHOWN = 200


@dataclass(frozen=True)
class SecretScan:
    """What :func:`scan_for_secrets` found."""

    #: Lines read.
    scanned: int
    #: Lines with a secret that start with one of the known client leaks.
    known: int
    #: Every other line with a secret, each secret masked, cut to 200 characters.
    leaks: list[str] = field(default_factory=list)

    def describe(self) -> str:
        """One line: how many lines were read and what was found."""
        found = f"{len(self.leaks)} leak(s), first: {self.leaks[0]}" if self.leaks else "no leak"
        return f"scanned {self.scanned} lines: {found}; {self.known} known client line(s)"


def _masked(line: str, secrets: Sequence[str]) -> str:
    for secret in secrets:
        line = line.replace(secret, "<secret>")
    return line[:_SHOWN]


def scan_for_secrets(
    secrets: Sequence[str], lines: Iterable[str], known: tuple[str, ...] = ()
) -> SecretScan:
    """Scan ``lines`` for any of ``secrets`` (see the module docstring); raises ValueError for
    no secret or one shorter than :data:`MIN_SECRET_LENGTH`."""
    if not secrets:
        raise ValueError("no secret to scan for: the scan would pass blind")
    short = [s for s in secrets if len(s) < MIN_SECRET_LENGTH]
    if short:
        raise ValueError(
            f"{len(short)} secret(s) shorter than {MIN_SECRET_LENGTH} characters: they would"
            " match innocent text"
        )
    scanned = hits = 0
    leaks: list[str] = []
    for line in lines:
        scanned += 1
        if not any(secret in line for secret in secrets):
            continue
        if known and line.startswith(known):
            hits += 1
        else:
            leaks.append(_masked(line, secrets))
    return SecretScan(scanned, hits, leaks)
