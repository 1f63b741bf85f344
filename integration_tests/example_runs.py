"""Run a script of ``examples/`` as a user would (a subprocess on the session broker) and read
what it reports; the committed offsets are also read back independently of the script."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"

# What a broken consumer prints; none of it may appear in an example's output.
FAILURE_SIGNS = ("Traceback", "Cannot block on net.run()", "not committed:", "consumer error:")


@dataclass
class ExampleRun:
    """A finished run: exit status, output, and the parsed summary lines."""

    returncode: int
    output: str

    @property
    def consumed(self) -> int:
        found = re.search(r"^consumed (\d+) records$", self.output, re.MULTILINE)
        assert found, self.output
        return int(found.group(1))

    @property
    def committed(self) -> dict[tuple[str, int], int]:
        return {
            (topic, int(partition)): int(offset)
            for topic, partition, offset in re.findall(
                r"^committed (\S+)\[(\d+)\]=(-?\d+)$", self.output, re.MULTILINE
            )
        }

    def assert_clean(self) -> None:
        assert self.returncode == 0, self.output
        for sign in FAILURE_SIGNS:
            assert sign not in self.output, f"{sign!r} in the output:\n{self.output}"


def start_example(script: str, *args: str) -> subprocess.Popen[str]:
    """Start ``examples/<script>`` with this interpreter; output (both streams) is piped."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONUNBUFFERED="1")
    return subprocess.Popen(
        [sys.executable, str(EXAMPLES / script), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )


def finish(process: subprocess.Popen[str], timeout_s: float) -> ExampleRun:
    """Wait for the run to end (killing it after ``timeout_s``) and return what it printed."""
    try:
        out, _ = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        out, _ = process.communicate()
        raise AssertionError(f"example still running after {timeout_s}s:\n{out}") from None
    return ExampleRun(process.returncode, out)


def run_example(script: str, *args: str, timeout_s: float = 60.0) -> ExampleRun:
    return finish(start_example(script, *args), timeout_s)


def wait_for_line(process: subprocess.Popen[str], prefix: str, timeout_s: float) -> list[str]:
    """Read the output until a line starts with ``prefix``; return the lines read."""
    assert process.stdout is not None
    lines: list[str] = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        lines.append(line)
        if line.startswith(prefix):
            return lines
    raise AssertionError(f"no line starting with {prefix!r}:\n{''.join(lines)}")


def committed_offsets(bootstrap: str, group: str, topic: str) -> dict[tuple[str, int], int]:
    """The group's committed offsets, read with a fresh kafka-python consumer (not the script)."""
    from kafka import KafkaConsumer
    from kafka.structs import TopicPartition

    reader = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    try:
        partitions = reader.partitions_for_topic(topic) or set()
        found = {p: reader.committed(TopicPartition(topic, p)) for p in sorted(partitions)}
    finally:
        reader.close()
    return {(topic, p): offset for p, offset in found.items() if offset is not None}
