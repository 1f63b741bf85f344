"""A secured Apache Kafka node for tests: SCRAM, TLS and SCRAM over TLS listeners, KRaft's
``StandardAuthorizer``, and helpers to create users and grant or revoke ACLs.

``with secured_kafka_broker(users=["alice", "bob"]) as kafka:`` runs one KRaft node (broker
and controller, :func:`~.kafka_broker.kafka_broker`) on 127.0.0.1 with these listeners:

======================  ==============  ==============================================
listener (transport)    protocol        who connects
======================  ==============  ==============================================
``SCRAM`` (``scram``)   SASL_PLAINTEXT  SCRAM-SHA-512 users; also the inter-broker
                                        listener (user ``broker``)
``TLS`` (``tls``)       SSL             client certificate required (principal: its CN)
``SCRAM_TLS``           SASL_SSL        SCRAM-SHA-512 users over TLS (no client
(``scram_tls``)                         certificate asked)
``CONTROLLER``          SSL             the node itself (certificate ``CN=broker``)
``PLAINTEXT``           PLAINTEXT       the launcher's readiness probe: ``User:ANONYMOUS``,
                                        which no ACL names, so it can read nothing
======================  ==============  ==============================================

Every user (``admin``, ``broker`` and each of ``users``) has a SCRAM-SHA-512 credential made
by the storage tool at format time (``--add-scram``) and a client certificate ``CN=<name>``
from the test's own CA (:mod:`.kafka_certificates`); ``ssl.principal.mapping.rules`` maps a
certificate to ``User:<name>``, so one ACL covers a user on every transport.
``super.users`` is ``User:broker;User:admin``; ``allow.everyone.if.no.acl.found=false``, so
any other user can do only what an ACL grants (:meth:`SecuredKafka.grant`).

Invariants: every listener is on 127.0.0.1; passwords are random per run and never appear in
a ``repr`` or a log line of this package (they are in the node's ``server.properties`` and
key files, which Kafka reads; Kafka logs password settings as ``[hidden]``);
:meth:`SecuredKafka.secrets` lists every password and private-key line for a log scan; the
node and its files live and die as :func:`~.kafka_broker.kafka_broker` says (the key
folder is removed at exit).
"""

from __future__ import annotations

import contextlib
import secrets
import shutil
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafka_sticky_plugin.brokers.embedded import (
    LOOPBACK,
    BrokerStartError,
    RunningBroker,
    free_loopback_port,
)
from kafka_sticky_plugin.client_security import ClientSecurity
from kafka_sticky_plugin.groups.admin import admin_client
from testlab.kafka_broker import kafka_broker
from testlab.kafka_certificates import BROKER_NAME, Certificates, make_certificates

__all__ = [
    "ADMIN_USER",
    "TRANSPORTS",
    "SecuredKafka",
    "secured_kafka_broker",
]

#: The test's super user (creates topics, users and ACLs).
ADMIN_USER = "admin"
#: The transports a client can use, each its own listener: SCRAM, TLS (client certificate),
#: SCRAM over TLS.
TRANSPORTS = ("scram", "tls", "scram_tls")
_LISTENERS = {"scram": "SCRAM", "tls": "TLS", "scram_tls": "SCRAM_TLS"}
_PROTOCOLS = {"scram": "SASL_PLAINTEXT", "tls": "SSL", "scram_tls": "SASL_SSL"}
_MECHANISM = "SCRAM-SHA-512"
_SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"


@dataclass(frozen=True)
class SecuredKafka:
    """A running secured node: where each transport listens, and the test's credentials."""

    #: The node as :func:`~.kafka_broker.kafka_broker` gives it (``bootstrap`` is the
    #: PLAINTEXT probe listener, where nothing is authorized).
    broker: RunningBroker
    #: Transport (:data:`TRANSPORTS`) -> its port on 127.0.0.1.
    ports: dict[str, int]
    certificates: Certificates
    passwords: dict[str, str] = field(repr=False)

    @property
    def log_path(self) -> Path | None:
        """The node's log (see :class:`~kafka_sticky_plugin.brokers.embedded.RunningBroker`)."""
        return self.broker.log_path

    def bootstrap(self, transport: str = "scram") -> str:
        """``127.0.0.1:<port>`` of ``transport``'s listener."""
        return f"{LOOPBACK}:{self.ports[transport]}"

    def client(self, user: str, transport: str = "scram") -> ClientSecurity:
        """How ``user`` connects over ``transport`` (SCRAM password and/or certificate)."""
        protocol = _PROTOCOLS[transport]
        sasl = protocol.startswith("SASL")
        tls = protocol.endswith("SSL")
        return ClientSecurity(
            protocol=protocol,
            username=user if sasl else None,
            password=self.passwords[user] if sasl else None,
            cafile=str(self.certificates.ca) if tls else None,
            certfile=str(self.certificates.cert(user)) if protocol == "SSL" else None,
            keyfile=str(self.certificates.key(user)) if protocol == "SSL" else None,
            mechanism=_MECHANISM,
        )

    def admin(self, transport: str = "scram") -> ClientSecurity:
        """The super user's :meth:`client` settings."""
        return self.client(ADMIN_USER, transport)

    def secrets(self) -> list[str]:
        """Every password and private-key PEM line of this run: what no log may contain."""
        return [*self.passwords.values(), *self.certificates.key_lines()]

    @contextlib.contextmanager
    def admin_client(self, transport: str = "scram") -> Iterator[Any]:
        """kafka-python's ``KafkaAdminClient`` as the super user, closed after the block."""
        with admin_client(self.bootstrap(transport), security=self.admin(transport)) as admin:
            yield admin

    def add_user(self, name: str, password: str | None = None) -> str:
        """Create (or change) the SCRAM-SHA-512 user ``name`` through the admin API
        (AlterUserScramCredentials) and return its password (random when not given). A user
        made here has no certificate: it connects over ``scram`` and ``scram_tls``."""
        from kafka.admin import UserScramCredentialUpsertion

        secret = password if password is not None else secrets.token_hex(16)
        with self.admin_client() as admin:
            result = admin.alter_user_scram_credentials(
                [UserScramCredentialUpsertion(name, _MECHANISM, secret)]
            )
        if result.get(name) is not None:
            raise RuntimeError(f"could not create SCRAM user {name!r}: {result[name]}")
        self.passwords[name] = secret
        return secret

    def grant(
        self,
        user: str,
        resource: str,
        name: str,
        operations: Iterable[str] = ("READ", "DESCRIBE"),
        *,
        prefixed: bool = False,
    ) -> None:
        """Allow ``User:<user>`` each of ``operations`` (``READ``, ``DESCRIBE``, ``WRITE``...)
        on the ``resource`` (``topic``, ``group``, ``cluster``, ``transactional_id``) named
        ``name`` (a prefix when ``prefixed``); returns once the node enforces them."""
        acls = _acls(user, resource, name, operations, prefixed)
        with self.admin_client() as admin:
            result = admin.create_acls(acls)
            if result["failed"]:
                raise RuntimeError(f"could not create ACLs for {user!r}: {result['failed']}")
            _wait_acls(admin, acls, present=True)

    def revoke(
        self,
        user: str,
        resource: str,
        name: str,
        operations: Iterable[str] = ("READ", "DESCRIBE"),
        *,
        prefixed: bool = False,
    ) -> None:
        """Remove what :meth:`grant` with the same arguments added; returns once the node no
        longer lists them."""
        acls = _acls(user, resource, name, operations, prefixed)
        with self.admin_client() as admin:
            for _, _, error in admin.delete_acls(acls):
                if error.errno != 0:
                    raise RuntimeError(f"could not delete ACLs for {user!r}: {error}")
            _wait_acls(admin, acls, present=False)


def _acls(
    user: str, resource: str, name: str, operations: Iterable[str], prefixed: bool
) -> list[Any]:
    from kafka.admin import (
        ACL,
        ACLOperation,
        ACLPermissionType,
        ACLResourcePatternType,
        ResourcePattern,
        ResourceType,
    )

    pattern = ResourcePattern(
        ResourceType[resource.upper()],
        name,
        ACLResourcePatternType.PREFIXED if prefixed else ACLResourcePatternType.LITERAL,
    )
    return [
        ACL(f"User:{user}", "*", ACLOperation[op.upper()], ACLPermissionType.ALLOW, pattern)
        for op in operations
    ]


def _wait_acls(admin: Any, acls: Sequence[Any], *, present: bool, timeout_s: float = 15.0) -> None:
    deadline = time.monotonic() + timeout_s
    for acl in acls:
        while True:
            found, _ = admin.describe_acls(acl)
            if bool(found) == present:
                break
            if time.monotonic() > deadline:
                state = "listed" if present else "gone"
                raise TimeoutError(f"ACL {acl} not {state} after {timeout_s:.0f} s")
            time.sleep(0.05)


def _settings(passwords: Mapping[str, str], certificates: Certificates) -> dict[str, str]:
    broker_login = (
        f'{_SCRAM_MODULE} required username="{BROKER_NAME}" password="{passwords[BROKER_NAME]}";'
    )
    return {
        "listener.security.protocol.map": (
            "PLAINTEXT:PLAINTEXT,CONTROLLER:SSL,SCRAM:SASL_PLAINTEXT,TLS:SSL,SCRAM_TLS:SASL_SSL"
        ),
        "inter.broker.listener.name": "SCRAM",
        "sasl.enabled.mechanisms": _MECHANISM,
        "sasl.mechanism.inter.broker.protocol": _MECHANISM,
        "listener.name.scram.scram-sha-512.sasl.jaas.config": broker_login,
        "listener.name.scram_tls.scram-sha-512.sasl.jaas.config": broker_login,
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": str(certificates.broker_keystore),
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(certificates.ca),
        "listener.name.tls.ssl.client.auth": "required",
        "listener.name.controller.ssl.client.auth": "required",
        "ssl.principal.mapping.rules": "RULE:^CN=([^,]+)$/$1/,DEFAULT",
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users": f"User:{BROKER_NAME};User:{ADMIN_USER}",
        "allow.everyone.if.no.acl.found": "false",
    }


@contextlib.contextmanager
def secured_kafka_broker(
    log_dir: Path | None = None,
    *,
    users: Sequence[str] = ("alice", "bob"),
    settings: Mapping[str, str] | None = None,
    startup_timeout_s: float = 120.0,
) -> Iterator[SecuredKafka]:
    """Run a secured node for the duration of the block (see the module docstring);
    ``settings`` are more ``server.properties`` entries, applied last."""
    names = [BROKER_NAME, ADMIN_USER, *(u for u in users if u not in (BROKER_NAME, ADMIN_USER))]
    keys = Path(tempfile.mkdtemp(prefix="kafka-keys-"))
    try:
        certificates = make_certificates(keys, names)
        passwords = {name: secrets.token_hex(16) for name in names}
        scram = [
            arg
            for name in names
            for arg in ("--add-scram", f"{_MECHANISM}=[name={name},password={passwords[name]}]")
        ]
        config = {**_settings(passwords, certificates), **(settings or {})}
        for attempt in range(3):  # new ports when a start loses a port race
            ports = {transport: free_loopback_port() for transport in TRANSPORTS}
            listeners = {_LISTENERS[t]: port for t, port in ports.items()}
            started = False
            try:
                with kafka_broker(
                    log_dir,
                    settings=config,
                    extra_listeners=listeners,
                    format_args=scram,
                    startup_timeout_s=startup_timeout_s,
                ) as broker:
                    started = True
                    yield SecuredKafka(broker, ports, certificates, passwords)
                return
            except BrokerStartError as exc:
                if started or attempt == 2 or "port it was given is taken" not in str(exc):
                    raise
    finally:
        shutil.rmtree(keys, ignore_errors=True)
