"""librdkafka's mock cluster, driven from Python: protocol errors injected into the requests
of confluent-kafka members (issue 29; librdkafka's own tests do this in 0113 and friends).

confluent-kafka 2.x exposes the mock cluster only as the ``test.mock.num.brokers`` property,
which gives one client a private cluster and no way to inject anything. librdkafka's mock API
(``rd_kafka_mock_*`` in ``rdkafka_mock.h``) is exported by the librdkafka that confluent-kafka
ships, so :class:`MockCluster` calls it through :mod:`ctypes`: it creates its own librdkafka
handle, a mock cluster on it (brokers listening on 127.0.0.1), and offers what the fault
scenarios need: a topic, the bootstrap string any client can connect to, errors pushed onto
the next requests of one API (``push_errors``), the group coordinator moved
(``set_coordinator``) and a broker taken down and up.

Invariants: every listener is on loopback (librdkafka's mock binds 127.0.0.1); the cluster
and its handle are destroyed by :meth:`MockCluster.close` (and the ``with`` block); a
missing library or symbol is a :class:`MockUnavailable` naming what was looked for.
"""

from __future__ import annotations

import ctypes
import glob
import os
from collections.abc import Iterable

__all__ = ["API", "ERROR", "MockCluster", "MockUnavailable", "find_librdkafka"]

#: Kafka API keys of the group requests the scenarios fault.
API = {
    "OffsetCommit": 8,
    "FindCoordinator": 10,
    "JoinGroup": 11,
    "Heartbeat": 12,
    "LeaveGroup": 13,
    "SyncGroup": 14,
}

#: Kafka error codes the scenarios inject.
ERROR = {
    "COORDINATOR_NOT_AVAILABLE": 15,
    "NOT_COORDINATOR": 16,
    "ILLEGAL_GENERATION": 22,
    "UNKNOWN_MEMBER_ID": 25,
    "REBALANCE_IN_PROGRESS": 27,
    "FENCED_INSTANCE_ID": 82,
}


class MockUnavailable(RuntimeError):
    """librdkafka's mock API cannot be reached from this interpreter."""


def find_librdkafka() -> str:
    """The path of the librdkafka that confluent-kafka loads (its wheel's bundled copy), or
    the system one; :class:`MockUnavailable` if neither is found."""
    try:
        import confluent_kafka
    except ImportError as exc:
        raise MockUnavailable("confluent-kafka is not installed") from exc
    package = os.path.dirname(os.path.abspath(confluent_kafka.__file__))
    bundled = sorted(glob.glob(os.path.join(package + ".libs", "librdkafka*.so*")))
    if bundled:
        return bundled[0]
    import ctypes.util

    found = ctypes.util.find_library("rdkafka")
    if found is None:
        raise MockUnavailable(f"no librdkafka next to {package} nor on the library path")
    return found


def _load(path: str) -> ctypes.CDLL:
    lib = ctypes.CDLL(path)
    signatures: dict[str, tuple[object, list[object]]] = {
        "rd_kafka_conf_new": (ctypes.c_void_p, []),
        "rd_kafka_conf_set": (
            ctypes.c_int,
            [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t],
        ),
        "rd_kafka_new": (
            ctypes.c_void_p,
            [ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t],
        ),
        "rd_kafka_destroy": (None, [ctypes.c_void_p]),
        "rd_kafka_mock_cluster_new": (ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_int]),
        "rd_kafka_mock_cluster_destroy": (None, [ctypes.c_void_p]),
        "rd_kafka_mock_cluster_bootstraps": (ctypes.c_char_p, [ctypes.c_void_p]),
        "rd_kafka_mock_topic_create": (
            ctypes.c_int,
            [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int],
        ),
        "rd_kafka_mock_push_request_errors_array": (
            None,
            [ctypes.c_void_p, ctypes.c_int16, ctypes.c_size_t, ctypes.POINTER(ctypes.c_int)],
        ),
        "rd_kafka_mock_clear_request_errors": (None, [ctypes.c_void_p, ctypes.c_int16]),
        "rd_kafka_mock_coordinator_set": (
            ctypes.c_int,
            [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int32],
        ),
        "rd_kafka_mock_broker_set_down": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int32]),
        "rd_kafka_mock_broker_set_up": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int32]),
        "rd_kafka_mock_group_initial_rebalance_delay_ms": (
            None,
            [ctypes.c_void_p, ctypes.c_int32],
        ),
    }
    for name, (restype, argtypes) in signatures.items():
        try:
            function = getattr(lib, name)
        except AttributeError as exc:
            raise MockUnavailable(f"{path} has no {name}") from exc
        function.restype = restype
        function.argtypes = argtypes
    return lib


class MockCluster:
    """A librdkafka mock cluster of ``brokers`` brokers (see the module docstring)."""

    def __init__(self, brokers: int = 3, initial_rebalance_delay_ms: int = 0) -> None:
        self._lib = _load(find_librdkafka())
        errstr = ctypes.create_string_buffer(512)
        conf = self._lib.rd_kafka_conf_new()
        # A quiet handle: it only hosts the cluster (no bootstrap servers, nothing logged).
        self._lib.rd_kafka_conf_set(conf, b"log_level", b"0", errstr, len(errstr))
        self._rk = self._lib.rd_kafka_new(0, conf, errstr, len(errstr))  # RD_KAFKA_PRODUCER
        if not self._rk:
            raise MockUnavailable(f"rd_kafka_new failed: {errstr.value.decode()}")
        self._cluster = self._lib.rd_kafka_mock_cluster_new(self._rk, brokers)
        if not self._cluster:
            self._lib.rd_kafka_destroy(self._rk)
            raise MockUnavailable("rd_kafka_mock_cluster_new failed")
        self._lib.rd_kafka_mock_group_initial_rebalance_delay_ms(
            self._cluster, initial_rebalance_delay_ms
        )
        self.bootstrap: str = self._lib.rd_kafka_mock_cluster_bootstraps(self._cluster).decode()

    def create_topic(self, topic: str, partitions: int, replication: int = 1) -> None:
        err = self._lib.rd_kafka_mock_topic_create(
            self._cluster, topic.encode(), partitions, replication
        )
        if err:
            raise RuntimeError(f"mock topic {topic}: error {err}")

    def push_errors(self, api: str, errors: Iterable[str]) -> None:
        """The next requests of ``api`` (a key of :data:`API`), from any client, are answered
        with ``errors`` in order (names from :data:`ERROR`), then served normally."""
        codes = [ERROR[name] for name in errors]
        array = (ctypes.c_int * len(codes))(*codes)
        self._lib.rd_kafka_mock_push_request_errors_array(
            self._cluster, API[api], len(codes), array
        )

    def clear_errors(self, api: str) -> None:
        self._lib.rd_kafka_mock_clear_request_errors(self._cluster, API[api])

    def set_coordinator(self, group_id: str, broker_id: int) -> None:
        """Make broker ``broker_id`` (1-based) the coordinator of ``group_id``."""
        err = self._lib.rd_kafka_mock_coordinator_set(
            self._cluster, b"group", group_id.encode(), broker_id
        )
        if err:
            raise RuntimeError(f"coordinator_set: error {err}")

    def broker_down(self, broker_id: int) -> None:
        """Close the broker's connections and refuse new ones until :meth:`broker_up`."""
        self._lib.rd_kafka_mock_broker_set_down(self._cluster, broker_id)

    def broker_up(self, broker_id: int) -> None:
        self._lib.rd_kafka_mock_broker_set_up(self._cluster, broker_id)

    def close(self) -> None:
        if self._cluster:
            self._lib.rd_kafka_mock_cluster_destroy(self._cluster)
            self._cluster = None
        if self._rk:
            self._lib.rd_kafka_destroy(self._rk)
            self._rk = None

    def __enter__(self) -> MockCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
