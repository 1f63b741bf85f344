"""Children started with :func:`~kafka_sticky_plugin.lifetime.start_tied` die with
their parent, whichever thread started them (real processes, no broker)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

from kafka_sticky_plugin.lifetime import process_alive, start_tied

SLEEPER = [sys.executable, "-c", "import time; time.sleep(60)"]


def _gone_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while process_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not process_alive(pid)


def test_a_child_started_from_a_short_lived_thread_outlives_the_thread() -> None:
    """The kernel's parent-death signal follows the forking *thread*: the child must not
    die when the thread that asked for it ends."""
    started: list[subprocess.Popen[bytes]] = []
    thread = threading.Thread(target=lambda: started.append(start_tied(SLEEPER)))
    thread.start()
    thread.join()
    (child,) = started
    try:
        time.sleep(0.5)
        assert child.poll() is None, "the child died with the thread that started it"
    finally:
        child.kill()
        child.wait(10)


def test_a_child_dies_when_its_parent_is_killed() -> None:
    """SIGKILL of the parent (no cleanup can run) still ends the child."""
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\n"
            "from kafka_sticky_plugin.lifetime import start_tied\n"
            f"child = start_tied({SLEEPER!r})\n"
            "print(child.pid, flush=True)\n"
            "time.sleep(60)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    parent.stdout.close()
    try:
        assert process_alive(child)
        parent.kill()
        parent.wait(10)
        assert _gone_within(child, 5), f"child {child} outlived its SIGKILLed parent"
    finally:
        if process_alive(child):
            os.kill(child, signal.SIGKILL)
