"""Runnable wrapper of the main demo: ``python examples/rolling_restart_demo.py [options]``.

Same as ``python -m kafka_sticky_plugin demo`` (and ``make demo``): starts the embedded broker,
rolls a restart through a consumer group once with eager ``sticky`` and once with
``cooperative-sticky``, prints a live ownership view and a comparison table, and writes
``out/demo/ownership.png``. ``--help`` lists the options.
"""

from __future__ import annotations

import sys

from kafka_sticky_plugin.demo.cli import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
