"""A consumer's bootstrap addresses that nobody answers: said once, early, by this package.

Each client meets an unreachable bootstrap its own way: kafka-python 3.0 waits in its
constructor for ``bootstrap_timeout_ms`` (30 s) and then raises, kafka-python 2.x raises
``NoBrokersAvailable`` after ``api_version_auto_timeout_ms`` (2 s) or, given an
``api_version``, retries in ``poll()`` without end, librdkafka retries without end with an
error line per attempt, aiokafka's ``start()`` raises at once. Whatever the client does, a
hooked consumer (and every member of the demo and the commands) also logs one WARNING line of
ours, as soon as it first tries to reach the cluster: which addresses did not answer and why.

What it never does: stop the consumer or change the client's own retries. A consumer may
legitimately start before its broker; if a broker comes up while the client is still trying,
the consumer joins as usual (the line was a warning, not an error). A hooked consumer that
reaches its cluster within :data:`GRACE_S` of its first poll (its client found the group's
coordinator, or joined) is never probed: only a client still without its cluster then costs
one TCP connection per address, opened and closed (on a TLS listener the broker may log that
as a failed handshake, once per such consumer).

:func:`bootstrap_endpoints` reads the clients' ``bootstrap_servers`` / ``bootstrap.servers``
forms (a comma-separated string or a list; ``HOST[:PORT]``, ``[IPv6]:PORT``, an optional
``SCHEME://``; default port 9092) and skips what it cannot read (the client will say that).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable

from .broker_kind import refusals

__all__ = [
    "BootstrapCheck",
    "bootstrap_endpoints",
    "unreachable_line",
]

log = logging.getLogger("kafka_sticky_plugin.bootstrap")

#: How long one address may take to accept a TCP connection before it counts as not answering.
PROBE_TIMEOUT_S = 2.0
#: How long a hooked consumer has, from its first poll, to reach its cluster before we probe.
GRACE_S = 1.0
_DEFAULT_PORT = 9092


def _endpoint(text: str) -> tuple[str, int] | None:
    text = text.strip().rsplit("://", 1)[-1]
    if not text:
        return None
    if text.startswith("["):  # [IPv6]:PORT
        host, _, rest = text[1:].partition("]")
        port_text = rest[1:] if rest.startswith(":") else ""
    elif text.count(":") == 1:
        host, port_text = text.split(":")
    elif ":" in text:  # a bare IPv6 address
        host, port_text = text, ""
    else:
        host, port_text = text, ""
    try:
        port = int(port_text) if port_text else _DEFAULT_PORT
    except ValueError:
        return None
    return (host, port) if host and 0 < port < 65536 else None


def bootstrap_endpoints(servers: str | Iterable[str] | None) -> list[tuple[str, int]]:
    """``(host, port)`` of every address in ``servers`` that can be read (module docstring)."""
    if servers is None:
        return []
    items = servers.split(",") if isinstance(servers, str) else list(servers)
    found = [_endpoint(str(item)) for item in items]
    return [endpoint for endpoint in found if endpoint is not None]


def _shown(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def unreachable_line(
    subject: str, servers: str | Iterable[str] | None, timeout_s: float = PROBE_TIMEOUT_S
) -> str | None:
    """The WARNING line for ``subject`` (``group g``) when no address of ``servers`` accepts
    a TCP connection, else None (one answers, or none could be read)."""
    endpoints = bootstrap_endpoints(servers)
    failed = refusals(endpoints, timeout_s) if endpoints else None
    if not failed:
        return None
    why = ", ".join(f"{_shown(host, port)} ({reason})" for host, port, reason in failed)
    return (
        f"{subject}: no bootstrap address answers: {why}; check the address and that the"
        " broker runs. Nothing is stopped here: the client retries or gives up by its own"
        " rules (a broker that answers meanwhile is used)"
    )


class BootstrapCheck:
    """One consumer's check, run at most once (:meth:`start` may be called at every poll).

    Invariant: at most one WARNING line per instance; the check never raises and never
    blocks its caller (it runs on a daemon thread that ends after the probe, at most
    ``PROBE_TIMEOUT_S`` per address).
    """

    def __init__(
        self,
        subject: str,
        servers: str | Iterable[str] | None,
        reached: Callable[[], bool] | None = None,
    ) -> None:
        self.subject = subject
        #: True once the client reached its cluster (read by :meth:`start`'s thread after
        #: :data:`GRACE_S`, so it must not wait on the client; an exception counts as not
        #: reached)
        self.reached = reached
        self.servers = servers if isinstance(servers, str) or servers is None else list(servers)
        self._started = False
        self._scheduled = False
        #: True once the check probed or found the client had reached its cluster
        self.decided = False
        self._lock = threading.Lock()
        #: the line logged, if any (read by tests)
        self.said: str | None = None

    def run(self) -> str | None:
        """Probe now, in the caller's thread; log and return the line if nobody answers."""
        with self._lock:
            if self._started:
                return None
            self._started = True
        try:
            line = unreachable_line(self.subject, self.servers)
        except Exception:  # a probe of ours must never hurt the consumer
            log.debug("%s: bootstrap check failed", self.subject, exc_info=True)
            return None
        if line is not None:
            self.said = line
            log.warning("%s", line)
        return line

    def start(self) -> None:
        """The first time only: on a daemon thread, wait :data:`GRACE_S`, then probe unless
        the client has reached its cluster meanwhile (``reached``)."""
        with self._lock:
            if self._scheduled:
                return
            self._scheduled = True
        threading.Thread(
            target=self._after_grace, name="kafka_sticky_plugin-bootstrap-check", daemon=True
        ).start()

    def _after_grace(self) -> None:
        if self.reached is not None:
            time.sleep(GRACE_S)
            try:
                if self.reached():
                    self.decided = True
                    return
            except Exception:  # a client's state we cannot read: probe
                log.debug("%s: reading the client's state failed", self.subject, exc_info=True)
        self.run()
        self.decided = True
