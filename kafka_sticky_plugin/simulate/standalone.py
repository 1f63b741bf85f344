"""A throw-away Spark standalone cluster (one master, one worker) on 127.0.0.1.

The pip package of pyspark has no ``sbin/start-master.sh``, but it ships ``bin/spark-class``
and the master and worker classes, which is all a standalone cluster needs. Used by the test
suite to run the job on a real cluster; also handy to try ``--master spark://...`` locally.

Invariants: both processes bind to 127.0.0.1 only, on free ports; both are stopped (by their
own process ids) when the context exits, even on error.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import ConfigurationError

__all__ = ["spark_home", "standalone_cluster"]


def spark_home() -> Path:
    """The pyspark package directory (it holds ``bin/spark-class`` and ``jars/``)."""
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _wait_for(log: Path, text: str, process: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if log.exists() and text in log.read_text(errors="replace"):
            return
        if process.poll() is not None:
            break
        time.sleep(0.3)
    tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
    raise ConfigurationError(f"Spark standalone process did not log {text!r} in time:\n{tail}")


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)


@contextmanager
def standalone_cluster(
    workdir: Path, *, cores: int = 2, memory: str = "2g", timeout: float = 90.0
) -> Iterator[str]:
    """Start a master and a worker on 127.0.0.1; yield the master URL; stop both."""
    home = spark_home()
    env = dict(os.environ, SPARK_HOME=str(home), SPARK_LOCAL_IP="127.0.0.1")
    env["SPARK_MASTER_OPTS"] = "-Dspark.master.rest.enabled=false"
    env["SPARK_WORKER_DIR"] = str(workdir / "work")
    spark_class = str(home / "bin" / "spark-class")
    port = _free_port()
    url = f"spark://127.0.0.1:{port}"
    master_log, worker_log = workdir / "master.log", workdir / "worker.log"
    master_cmd = [
        spark_class,
        "org.apache.spark.deploy.master.Master",
        "--host", "127.0.0.1", "--port", str(port), "--webui-port", str(_free_port()),
    ]  # fmt: skip
    worker_cmd = [
        spark_class,
        "org.apache.spark.deploy.worker.Worker",
        "--host", "127.0.0.1", "--cores", str(cores), "--memory", memory,
        "--webui-port", str(_free_port()), "--work-dir", str(workdir / "work"), url,
    ]  # fmt: skip
    with master_log.open("wb") as mout, worker_log.open("wb") as wout:
        master = subprocess.Popen(master_cmd, env=env, stdout=mout, stderr=subprocess.STDOUT)
        worker: subprocess.Popen[bytes] | None = None
        try:
            _wait_for(master_log, "I have been elected leader", master, timeout)
            worker = subprocess.Popen(worker_cmd, env=env, stdout=wout, stderr=subprocess.STDOUT)
            _wait_for(worker_log, "Successfully registered with master", worker, timeout)
            yield url
        finally:
            if worker is not None:
                _stop(worker)
            _stop(master)
