"""The public surface: curated, sorted ``__all__`` lists, and the pure layers import no client."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

PUBLIC_MODULES = [
    "kafka_sticky_plugin",
    "kafka_sticky_plugin.core",
    "kafka_sticky_plugin.codec",
    "kafka_sticky_plugin.errors",
    "kafka_sticky_plugin.invariants",
    "kafka_sticky_plugin.hooks",
    "kafka_sticky_plugin.kafka_python",
    "kafka_sticky_plugin.confluent",
    "kafka_sticky_plugin.aiokafka",
    "kafka_sticky_plugin.extras",
    "kafka_sticky_plugin.listener",
]


def _isort_key(name: str) -> tuple[int, str]:
    """The order ruff's RUF022 keeps: CONSTANTS, then Classes, then functions."""
    if name.isupper():
        return (0, name)
    return (1 if name[:1].isupper() else 2, name)


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_all_is_sorted_and_every_name_resolves(name: str) -> None:
    """Each public module's ``__all__`` is sorted (isort style), unique, and every name exists."""
    module = importlib.import_module(name)
    exported = list(module.__all__)
    assert exported == sorted(exported, key=_isort_key), f"{name}.__all__ is not sorted"
    assert len(set(exported)) == len(exported)
    for attr in exported:
        assert getattr(module, attr) is not None, f"{name}.{attr}"


def test_engine_api_is_the_fixed_one() -> None:
    """The engine exports exactly the API other code relies on."""
    core = importlib.import_module("kafka_sticky_plugin.core")
    assert core.__all__ == ["MemberSpec", "cooperative_assign", "sticky_assign"]


@pytest.mark.parametrize(
    "module",
    [
        "kafka_sticky_plugin.core",
        "kafka_sticky_plugin.codec",
        "kafka_sticky_plugin.invariants",
        "kafka_sticky_plugin.listener",
    ],
)
def test_pure_layers_import_no_kafka_client(module: str) -> None:
    """Importing the engine, codecs or invariants loads no Kafka client (kafka-python,
    confluent-kafka, aiokafka) and no Spark."""
    code = (
        f"import sys, {module}; "
        "clients = ('kafka', 'confluent_kafka', 'aiokafka', 'pyspark'); "
        "bad = [m for m in clients if m in sys.modules]; "
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
