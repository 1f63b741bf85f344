"""KIP-429 rebalance-protocol selection, independent of the client version.

The protocol ids are the wire/Java ones: ``EAGER = 0``, ``COOPERATIVE = 1``. The selection
rule (Java's ``ConsumerCoordinator``): take the protocols supported by *every* configured
assignor; the highest id wins; an empty intersection is a configuration error raised when
the hooks are installed, never later during a rebalance.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from enum import IntEnum

from ..errors import ConfigurationError

__all__ = ["RebalanceProtocol", "select_protocol"]


class RebalanceProtocol(IntEnum):
    """The rebalance protocols of KIP-429, by wire id."""

    EAGER = 0
    COOPERATIVE = 1


def select_protocol(supported: Sequence[tuple[str, Iterable[int]]]) -> RebalanceProtocol:
    """Pick the protocol for assignors given as ``(name, supported protocol ids)`` pairs.

    Raises :class:`ConfigurationError` when no assignor is configured or when the assignors
    share no protocol (for example ``range`` with ``cooperative-sticky``).
    """
    if not supported:
        raise ConfigurationError("no partition assignor is configured")
    normalised = [(name, sorted({int(i) for i in ids})) for name, ids in supported]
    common: set[int] | None = None
    for _name, ids in normalised:
        common = set(ids) if common is None else common & set(ids)
    if not common:
        listing = "; ".join(
            f"{name} supports {[RebalanceProtocol(i).name for i in ids]}"
            for name, ids in normalised
        )
        raise ConfigurationError(
            "the configured assignors share no rebalance protocol "
            f"({listing}); configure assignors that all support EAGER, or all COOPERATIVE"
        )
    return RebalanceProtocol(max(common))
