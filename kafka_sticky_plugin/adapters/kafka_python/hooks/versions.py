"""Which Kafka client is installed, and which hook family drives its coordinator.

Supported clients (the version matrix in ``requirements/matrix/`` tests the newest release
of each row)::

    distribution      versions   family  coordinator shape
    kafka-python      2.0.2      v2      sync, thread heartbeat, subscription v0 only
    kafka-python      2.2.x      v2      sync, ``join_group(timeout_ms)``, subscription v0 only
    kafka-python      2.3.x      v2      sync, ``GroupMember`` leader input, subscription v0 only
    kafka-python-ng   2.2.x      v2      sync (a fork of 2.0.2), subscription v0 only
    kafka-python      3.0.x      v3      asyncio-style ``_net`` loop, KIP-429 built in
                      (3.0.9+: 3.0.0-3.0.8 are refused, see :data:`_TOO_OLD`)

Invariant: :func:`detect_client` either returns one of the rows above or raises
:class:`~kafka_sticky_plugin.errors.UnsupportedClientError` naming every row; it never guesses.
"""

from __future__ import annotations

import importlib.metadata
from dataclasses import dataclass
from typing import Literal

from ....errors import UnsupportedClientError

__all__ = ["SUPPORTED_CLIENTS", "ClientVersion", "detect_client", "supported_clients_text"]

Family = Literal["v2", "v3"]


@dataclass(frozen=True)
class _Row:
    distribution: str
    label: str
    family: Family

    def matches(self, distribution: str, release: tuple[int, ...]) -> bool:
        if distribution != self.distribution:
            return False
        wanted = tuple(int(p) for p in self.label.replace(".x", "").split("."))
        return release[: len(wanted)] == wanted

    @property
    def text(self) -> str:
        minimum = _TOO_OLD.get((self.distribution, self.label))
        since = f" ({'.'.join(map(str, minimum[0]))}+)" if minimum else ""
        return f"{self.distribution} {self.label}{since}"


#: (distribution, row label) -> the first release of that row the hooks accept, and why the
#: earlier ones are refused (one line, ends with what to install).
_TOO_OLD: dict[tuple[str, str], tuple[tuple[int, ...], str]] = {
    ("kafka-python", "3.0.x"): (
        (3, 0, 9),
        "can leave a retained partition unfetched forever after an eager rebalance with a"
        " listener (dpkp/kafka-python#3131, fixed in 3.0.9): upgrade with"
        ' pip install "kafka-python>=3.0.9,<3.1"',
    ),
}


#: The supported rows, in the order the error message lists them.
SUPPORTED_CLIENTS: tuple[_Row, ...] = (
    _Row("kafka-python", "2.0.2", "v2"),
    _Row("kafka-python", "2.2.x", "v2"),
    _Row("kafka-python", "2.3.x", "v2"),
    _Row("kafka-python", "3.0.x", "v3"),
    _Row("kafka-python-ng", "2.2.x", "v2"),
)


@dataclass(frozen=True)
class ClientVersion:
    """The installed client: distribution name, version string and hook family."""

    distribution: str
    version: str
    family: Family


def supported_clients_text() -> str:
    """The supported rows as one human-readable line, for error messages and docs."""
    return ", ".join(row.text for row in SUPPORTED_CLIENTS)


def _release(version: str) -> tuple[int, ...]:
    parts: list[int] = []
    for piece in version.split("."):
        digits = ""
        for char in piece:
            if not char.isdigit():
                break
            digits += char
        if not digits:
            break
        parts.append(int(digits))
        if len(digits) != len(piece):
            break
    return tuple(parts)


def _installed_distribution() -> str:
    """Which distribution provides the ``kafka`` package (both install the same name)."""
    for name in ("kafka-python-ng", "kafka-python"):
        try:
            importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        return name
    return "kafka-python"


def classify(distribution: str, version: str) -> ClientVersion:
    """Map a distribution and version to its hook family, or raise ``UnsupportedClientError``."""
    release = _release(version)
    for row in SUPPORTED_CLIENTS:
        if row.matches(distribution, release):
            minimum, why = _TOO_OLD.get((row.distribution, row.label), ((), ""))
            if release < minimum:
                raise UnsupportedClientError(f"{distribution} {version} {why}")
            return ClientVersion(distribution=distribution, version=version, family=row.family)
    raise UnsupportedClientError(
        f"{distribution} {version} is not supported by kafka-sticky-plugin's coordinator hooks; "
        f"supported clients: {supported_clients_text()}"
    )


def detect_client() -> ClientVersion:
    """Classify the importable ``kafka`` package (raises ``UnsupportedClientError``)."""
    try:
        import kafka
    except ImportError as exc:
        raise UnsupportedClientError(
            f"no Kafka client is importable ({exc}): pip install "
            f'"kafka-sticky-plugin[kafka-python]"; supported clients: {supported_clients_text()}'
        ) from exc
    version = str(getattr(kafka, "__version__", "unknown"))
    return classify(_installed_distribution(), version)
