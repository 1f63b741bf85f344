"""How a client of this project's commands and tests authenticates, said once and turned
into each client's own settings.

A :class:`ClientSecurity` names the listener's protocol (``SASL_PLAINTEXT``: SCRAM,
``SSL``: TLS with a client certificate, ``SASL_SSL``: SCRAM over TLS) and the credentials;
:func:`kafka_python_settings`, :func:`aiokafka_settings` and :func:`confluent_settings` give
the keyword arguments (or the configuration entries) of kafka-python, aiokafka and
librdkafka for it. The commands that read a user's cluster build one from their options
(:mod:`.cli_security`); a test member's
:class:`~kafka_sticky_plugin.groups.member_config.MemberConfig` carries it as a plain dict
(:meth:`ClientSecurity.as_dict`), so it crosses to a child process as JSON. It lives outside
``testing/`` because the commands use it; it imports nothing of the package.

Invariants: ``None`` (no security) gives no settings at all, so a PLAINTEXT client's
configuration is exactly what it was before; the password never appears in a ``repr``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = [
    "ClientSecurity",
    "SecurityLike",
    "aiokafka_settings",
    "confluent_settings",
    "kafka_python_settings",
]

_SASL = ("SASL_PLAINTEXT", "SASL_SSL")
_TLS = ("SSL", "SASL_SSL")


@dataclass(frozen=True)
class ClientSecurity:
    """One client's security settings (see the module docstring)."""

    #: ``SASL_PLAINTEXT``, ``SSL`` or ``SASL_SSL``.
    protocol: str
    #: The SCRAM user and password (SASL protocols).
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    #: The CA certificate that signed the broker's (TLS protocols).
    cafile: str | None = None
    #: The client certificate and its private key (``SSL``: the principal is the
    #: certificate's name).
    certfile: str | None = None
    keyfile: str | None = None
    mechanism: str = "SCRAM-SHA-512"

    def as_dict(self) -> dict[str, str]:
        """The non-empty fields, as :class:`~.member_config.MemberConfig` carries them."""
        return {key: value for key, value in asdict(self).items() if value is not None}

    @classmethod
    def of(cls, security: SecurityLike) -> ClientSecurity | None:
        """``security`` as a :class:`ClientSecurity` (a dict from :meth:`as_dict` or one)."""
        if security is None or isinstance(security, ClientSecurity):
            return security
        return cls(**dict(security))


#: What the settings functions take: a :class:`ClientSecurity`, its :meth:`~ClientSecurity.as_dict`,
#: or None (PLAINTEXT).
SecurityLike = ClientSecurity | Mapping[str, str] | None


#: Each client's names for the protocol and the SASL settings: protocol, mechanism, user
#: name, password.
_PYTHON_SASL_KEYS = (
    "security_protocol",
    "sasl_mechanism",
    "sasl_plain_username",
    "sasl_plain_password",
)
_LIBRDKAFKA_SASL_KEYS = ("security.protocol", "sasl.mechanisms", "sasl.username", "sasl.password")


def _client_settings(
    security: SecurityLike,
    keys: tuple[str, str, str, str],
    tls: Callable[[ClientSecurity], dict[str, Any]],
) -> dict[str, Any]:
    """A client's settings for ``security``: the protocol, on a SASL protocol the SCRAM
    settings (under the client's ``keys``), and on a TLS protocol the client's own TLS
    settings, ``tls(sec)``."""
    sec = ClientSecurity.of(security)
    if sec is None:
        return {}
    protocol, mechanism, username, password = keys
    settings: dict[str, Any] = {protocol: sec.protocol}
    if sec.protocol in _SASL:
        settings.update({mechanism: sec.mechanism, username: sec.username, password: sec.password})
    if sec.protocol in _TLS:
        settings.update(tls(sec))
    return settings


def _kafka_python_tls(sec: ClientSecurity) -> dict[str, Any]:
    settings: dict[str, Any] = {"ssl_cafile": sec.cafile, "ssl_check_hostname": True}
    if sec.certfile is not None:
        settings.update(ssl_certfile=sec.certfile, ssl_keyfile=sec.keyfile)
    return settings


def _aiokafka_tls(sec: ClientSecurity) -> dict[str, Any]:
    from aiokafka.helpers import create_ssl_context

    context = create_ssl_context(cafile=sec.cafile, certfile=sec.certfile, keyfile=sec.keyfile)
    return {"ssl_context": context}


def kafka_python_settings(security: SecurityLike) -> dict[str, Any]:
    """kafka-python's ``KafkaConsumer``/``KafkaProducer``/``KafkaAdminClient`` keywords."""
    return _client_settings(security, _PYTHON_SASL_KEYS, _kafka_python_tls)


def aiokafka_settings(security: SecurityLike) -> dict[str, Any]:
    """aiokafka's ``AIOKafkaConsumer`` keywords (TLS through an ``ssl.SSLContext``)."""
    return _client_settings(security, _PYTHON_SASL_KEYS, _aiokafka_tls)


def _librdkafka_tls(sec: ClientSecurity) -> dict[str, Any]:
    settings: dict[str, Any] = {}
    if sec.cafile is not None:  # else librdkafka trusts the system's CAs
        settings["ssl.ca.location"] = sec.cafile
    if sec.certfile is not None:
        settings["ssl.certificate.location"] = sec.certfile
        settings["ssl.key.location"] = sec.keyfile
    return settings


def confluent_settings(security: SecurityLike) -> dict[str, Any]:
    """librdkafka's configuration entries (confluent-kafka)."""
    return _client_settings(security, _LIBRDKAFKA_SASL_KEYS, _librdkafka_tls)
