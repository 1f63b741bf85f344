"""A real Prometheus server for one test: Debian's ``prometheus`` (installed by
``make prometheus-server``), started on a loopback port with a scrape config written here,
stopped at exit; values are read back through its HTTP query API."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from kafka_sticky_plugin.lifetime import start_tied


def prometheus_binary() -> str:
    """The server's path; skips with one line where it is not installed (fails under CI)."""
    found = shutil.which("prometheus")
    if found is None:
        message = "no prometheus server on PATH (make prometheus-server installs Debian's)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true: {message}")
        pytest.skip(message)
    return found


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def prometheus_scraping(target_port: int, workdir: Path) -> Iterator[str]:
    """A Prometheus scraping ``127.0.0.1:target_port`` every second; yields its base URL."""
    binary = prometheus_binary()
    port = free_port()
    config = workdir / "prometheus.yml"
    config.write_text(
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
        "scrape_configs:\n  - job_name: consumers\n    static_configs:\n"
        f"      - targets: ['127.0.0.1:{target_port}']\n"
    )
    log = (workdir / "prometheus.log").open("wb")
    process = start_tied(
        [
            binary,
            f"--config.file={config}",
            f"--storage.tsdb.path={workdir / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"{base}/-/ready", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(
                    "prometheus did not become ready:\n"
                    + (workdir / "prometheus.log").read_text()[-3000:]
                )
            time.sleep(0.2)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)
        log.close()


def query(base: str, promql: str) -> dict[str, float]:
    """``{client_id: value}`` of an instant query through the HTTP API."""
    url = f"{base}/api/v1/query?" + urllib.parse.urlencode({"query": promql})
    with urllib.request.urlopen(url, timeout=5) as answer:
        body = json.load(answer)
    if body.get("status") != "success":
        raise AssertionError(f"query {promql!r} failed: {body}")
    return {
        str(item["metric"].get("client_id", "")): float(item["value"][1])
        for item in body["data"]["result"]
    }
