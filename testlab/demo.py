"""``python -m testlab.demo [demo options]``: the product's demo with the checkout's brokers.

The same as ``python -m kafka_sticky_plugin demo``, except that ``--broker kafka`` starts Apache
Kafka from the jars ``make kafka-broker`` resolved (:func:`testlab.brokers.open_broker`); the
wheel's demo refuses that mode in one line. ``make demo BROKER=kafka`` runs this.
"""

from __future__ import annotations

import sys

from kafka_sticky_plugin.demo import cli
from testlab.brokers import open_broker

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """The demo's :func:`~kafka_sticky_plugin.demo.cli.main` with the lab's broker chooser."""
    return cli.main(argv, open_broker=open_broker)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
