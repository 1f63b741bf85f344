"""Which implementation of the leader's wire seam runs: the compiled twin or the reference.

The reference is :mod:`.seam` (plain Python, the specification); the twin is the compiled
module's function of the same name, returning the reference's result for input it vouches
for and ``None`` for anything else. This module alone chooses, once at import, by
:mod:`..twin_loader`'s rule for :data:`SEAM_VERSION` (:data:`IMPLEMENTATION` names the
choice; ``--version`` prints it), and is what the leader calls: each function calls the
twin first and the reference wherever the twin returns ``None`` (for one payload or its
claim: that payload; or the whole call), so error texts and offsets live in the reference
alone.

Invariant (``tests/test_twin_differential.py``): each function here returns what
:mod:`.seam`'s function of the same name returns, or raises what it raises.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol, cast

from ..errors import CodecError
from ..twin_loader import PURE_PYTHON_ENV, load
from ..twin_loader import describe as describe_twin
from . import seam as reference
from .seam import SubscriptionRead
from .sticky_user_data import UserDataClaim
from .topic_partitions import TopicRuns

__all__ = [
    "IMPLEMENTATION",
    "PURE_PYTHON_ENV",
    "SEAM_VERSION",
    "SubscriptionRead",
    "Twin",
    "describe",
    "read_subscriptions",
    "twin",
    "write_assignments",
]

#: The seam's contract version: the twin's ``SEAM_VERSION`` must equal it (bump both when a
#: seam function is added or removed or changes its arguments, results or rules).
SEAM_VERSION = 5

#: What the twin returns per payload: :class:`SubscriptionRead`'s fields, in order.
_ReadValues = tuple[
    int,
    tuple[str, ...],
    bytes | None,
    TopicRuns,
    int,
    str | None,
    bytes | None,
    UserDataClaim | None,
]


class Twin(Protocol):
    """The twin module (``twin/src/lib.rs``): the seam's functions, each returning ``None``
    where the reference must decide."""

    SEAM_VERSION: int
    __version__: str

    def read_subscriptions(
        self, payloads: Sequence[bytes], cooperative: bool
    ) -> list[_ReadValues | None] | None: ...

    def write_assignments(
        self,
        version: int,
        topics: Sequence[str],
        counts: Sequence[int],
        plans: Sequence[Sequence[int]],
    ) -> list[bytes] | None: ...


#: The twin in use, or ``None`` when the reference runs alone.
twin: Twin | None = cast("Twin | None", load("SEAM_VERSION", SEAM_VERSION))
#: ``"compiled"`` when :data:`twin` is in use, else ``"reference"``.
IMPLEMENTATION: Literal["compiled", "reference"] = "reference" if twin is None else "compiled"


def describe() -> str:
    """One line naming the implementation in use and why (for ``--version``)."""
    return describe_twin("wire seam", twin, "SEAM_VERSION", SEAM_VERSION)


def read_subscriptions(
    payloads: Sequence[bytes], cooperative: bool
) -> list[SubscriptionRead | CodecError]:
    """:func:`.seam.read_subscriptions`."""
    if twin is not None:
        got = twin.read_subscriptions(payloads, cooperative)
        if got is not None:
            out: list[SubscriptionRead | CodecError] = []
            for payload, values in zip(payloads, got, strict=True):
                read = None if values is None else SubscriptionRead(*values)
                if read is None or read.claim is None:  # the reference's to read, claim and all
                    out.extend(reference.read_subscriptions([payload], cooperative))
                else:
                    out.append(read)
            return out
    return reference.read_subscriptions(payloads, cooperative)


def write_assignments(
    version: int, topics: Sequence[str], counts: Sequence[int], plans: Sequence[Sequence[int]]
) -> list[bytes]:
    """:func:`.seam.write_assignments`."""
    if twin is not None:
        got = twin.write_assignments(version, topics, counts, plans)
        if got is not None:
            return got
    return reference.write_assignments(version, topics, counts, plans)
