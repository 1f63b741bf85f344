"""Run a command and print its own peak RSS as a last JSON line: ``{"peak_kb": N}``.

``wait4`` on a child forked straight from the benchmark's orchestrator would report at least
the orchestrator's own peak (Linux keeps a process's ``maxrss`` across ``exec``, and the
child starts as a copy of its parent); forked from this small launcher, the figure is the
peer's own (plus this launcher's few MB at most). Exits with the command's exit code.
"""

from __future__ import annotations

import json
import os
import sys


def main(argv: list[str]) -> int:
    sys.stdout.flush()
    pid = os.fork()
    if pid == 0:
        try:
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)
    _, status, usage = os.wait4(pid, 0)
    print(json.dumps({"peak_kb": usage.ru_maxrss}), flush=True)
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
